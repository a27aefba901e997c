"""The one acts frame every loop gives (`Loop.trail_frame()`): one row per accepted act,
the same columns and dtypes for every family, so runs of different loops stack and
group alike.

=============  ========================  ==============================================
column         dtype                     what
=============  ========================  ==============================================
``act``        Int64                     the act's number in its run
``ts``         datetime64[ns, UTC]       when it was logged (NaT when unknown)
``role``       string                    who acted (a delivery role, a stage...)
``stage``      string                    where the loop was (stage, phase) or NA
``move``       string                    what kind of act (``report``, ``plan``...)
``verdict``    string                    its verdict, if it gave one
``version``    Int64                     the version of the work it speaks for, or NA
``summary``    string                    its one-line summary
=============  ========================  ==============================================
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TRAIL_COLUMNS", "trail_table"]

#: The columns of every loop's `trail_frame()`, in order.
TRAIL_COLUMNS: Final = ("act", "ts", "role", "stage", "move", "verdict", "version", "summary")


def trail_table(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The acts frame of `rows` (mappings with some of `TRAIL_COLUMNS`; others are NA)."""
    import pandas as pd

    records = [{c: row.get(c) for c in TRAIL_COLUMNS} for row in rows]
    frame = pd.DataFrame(records, columns=list(TRAIL_COLUMNS))
    frame["act"] = frame["act"].astype("Int64")
    frame["version"] = frame["version"].astype("Int64")
    frame["ts"] = pd.to_datetime(frame["ts"], utc=True, format="ISO8601").astype(
        "datetime64[ns, UTC]")
    for column in ("role", "stage", "move", "verdict", "summary"):
        frame[column] = frame[column].astype("string")
    return frame
