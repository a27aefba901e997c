"""The bytes of a ledger file (`crewbook.ledger.appendfile`): reads at an offset, whole
writes, the file's size, and the last `seq` of a run found backwards by byte search
(only the lines that hold the run's JSON text are parsed)."""

from __future__ import annotations

import json
import os

__all__ = ["last_seq", "needles", "read_at", "size_of", "write_all"]


def needles(run: str) -> tuple[bytes, ...]:
    """The ways a JSON writer spells the string `run` (with its quotes), or () when it
    has characters other than printable ASCII (then no short list covers every spelling)."""
    if not all(" " <= char <= "~" for char in run):
        return ()
    plain = json.dumps(run).encode("ascii")
    return (plain, plain.replace(b"/", b"\\/")) if b"/" in plain else (plain,)


def last_seq(body: bytes, lo: int, run: str, needles: tuple[bytes, ...],
              escaped: bool) -> int | None:
    """The `seq` of the last line of ``body[lo:]`` (whole lines) whose `run` is `run`,
    parsing only the lines that hold one of `needles` (or ``\\u00``, when `escaped`)."""
    marks = (*needles, b"\\u00") if escaped else needles
    hi = len(body)
    while hi > lo:
        pos = max(body.rfind(mark, lo, hi) for mark in marks)
        if pos < 0:
            return None
        first = body.rfind(b"\n", 0, pos) + 1
        last = body.find(b"\n", pos)
        try:
            obj = json.loads(body[first:last if last >= 0 else len(body)])
        except ValueError:
            obj = None
        if isinstance(obj, dict) and obj.get("run") == run:
            seq = obj.get("seq")
            if isinstance(seq, int) and not isinstance(seq, bool):
                return seq
        hi = first
    return None


def size_of(fd: int) -> int:
    """The file's size: where its end is (``lseek``, a few times cheaper than ``fstat``;
    the descriptor appends, so moving its offset changes nothing), or ``fstat``'s size
    for a file that cannot seek."""
    try:
        return os.lseek(fd, 0, os.SEEK_END)
    except OSError:
        return os.fstat(fd).st_size


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def read_at(fd: int, offset: int, size: int) -> bytes:
    parts: list[bytes] = []
    while size > 0:
        if hasattr(os, "pread"):
            part = os.pread(fd, size, offset)
        else:  # pragma: no cover - Windows
            os.lseek(fd, offset, os.SEEK_SET)
            part = os.read(fd, size)
        if not part:
            break
        parts.append(part)
        offset += len(part)
        size -= len(part)
    return b"".join(parts)
