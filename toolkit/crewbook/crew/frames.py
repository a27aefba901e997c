"""DataFrames of the crew loop: its accepted acts, as `crew_status` lists them.

The ledger itself (every event, bar runs included) is read with `crewbook.read_ledger`
on ``_codev/crew/``; this frame is the loop's own short trail.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .model import ActRecord

if TYPE_CHECKING:
    import pandas as pd

#: The columns of `acts_frame`, in order.
ACT_COLUMNS = ("act", "ts", "role", "verdict", "summary", "epic", "story")


def acts_frame(trail: Sequence[ActRecord]) -> pd.DataFrame:
    """One row per accepted act: ``act`` (Int64), ``ts`` (datetime64[ns, UTC]), ``role``
    and ``verdict`` (category), ``summary``, ``epic``, ``story`` (string)."""
    import pandas as pd

    rows = [r.model_dump() for r in trail]
    frame = pd.DataFrame(rows, columns=list(ACT_COLUMNS))
    return frame.astype({"act": "Int64", "role": "category", "verdict": "category",
                         "summary": "string", "epic": "string", "story": "string"}).assign(
        ts=pd.to_datetime(frame["ts"], utc=True, format="ISO8601").astype("datetime64[ns, UTC]"))
