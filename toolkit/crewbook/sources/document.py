"""`SourceDoc`: plain data read from a file, with the line and column of every key.

Also `read_text`, which turns a missing, huge, binary or non-UTF-8 file into one coded
problem, so no reader lets a library traceback through.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidInputError, Problem

KeyPath = tuple[str | int, ...]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while a reader builds a large, acyclic result.

    Building a 10,000-artifact schema makes hundreds of thousands of objects, none in a
    cycle; each generation-2 collection meanwhile walks all of them, which doubled the
    time of a load. Collections resume (and catch up) when the block ends.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()

#: Largest YAML file read, in bytes. Real schemas are a few kilobytes; a generated
#: 10,000-artifact schema is about 2 MB.
MAX_YAML_BYTES = 16 * 1024 * 1024



@dataclass(frozen=True)
class Position:
    """A 1-based line and column."""

    line: int
    column: int


@dataclass
class SourceDoc:
    """Plain data read from a file, with the position of every key and item."""

    path: Path
    data: Any
    positions: Mapping[KeyPath, Position] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    display_path: str | None = None

    @property
    def name(self) -> str:
        """The path as shown in messages."""
        return self.display_path or str(self.path)

    def position(self, key_path: Sequence[str | int]) -> Position | None:
        """Where `key_path` is, or its nearest ancestor that has a position."""
        loc = tuple(key_path)
        while loc:
            if loc in self.positions:
                return self.positions[loc]
            loc = loc[:-1]
        return self.positions.get(())

    def problem(
        self, code: str, message: str, key_path: Sequence[str | int] = (), **kw: Any
    ) -> Problem:
        """A `Problem` located at `key_path` in this file."""
        pos = self.position(key_path)
        return Problem(
            code=code,
            message=message,
            path=self.name,
            line=pos.line if pos else None,
            column=pos.column if pos else None,
            key=format_key_path(key_path) or None,
            **kw,
        )


def format_key_path(key_path: Sequence[str | int]) -> str:
    """``("artifacts", 2, "requires")`` → ``"artifacts[2].requires"``."""
    out = ""
    for part in key_path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _fail(
    error_cls: type[InvalidInputError],
    name: str,
    code: str,
    message: str,
    line: int | None = None,
    column: int | None = None,
) -> InvalidInputError:
    problem = Problem(code=code, message=message, path=name, line=line, column=column)
    return error_cls(f"cannot read {name}", [problem])


def read_text(
    path: Path,
    *,
    error_cls: type[InvalidInputError] = InvalidInputError,
    max_bytes: int = MAX_YAML_BYTES,
    display_path: str | None = None,
) -> str:
    """The UTF-8 text of `path`, or one clear error if it is missing, huge or binary."""
    name = display_path or str(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise _fail(error_cls, name, "file_not_found", "no such file") from None
    except OSError as exc:
        raise _fail(error_cls, name, "unreadable", f"cannot read the file: {exc}") from None
    if not path.is_file():
        raise _fail(error_cls, name, "not_a_file", "expected a file, found a folder")
    if size > max_bytes:
        raise _fail(
            error_cls,
            name,
            "file_too_large",
            f"the file is {size / 1e6:.1f} MB, over the limit of {max_bytes / 1e6:.0f} MB; "
            "is it the right file?",
        )
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _fail(
            error_cls,
            name,
            "not_utf8",
            f"the file is not UTF-8 text (byte {exc.start}); save it as UTF-8",
        ) from None
