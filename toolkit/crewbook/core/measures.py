"""The measures an act may carry, in the ledger's order (DESIGN rule 3)."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any, Final

__all__ = ["MEASURES", "copy_measures", "measures_of"]

#: ``duration_ms``, ``tokens_in``, ``tokens_out``, ``cost``: every engine and codec
#: copies exactly these from a report or an event.
MEASURES: Final = ("duration_ms", "tokens_in", "tokens_out", "cost")


def measures_of(source: Mapping[str, Any]) -> dict[str, Any]:
    """The measures `source` (an event or report data) carries, None ones left out."""
    return {k: source[k] for k in MEASURES if source.get(k) is not None}


def copy_measures(report: Any, target: MutableMapping[str, Any]) -> None:
    """Put the measures `report` (an object with the four attributes) carries into
    `target` (an event), None ones left out. Most reports carry none: that case costs
    four attribute reads (the engines call this on every act)."""
    if (report.duration_ms is None and report.tokens_in is None
            and report.tokens_out is None and report.cost is None):
        return
    for key in MEASURES:
        value = getattr(report, key)
        if value is not None:
            target[key] = value
