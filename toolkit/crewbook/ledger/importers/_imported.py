"""`Imported`: what an import read, file by file, and what it skipped and why; and
`skipped_files` / `unknown_types`, which read that record back off an imported frame.

Kept apart from the import itself: the command line and `gather` report from it, and
`import_runs` uses its record of skipped files.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ...errors import Problem

if TYPE_CHECKING:
    import pandas as pd

    from ..events import LedgerEvent

__all__ = ["SKIPPED_ATTR", "UNKNOWN_ATTR", "UNKNOWN_KEY", "Imported", "skipped_files",
           "unknown_types"]

#: ``frame.attrs`` key of the files an import skipped (see `skipped_files`).
SKIPPED_ATTR: Final = "crewbook_skipped"
#: ``frame.attrs`` key of the counts of events of unknown types kept as notes.
UNKNOWN_ATTR: Final = "crewbook_unknown"

#: The payload key an importer sets on a ``note`` that keeps an event of a type it does
#: not know (its value: the type's name); such events are counted and reported.
UNKNOWN_KEY: Final = "unknown_type"


@dataclass(frozen=True)
class Imported:
    """What an import read: per file or run folder, its source and events, and the
    files it skipped with the problems that made it skip them."""

    read: list[tuple[Path, str, list[LedgerEvent]]]
    skipped: list[tuple[Path, list[Problem]]]

    @property
    def events(self) -> list[LedgerEvent]:
        """Every event read, file after file."""
        return [e for _, _, events in self.read for e in events]

    def unknown(self) -> dict[str, int]:
        """How many events of each unknown type were kept as notes (``source:type``)."""
        counts: Counter[str] = Counter()
        for _, name, events in self.read:
            for event in events:
                kept = event.payload.get(UNKNOWN_KEY)
                if event.kind == "note" and isinstance(kept, str):
                    counts[f"{name}:{kept}"] += 1
        return dict(sorted(counts.items()))

    def skipped_records(self) -> list[dict[str, Any]]:
        """One plain record per skipped file: file, code, reason (first problem) and
        every problem."""
        return [{"file": str(path), "code": problems[0].code if problems else "unknown",
                 "reason": problems[0].message if problems else "",
                 "problems": [p.to_dict() for p in problems]}
                for path, problems in self.skipped]


def skipped_files(frame: pd.DataFrame) -> pd.DataFrame:
    """The files `import_runs` skipped: one row per file with ``file``, ``code`` and
    ``reason`` (empty when it skipped none)."""
    import pandas as pd

    records = frame.attrs.get(SKIPPED_ATTR, [])
    return pd.DataFrame({"file": [r["file"] for r in records],
                         "code": [r["code"] for r in records],
                         "reason": [r["reason"] for r in records]}, dtype="string")


def unknown_types(frame: pd.DataFrame) -> dict[str, int]:
    """How many events of each unknown type (``source:type``) `import_runs` kept as
    ``note`` events."""
    counts: dict[str, int] = dict(frame.attrs.get(UNKNOWN_ATTR, {}))
    return counts
