"""Writing files: never half a file, never replacing what is not a regular file.

- `write_atomic(path, text)`: a file crewbook owns (a state) is replaced all at once
  (a temporary file beside it, then a rename), so a crash never leaves half a file.
- `output_path(path, inputs=...)` and `write_output(path, data, inputs=...)`: the one way
  a command writes the file a user named (``-o``). What is there decides how:

  ============================  ==================================================
  nothing, or a regular file    written beside it, then renamed over it (atomic);
                                a link to a regular file replaces the file it names
  ``-``                         written to standard output
  a character device, a FIFO    written in place (a FIFO needs a reader waiting)
  a folder, a socket, a block   refused: `OutputRefused`, nothing written
  device, a loop of links, a
  missing folder, the command's
  own input
  ============================  ==================================================
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Literal

from ..errors import InvalidInputError, Problem
from .paths import checked_path, kind_of

__all__ = ["OutputRefused", "output_kind", "output_path", "write_atomic", "write_output"]

OutputKind = Literal["stdout", "file", "in place"]
PathLike = str | os.PathLike[str]


class OutputRefused(InvalidInputError):
    """The output path given cannot be written safely: its problem says why and what to
    give instead."""


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` all at once (a temporary file beside it, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _refuse(path: PathLike, what: str, why: str, code: str = "output_refused") -> OutputRefused:
    shown = os.fspath(path)
    return OutputRefused(f"cannot write {what} {shown}", [Problem(code, why, shown, key=what)])


def _same_file(a: PathLike, b: PathLike) -> bool:
    try:
        sa, sb = os.stat(a), os.stat(b)
    except (OSError, ValueError):
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def output_kind(path: PathLike, *, inputs: Sequence[PathLike] = (), what: str = "-o",
                parents: bool = False) -> OutputKind:
    """How `path` would be written (see the module docstring), or `OutputRefused`.
    `inputs` are the files the command reads (never overwritten); with `parents`, a
    missing folder is created."""
    if os.fspath(path) == "-":
        return "stdout"
    target = checked_path(path, what)
    kind = kind_of(target)
    if kind == "unreadable":
        raise _refuse(path, what, "it cannot be reached (a loop of links, or permission "
                      "denied); give another path", "output_unreachable")
    if kind == "folder":
        raise _refuse(path, what, "it is a folder; give the name of a file in it",
                      "output_is_folder")
    if kind in ("socket", "block device"):
        raise _refuse(path, what, f"it is a {kind}; crewbook writes a regular file, a "
                      "character device, a FIFO or standard output (-)", "output_not_a_file")
    if kind == "missing":
        if os.path.islink(target):
            raise _refuse(path, what, "it is a link to nothing; remove the link or give "
                          "another path", "output_dangling_link")
        parent = Path(os.path.dirname(os.path.abspath(target)))
        found = kind_of(parent)
        if found == "missing" and not parents:
            raise _refuse(path, what, f"its folder {parent} does not exist; create it first",
                          "output_no_folder")
        if found not in ("folder", "missing"):
            raise _refuse(path, what, f"its folder {parent} is a {found}", "output_no_folder")
        return "file"
    for source in inputs:
        if _same_file(target, source):
            raise _refuse(path, what, f"it is the command's own input ({os.fspath(source)}); "
                          "write to another file", "output_is_input")
    return "file" if kind == "file" else "in place"


@contextmanager
def output_path(path: PathLike, *, inputs: Sequence[PathLike] = (), what: str = "-o",
                parents: bool = False) -> Iterator[Path]:
    """A temporary file to write the output to; when the block ends without an error it
    becomes `path` (see the module docstring), else it is removed and `path` untouched."""
    kind = output_kind(path, inputs=inputs, what=what, parents=parents)
    if kind == "file":
        real = Path(os.path.realpath(path))  # a link to a file: the file, not the link
        if parents:
            real.parent.mkdir(parents=True, exist_ok=True)
        folder: str | None = str(real.parent)
        prefix, suffix = f".{real.stem}.", f".tmp{real.suffix}"
    else:
        folder, prefix, suffix = None, ".crewbook-out.", Path(os.fspath(path)).suffix
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=folder)
    os.close(fd)
    try:
        yield Path(tmp)
        if kind == "file":
            os.replace(tmp, real)
        else:
            with open(tmp, "rb") as handle:
                _copy_in_place(handle, path, what, kind)
    finally:
        Path(tmp).unlink(missing_ok=True)


def write_output(path: PathLike, data: str | bytes, *, inputs: Sequence[PathLike] = (),
                 what: str = "-o", parents: bool = False) -> None:
    """Write `data` (text is UTF-8) to `path` by the rules of `output_path`."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with output_path(path, inputs=inputs, what=what, parents=parents) as tmp:
        tmp.write_bytes(raw)


def _copy_in_place(source: BinaryIO, path: PathLike, what: str, kind: OutputKind) -> None:
    """Copy the open file `source` to standard output or into a device or FIFO."""
    if kind == "stdout":
        sys.stdout.flush()
        shutil.copyfileobj(source, sys.stdout.buffer)
        sys.stdout.buffer.flush()
        return
    try:
        fd = os.open(path, os.O_WRONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        why = ("no process is reading this FIFO; start the reader first"
               if kind_of(path) == "FIFO" else exc.strerror or str(exc))
        raise _refuse(path, what, why, "output_unwritable") from None
    try:
        os.set_blocking(fd, True)
        with os.fdopen(fd, "wb", closefd=False) as out:
            shutil.copyfileobj(source, out)
    except OSError as exc:
        raise _refuse(path, what, exc.strerror or str(exc), "output_unwritable") from None
    finally:
        os.close(fd)
