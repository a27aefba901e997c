"""Paths: the one safe way crewbook looks at a path it reads, and `path_in`.

`path_in(globs)`: a path a glob matches (the file a proposed or simulated report says
it wrote).

`Path.exists()`, `is_dir()` and `resolve()` raise `OSError` (name too long, loop of
links) or `ValueError` (a NUL byte) on hostile names. Here:

- `checked_path(value, what)` refuses a NUL byte, a path part over 255 bytes or a path
  over 4096 bytes with a clear `UsageError` naming the argument;
- `kind_of(path)` says what is there: ``"missing"``, ``"file"``, ``"folder"``,
  ``"FIFO"``, ``"character device"``, ``"block device"``, ``"socket"``, never raising;
- `existing(value, what, want)` does both and names what it found when it is not what
  was wanted (``--payload-path /dev/zero`` is "a character device, not a file");
- `read_capped(path, limit, shown)` reads a regular file of at most `limit` bytes;
- `file_or_absent(path, what)` is `path` when it is a regular file or nothing yet (a
  ledger, a lock, which crewbook creates), else `InvalidInputError` naming what is there;
- `inside(root, relative, what)` is `root / relative` only when it stays under `root`
  (no absolute path, no ``..``, no link leading out), else `UnsafePathError`.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Final, Literal

from ..errors import InvalidInputError, NotFoundError, Problem, UnsafePathError, UsageError

__all__ = ["MAX_PART_BYTES", "MAX_PATH_BYTES", "checked_path", "existing", "file_or_absent",
           "inside", "kind_of", "path_in", "path_problem", "read_capped"]


def path_in(globs: Sequence[str] | str | None, *, stem: str = "change",
            default: str = "src/change.py") -> str:
    """A file path the first of `globs` matches (``core/**`` → ``core/change.py``);
    `default` when there is no glob. Wildcards become `stem`, character classes their
    first character, and a folder gets ``<stem>.py`` inside it."""
    if isinstance(globs, str):
        globs = (globs,)
    if not globs:
        return default
    parts = []
    for part in globs[0].split("/"):
        if part == "**":
            continue
        part = re.sub(r"\[!?([^\]])[^\]]*\]", r"\1", part)
        parts.append(part.replace("*", stem).replace("?", "x"))
    path = "/".join(p for p in parts if p)
    return path if "." in path.rsplit("/", 1)[-1] else f"{path}/{stem}.py".lstrip("/")

#: Most bytes in one part of a path (NAME_MAX of Linux and macOS).
MAX_PART_BYTES: Final = 255
#: Most bytes in a whole path (PATH_MAX of Linux).
MAX_PATH_BYTES: Final = 4096

Kind = Literal["missing", "file", "folder", "FIFO", "character device", "block device",
               "socket", "unreadable"]


def path_problem(value: str | os.PathLike[str]) -> str | None:
    """Why `value` cannot name a file (NUL, a part or the whole too long), or None."""
    text = os.fspath(value)
    if isinstance(text, bytes):  # pragma: no cover - crewbook passes text
        text = text.decode("utf-8", "surrogateescape")
    if "\x00" in text:
        return "it holds a NUL byte, which no file name can hold"
    encoded = text.encode("utf-8", "surrogateescape")
    if len(encoded) > MAX_PATH_BYTES:
        return f"it is {len(encoded):,} bytes long, over the limit of {MAX_PATH_BYTES:,}"
    for part in text.split("/"):
        size = len(part.encode("utf-8", "surrogateescape"))
        if size > MAX_PART_BYTES:
            shown = part[:40] + "…"
            return (f"its part {shown!r} is {size:,} bytes long, over the limit of "
                    f"{MAX_PART_BYTES} bytes for a file or folder name")
    return None


def checked_path(value: str | os.PathLike[str], what: str = "path") -> Path:
    """`value` as a `Path`, or `UsageError` saying why it cannot name a file."""
    why = path_problem(value)
    if why is not None:
        raise UsageError(f"{what} {_short(value)} cannot be used: {why}; give a shorter "
                         "path without control characters")
    return Path(value)


def kind_of(path: str | os.PathLike[str]) -> Kind:
    """What is at `path` (links followed); never raises."""
    if path_problem(path) is not None:
        return "missing"
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "missing"
    except (OSError, ValueError):
        return "unreadable"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "unreadable"  # pragma: no cover - doors, whiteouts


def existing(value: str | os.PathLike[str], what: str = "path",
             want: Literal["file", "folder", "any"] = "any") -> Path:
    """`value` checked (`checked_path`), existing, and a file or folder as `want` says;
    `NotFoundError` when missing, `UsageError` naming what it is otherwise."""
    path = checked_path(value, what)
    kind = kind_of(path)
    if kind == "missing":
        raise NotFoundError(f"{what} {_short(value)} does not exist")
    if kind == "unreadable":
        raise UsageError(f"{what} {_short(value)} cannot be read (permission denied or a "
                         "loop of links)")
    allowed = ("file", "folder") if want == "any" else (want,)
    if kind not in allowed:
        article = "an" if kind[0] in "aeiou" else "a"
        wanted = "a file or a folder" if want == "any" else f"a {want}"
        raise UsageError(f"{what} {_short(value)} is {article} {kind}, not {wanted}; "
                         "crewbook reads regular files and folders only")
    return path


def file_or_absent(path: Path, what: str) -> Path:
    """`path` when it is a regular file or nothing yet (crewbook creates it), so a file
    crewbook writes or locks is never met as a folder, a FIFO, a device or a loop of
    links with a traceback (``IsADirectoryError``, ``Illegal seek``);
    `InvalidInputError` naming the path and what is there otherwise."""
    kind = kind_of(path)
    if kind in ("file", "missing"):
        return path
    found = "a loop of links, or unreadable" if kind == "unreadable" else \
        f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"
    raise InvalidInputError(f"{_short(path)} is {found}, not a file", [Problem(
        "not_a_file", f"the {what} must be a regular file (or absent: crewbook creates "
        f"it), and this is {found}; remove or rename it", str(path))])


def read_capped(path: Path, limit: int, *, shown: str | None = None) -> bytes:
    """The bytes of the regular file `path`, at most `limit` (read through one open
    descriptor, so a file swapped for a FIFO meanwhile cannot block)."""
    name = shown or str(path)
    kind = kind_of(path)
    if kind == "missing":
        raise NotFoundError(f"{name} does not exist")
    if kind != "file":
        raise InvalidInputError(f"cannot read {name}", [Problem(
            "not_a_file", f"it is a {kind}, not a regular file", name)])
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise InvalidInputError(f"cannot read {name}", [Problem(
            "unreadable", exc.strerror or str(exc), name)]) from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise InvalidInputError(f"cannot read {name}", [Problem(
                "not_a_file", "it is not a regular file", name)])
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise InvalidInputError(f"cannot read {name}", [Problem(
            "file_too_large", f"the file is over the limit of {_size(limit)} for this kind "
            "of file", name)])
    return data


def inside(root: Path, relative: str, what: str) -> Path:
    """`root / relative` when it stays under `root` (checked after following links)."""
    why = path_problem(relative)
    if why is None and (relative.startswith(("/", "\\")) or ".." in relative.split("/")
                        or (len(relative) > 1 and relative[1] == ":")):
        why = "it leads out of its folder (an absolute path or '..')"
    if why is None:
        base = root.resolve()
        try:
            target = (base / relative).resolve()
        except (OSError, ValueError, RuntimeError) as exc:
            why = f"it cannot be resolved ({exc})"
        else:
            if target.is_relative_to(base):
                return base / relative
            why = "a link in it leads out of its folder"
    raise UnsafePathError(f"{what} {_short(relative)} is refused: {why}; it must name a "
                          f"path inside {root}")


def _short(value: str | os.PathLike[str]) -> str:
    text = os.fspath(value)
    text = text if isinstance(text, str) else repr(text)
    return repr(text if len(text) <= 80 else text[:60] + "…")


def _size(n: int) -> str:
    return f"{n / (1 << 20):g} MiB" if n >= 1 << 20 else f"{n:,} bytes"
