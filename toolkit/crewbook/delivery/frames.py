"""DataFrames of a delivery task: its trail of accepted acts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .state import Step

if TYPE_CHECKING:
    import pandas as pd

#: The moves a trail can hold, in the order a task usually meets them.
MOVE_CATEGORIES: tuple[str, ...] = (
    "plan", "delegate", "built", "judgement", "result", "question", "answer", "revise",
    "expire", "finalise", "fail",
)
TRAIL_COLUMNS: tuple[str, ...] = (
    "act", "at", "actor", "move", "target", "version", "verdict", "sent_back", "summary",
)


def trail_frame(trail: Sequence[Step]) -> pd.DataFrame:
    """One row per accepted act: ``act`` (Int64), ``at`` (datetime64[ns, UTC]), ``actor``,
    ``move`` (category), ``target`` (the role delegated to, or asked), ``version``
    (Int64), ``verdict``, ``sent_back`` (bool), ``summary``."""
    import pandas as pd

    frame = pd.DataFrame([{
        "act": s.act, "at": s.at, "actor": s.actor, "move": s.move, "target": s.target,
        "version": s.version, "verdict": s.verdict, "sent_back": s.sent_back,
        "summary": s.summary,
    } for s in trail], columns=list(TRAIL_COLUMNS))
    frame["act"] = frame["act"].astype("Int64")
    frame["version"] = frame["version"].astype("Int64")
    frame["at"] = pd.to_datetime(frame["at"], utc=True).astype("datetime64[ns, UTC]")
    frame["move"] = pd.Categorical(frame["move"], categories=list(MOVE_CATEGORIES))
    frame["sent_back"] = frame["sent_back"].astype(bool)
    for col in ("actor", "target", "verdict", "summary"):
        frame[col] = frame[col].astype(object)
    return frame
