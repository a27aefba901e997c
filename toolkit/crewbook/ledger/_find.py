"""`find_ledgers`: the ledger files and spec-kit run folders a path (or list of paths)
designates, each with the name shown in messages.

Its own module because finding files is one job shared by the reader, the Parquet
export and the importers, and it needs nothing of pandas or Arrow.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..core.paths import kind_of
from ..errors import LedgerError, Problem

__all__ = ["Source", "find_ledgers"]

#: A ledger path, or several.
Source = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]


def find_ledgers(source: Source) -> list[tuple[Path, str]]:
    """(path, name shown in messages) for every ledger that `source` designates."""
    items: Sequence[str | os.PathLike[str]] = (
        [source] if isinstance(source, str | os.PathLike) else list(source))
    found: list[tuple[Path, str]] = []
    missing: list[Problem] = []
    for item in items:
        path = Path(item)
        if path.is_dir():
            found.extend(_in_folder(path))
        elif path.is_file() and path.name == "log.jsonl" and (
                path.parent / "state.json").is_file():
            found.append((path.parent, str(item)))  # a spec-kit run's log
        elif path.is_file():
            found.append((path, str(item)))
        elif (kind := kind_of(path)) in ("missing", "unreadable"):
            missing.append(Problem("file_not_found", "no such file or folder; check the path",
                                   str(item)))
        else:
            missing.append(Problem("not_a_file", f"it is a {kind}, not a ledger file or a "
                                   "folder of ledgers", str(item)))
    if missing:
        raise LedgerError("cannot read the ledger", missing)
    return found


def _order(path: Path) -> tuple[str, ...] | Path:
    """The key that sorts paths in their own order (`PurePath.__lt__`), faster: on POSIX
    that order is their parts' (one tuple compare in C per comparison; 14,500 files sorted
    in 0.03 s, not 0.26). Elsewhere (Windows compares case-insensitively) the path."""
    return path.parts if os.name == "posix" else path


def _in_folder(folder: Path) -> list[tuple[Path, str]]:
    if (folder / "log.jsonl").is_file() and (folder / "state.json").is_file():
        return [(folder, str(folder))]
    out: list[tuple[Path, str]] = []
    for path in sorted(folder.rglob("*.jsonl"), key=_order):
        if path.name == "log.jsonl" and (path.parent / "state.json").is_file():
            out.append((path.parent, str(path.parent)))
        elif path.is_file():
            out.append((path, str(path)))
    return out
