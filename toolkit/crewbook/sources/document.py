"""`SourceDoc`: plain data read from a file, with the line and column of every key.

Also `read_text`, which turns a missing, huge, binary or non-UTF-8 file into one coded
problem, so no reader lets a library traceback through.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidInputError, Problem

KeyPath = tuple[str | int, ...]


MiB = 1024 * 1024

#: Largest YAML file read (schemas, configs, changes, profiles, presets, policies,
#: catalogues), in bytes. Real schemas are a few kilobytes; a generated
#: 10,000-artifact schema is about 0.8 MiB. docs/hardening.md lists every limit
#: (and what a file at the limit costs); a test checks the docs say the same numbers.
MAX_YAML_BYTES = 2 * MiB

#: Largest prompt, template or JSON Schema file read, in bytes.
MAX_TEXT_BYTES = 1 * MiB

#: Deepest nesting of mappings and lists accepted in a YAML, TOML or JSON file
#: (crewbook's own formats need fewer than 10 levels).
MAX_DEPTH = 64



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


#: Largest integer a file may hold, in bits: about 4,200 decimal digits, under
#: Python's 4,300-digit limit on printing one (a hex literal is not limited on reading).
MAX_INT_BITS = 14_000


def too_complex(data: Any) -> str | None:
    """Why `data` is beyond what crewbook reads (nesting past `MAX_DEPTH`, an integer
    past `MAX_INT_BITS`), or None; a walk without recursion."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, int) and not isinstance(item, bool):
            if item.bit_length() > MAX_INT_BITS:
                return "a number has more than 4,000 digits; no crewbook key needs one"
            continue
        if isinstance(item, dict):
            children: Any = [*item.keys(), *item.values()]
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth + 1 > MAX_DEPTH:
            return f"it nests more than {MAX_DEPTH} levels deep; no crewbook file needs that"
        stack.extend((child, depth + 1) for child in children)
    return None


def nesting_depth(data: Any, limit: int = MAX_DEPTH) -> int:
    """How deep mappings and lists nest in `data` (0 for a scalar), counted without
    recursion and stopping once `limit` is passed."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        stack.extend((child, depth) for child in children)
    return deepest


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


def format_size(size: int) -> str:
    """A byte count as people read it: ``4 MiB``, ``6.2 MiB``, ``512 KiB``, ``80 bytes``."""
    if size >= MiB:
        text = f"{size / MiB:.1f}".removesuffix(".0")
        return f"{text} MiB"
    if size >= 1024:
        return f"{size / 1024:.1f}".removesuffix(".0") + " KiB"
    return f"{size} bytes"


def too_large(size: int, max_bytes: int) -> str:
    """The message for a file over its limit (the same words for every file type)."""
    shown = format_size(size)
    if shown == format_size(max_bytes):  # just over: say it in bytes
        shown = f"{size:,} bytes"
    return (f"the file is {shown}, over the limit of {format_size(max_bytes)} for this kind "
            "of file; is it the right file?")


def read_text(
    path: Path,
    *,
    error_cls: type[InvalidInputError] = InvalidInputError,
    max_bytes: int,
    display_path: str | None = None,
) -> str:
    """The UTF-8 text of `path`, or one clear error if it is missing, huge, binary or
    has a name the system refuses (too long, a NUL byte).

    `max_bytes` is the limit of the file's type (`MAX_YAML_BYTES`, `MAX_TOML_BYTES`,
    `MAX_TEXT_BYTES`): every reader names its own, so no file type borrows another's.
    """
    name = display_path or str(path)
    try:
        size = path.stat().st_size
        is_file = path.is_file()
    except FileNotFoundError:
        raise _fail(error_cls, name, "file_not_found", "no such file") from None
    except (OSError, ValueError) as exc:  # ENAMETOOLONG, ELOOP, a NUL byte in the name...
        raise _fail(error_cls, name, "unreadable", f"cannot read the file: "
                    f"{getattr(exc, 'strerror', None) or exc}") from None
    if not is_file:
        raise _fail(error_cls, name, "not_a_file", "expected a file, found a folder")
    if size > max_bytes:
        raise _fail(error_cls, name, "file_too_large", too_large(size, max_bytes))
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _fail(error_cls, name, "unreadable",
                    f"cannot read the file: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # it grew since stat
        raise _fail(error_cls, name, "file_too_large", too_large(len(data), max_bytes))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _fail(
            error_cls,
            name,
            "not_utf8",
            f"the file is not UTF-8 text (byte {exc.start}); save it as UTF-8",
        ) from None
