"""Paths in artifacts (B7 `ground_references`) and write scopes (B2 `writes`).

Which strings of an artifact are paths:

- every string under a key that names files: ``path``, ``paths``, ``file``,
  ``files``, ``references``, or any key ending in ``_file(s)`` / ``_path(s)``
  (``relevant_files``); an absolute path there is a miss (it must be
  workspace-relative); a glob there is grounded when it matches a file;
- in any other text, tokens holding a ``/`` whose last part has an extension
  (``core/sessions/store.py``, ``:12`` line suffixes and closing punctuation
  dropped), and tokens in backticks with an extension (`` `README.md` ``); absolute
  paths and URLs in free text are left alone.

A write scope is a list of workspace-relative globs: ``*`` stays within one folder,
``**`` crosses folders, ``?`` is one character.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..models import is_glob, path_defect

PATH_KEYS = frozenset({"path", "paths", "file", "files", "references"})
_TOKEN = re.compile(r"(?<![\w/.:-])([\w.-]+(?:/[\w.-]+)+/?)")
_TICKED = re.compile(r"`([\w./-]+\.[A-Za-z0-9]{1,10})`")
_EXT = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,9}$")


def _is_path_key(key: str) -> bool:
    return key in PATH_KEYS or key.endswith(("_file", "_files", "_path", "_paths"))


def named_paths(content: Any) -> list[str]:
    """The workspace-relative paths an artifact names, first mention first, no repeats."""
    seen: dict[str, None] = {}
    for path in _walk(content, False):
        seen.setdefault(path, None)
    return list(seen)


def _walk(value: Any, path_key: bool) -> Iterator[str]:
    if isinstance(value, dict):
        for key, sub in value.items():
            yield from _walk(sub, _is_path_key(str(key)))
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item, path_key)
    elif isinstance(value, str):
        if path_key:
            if value.strip():
                yield value.strip()
            return
        for match in _TOKEN.finditer(value):
            token = match.group(1).rstrip(".")
            if token.endswith("/") or _EXT.search(token):
                yield token
        for match in _TICKED.finditer(value):
            yield match.group(1)


def missing_paths(workspace: Path, paths: Sequence[str]) -> list[str]:
    """One message per path that is not in `workspace` (or would leave it)."""
    root = workspace.resolve()
    out: list[str] = []
    for raw in paths:
        path = re.sub(r":\d+(?:-\d+)?$", "", raw)
        defect = path_defect(path)
        if defect:
            out.append(f"{raw!r}: {defect}")
            continue
        if is_glob(path):
            if not any(root.glob(path)):
                out.append(f"{raw!r} matches no file in the workspace")
            continue
        target = (root / path).resolve()
        if not target.is_relative_to(root):
            out.append(f"{raw!r} leaves the workspace")
        elif not target.exists():
            out.append(f"{raw!r} does not exist in the workspace")
    return out


@lru_cache(maxsize=512)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A regex matching the workspace-relative paths a `writes` glob allows.

    Written here because Python 3.11 has no `glob.translate`: `*` and `?` stay within
    one folder, `**` spans folders, `[...]` / `[!...]` are character classes.
    """
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append(r"(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(r".*")
            i += 2
        elif pattern[i] == "*":
            out.append(r"[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append(r"[^/]")
            i += 1
        elif pattern[i] == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1:end]  # a class such as [abc], [a-z] or [!x]
            negate = body.startswith("!")
            body = re.sub(r"([\\^\]])", r"\\\1", body[1:] if negate else body)
            out.append(f"[{'^/' if negate else ''}{body}]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    if pattern.endswith("/"):
        out.append(r".*")
    return re.compile("".join(out) + r"\Z")


def in_scope(path: str, globs: Sequence[str]) -> bool:
    """Whether `path` matches one of the `writes` globs."""
    clean = path.removeprefix("./")
    return any(glob_regex(g).match(clean) for g in globs)
