"""The bounded output of a bar command: its first and last bytes, and how many were cut,
so a command printing gigabytes costs a few KiB of memory."""

from __future__ import annotations

from typing import Final

#: Bytes of a bar command's output kept (half from its start, half from its end).
DEFAULT_MAX_OUTPUT: Final = 64 * 1024


class BoundedOutput:
    """Keeps the first and last ``limit // 2`` bytes of a stream, counts the rest."""

    def __init__(self, limit: int = DEFAULT_MAX_OUTPUT) -> None:
        self.half = max(1, limit // 2)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        """Add a chunk."""
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.half:
                del self.tail[: len(self.tail) - self.half]

    @property
    def truncated(self) -> bool:
        """Whether bytes were dropped from the middle."""
        return self.total > len(self.head) + len(self.tail)

    def text(self) -> str:
        """Head, a marker saying how much was cut, tail (decoded, errors replaced)."""
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        if not self.truncated:
            return head + tail
        cut = self.total - len(self.head) - len(self.tail)
        return f"{head}\n… [{cut} bytes of output cut] …\n{tail}"


__all__ = ["DEFAULT_MAX_OUTPUT", "BoundedOutput"]
