"""glob → a path it matches: the file a proposed or simulated report says it wrote."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["path_in"]


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
