"""The measures an act may carry, in the ledger's order (DESIGN rule 3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["MEASURES", "measures_of"]

#: ``duration_ms``, ``tokens_in``, ``tokens_out``, ``cost``: every engine and codec
#: copies exactly these from a report or an event.
MEASURES: Final = ("duration_ms", "tokens_in", "tokens_out", "cost")


def measures_of(source: Mapping[str, Any]) -> dict[str, Any]:
    """The measures `source` (an event or report data) carries, None ones left out."""
    return {k: source[k] for k in MEASURES if source.get(k) is not None}
