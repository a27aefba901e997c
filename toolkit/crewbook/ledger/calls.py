"""The one shape of a model call and of a tool call in an imported ledger.

Every importer writes a model call as a ``report`` of the calling role at stage
``model`` (`importers._common.model_call`), and a tool call as a ``report`` whose stage
is the tool and whose ``payload.tool`` names it (`importers._common.tool_call`): one
meaning for every source, which `model_calls`, `tool_calls`, ``runs_by_change``, the
analyses and the OTLP export (an LLM span, a TOOL span) read. A call is the result of a
role's work, hence ``report`` (an ``act`` is a hand-off: a prompt, an action started).

A run's totals (SWE-agent's and mini-SWE-agent's ``info.model_stats``, OpenHands' usage
when its calls are not itemised) are no call: the importers put them on the ``finish``
or a ``usage`` note flagged ``payload.totals`` (`is_totals`), which the OTLP export
keeps as attributes of the run, never as one more model call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import pandas as pd

#: The kind of a model call and of a tool call.
CALL_KIND: Final = "report"
#: The stage of a model call.
MODEL_STAGE: Final = "model"
#: The payload key naming a tool call's tool.
TOOL_KEY: Final = "tool"
#: The payload flag of an event carrying a run's totals, not one call's usage.
TOTALS_KEY: Final = "totals"


def is_totals(kind: str, payload: object) -> bool:
    """Whether an event with these `kind` and `payload` carries a run's totals, never a
    model call of its own: flagged ``payload.totals``, or a ``finish`` (the end of a
    run is no call, whatever usage it carries)."""
    return kind == "finish" or (isinstance(payload, dict) and payload.get(TOTALS_KEY) is True)


def model_calls(frame: pd.DataFrame) -> pd.Series:
    """Which rows of a ledger frame are model calls (kind ``report``, stage ``model``),
    whatever the source."""
    return (frame["kind"].astype(object) == CALL_KIND) & (
        frame["stage"].astype(object) == MODEL_STAGE)


def tool_calls(frame: pd.DataFrame) -> pd.Series:
    """Which rows of a ledger frame are tool calls (kind ``report`` whose payload names
    the ``tool``), whatever the source."""
    tool = frame["payload"].map(lambda p: isinstance(p, dict) and TOOL_KEY in p)
    return (frame["kind"].astype(object) == CALL_KIND) & tool.astype(bool)


__all__ = ["CALL_KIND", "MODEL_STAGE", "TOOL_KEY", "TOTALS_KEY", "is_totals", "model_calls",
           "tool_calls"]
