"""What source detection sees of a file or folder (`Sniff`), and why a file that starts
like JSON is not JSON (`json_error`).

Its own module because every detector (this package's and each importer module's)
shares one `Sniff`, read once per file; it loads nothing heavy.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Final

from ...errors import LedgerError, Problem

__all__ = ["SNIFF_BYTES", "SNIFF_JSON_BYTES", "Sniff", "json_error"]

#: How much of a file detection reads.
SNIFF_BYTES: Final = 1 << 20
#: Largest whole-JSON file parsed to detect its source (JSON Lines are read by line).
SNIFF_JSON_BYTES: Final = 64 * 1024 * 1024


@dataclass
class Sniff:
    """What detection sees of a file or folder: the first `SNIFF_BYTES` as text, the
    first line as JSON, and (for a whole-JSON file up to `SNIFF_JSON_BYTES`) its value.
    Each is computed once, on first use, for every detector to share."""

    path: Path
    head: str = ""
    size: int = 0
    is_dir: bool = False
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, path: Path) -> Sniff:
        """The sniff of `path`; `LedgerError` when the file cannot be read."""
        if path.is_dir():
            return cls(path, is_dir=True)
        try:
            size = path.stat().st_size
            with path.open("rb") as handle:
                head = handle.read(SNIFF_BYTES).decode("utf-8-sig", errors="replace")
        except OSError as exc:
            raise LedgerError(f"cannot import {path}", [Problem(
                "file_not_found" if isinstance(exc, FileNotFoundError) else "unreadable",
                f"cannot read it: {exc.strerror}", str(path))]) from None
        return cls(path, head=head, size=size)

    @cached_property
    def text(self) -> str:
        """The head without leading white space."""
        return self.head.lstrip()

    @cached_property
    def first(self) -> Any:
        """The first line parsed as JSON (None when it is not JSON)."""
        line = self.text.split("\n", 1)[0]
        try:
            return json.loads(line)
        except ValueError:
            return None

    @cached_property
    def value(self) -> Any:
        """The whole file parsed as JSON, or None (not JSON, JSON Lines, too big)."""
        if self.is_dir or not self.text.startswith(("[", "{")) \
                or self.size > SNIFF_JSON_BYTES:
            return None
        if self.size <= SNIFF_BYTES:
            text = self.head
        else:
            try:
                text = self.path.read_text(encoding="utf-8-sig")
            except (OSError, UnicodeDecodeError):
                return None
        try:
            return json.loads(text)
        except ValueError:
            return None


def json_error(sniff: Sniff) -> json.JSONDecodeError | None:
    """Why a file that starts like JSON is not JSON (None when it is, or is not JSON at
    all, or JSON Lines)."""
    if sniff.is_dir or not sniff.text.startswith(("[", "{")) or sniff.first is not None \
            or sniff.size > SNIFF_JSON_BYTES or sniff.value is not None:
        return None
    try:
        json.loads(sniff.path.read_text(encoding="utf-8-sig", errors="replace"))
    except json.JSONDecodeError as exc:
        return exc
    except OSError:
        return None
    return None
