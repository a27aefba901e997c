"""Matplotlib drawings of run history: a Gantt timeline of acts and a rounds histogram.

matplotlib is imported inside each function, so importing crewbook never pays for
it. Each function draws on `ax` (or a new figure) and returns the Axes, so a
notebook can restyle it or place it in a grid.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from ..errors import UsageError
from .analyses import NEGATIVE_VERDICTS, POSITIVE_VERDICTS, run_outcomes, timeline

if TYPE_CHECKING:
    from matplotlib.axes import Axes

#: Bar colours by outcome of the act.
COLOURS = {"positive": "#4c9f70", "negative": "#d1495b", "other": "#5b8bd1"}


def plot_timeline(df: pd.DataFrame, run: str | None = None, *, ax: Axes | None = None) -> Axes:
    """A Gantt chart of one run: a row per role, a bar per act, coloured by verdict.

    Green: a positive verdict (go, approved, pass, done); red: a send-back (no-go,
    changes, fail); blue: anything else. `run` may be omitted when `df` holds one run.
    """
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    runs = df["run"].astype(str).unique()
    if run is None:
        if len(runs) != 1:
            shown = ", ".join(sorted(runs)[:5]) + (", …" if len(runs) > 5 else "")
            raise UsageError(f"the frame holds {len(runs)} runs ({shown}); pick one with run=")
        run = str(runs[0])
    spans = timeline(df, run)
    if spans.empty:
        raise UsageError(f"run {run!r} has no acts to draw (no report, verdict or bar events)")
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 0.5 + 0.45 * spans["role"].nunique()))
    roles = sorted(spans["role"].astype(str).unique(), key=_role_order)
    for y, role in enumerate(roles):
        mine = spans[spans["role"].astype(str) == role]
        start = mdates.date2num(mine["start"].dt.tz_convert(None))  # type: ignore[no-untyped-call]
        width = mine["duration"].dt.total_seconds() / 86_400
        width = width.where(width > 0, 20 / 86_400)  # instants: a 20-second sliver
        colours = [_colour(v) for v in mine["verdict"]]
        ax.barh(y, width, left=start, height=0.6, color=colours, edgecolor="white")
    ax.set_yticks(range(len(roles)), roles)
    ax.invert_yaxis()
    ax.xaxis_date()
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M"))  # type: ignore[no-untyped-call]
    ax.set_title(f"Run {run}: acts per role")
    ax.set_xlabel("time (UTC)")
    ax.legend(handles=[Patch(color=COLOURS[k], label=k) for k in COLOURS],
              loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small", frameon=False)
    return ax


def plot_rounds(df: pd.DataFrame, column: str = "rounds", *, ax: Axes | None = None,
                by: str | None = "loop") -> Axes:
    """A histogram of rounds per run (or of any count `column` of `run_outcomes`).

    `df` is a ledger frame or an outcomes frame. With `by` (default ``loop``), one
    bar series per loop kind, side by side.
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    outcomes = run_outcomes(df) if "kind" in df.columns else df
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.5))
    values = outcomes[column].dropna().astype(int)
    if values.empty:
        raise UsageError(f"no run has a value in {column!r}")
    bins = range(int(values.min()), int(values.max()) + 1)
    groups: list[tuple[str, pd.Series[Any]]] = (
        [(str(k), g[column].dropna().astype(int)) for k, g in
         outcomes.groupby(by, observed=True)] if by else [(column, values)])
    width = 0.8 / len(groups)
    tallest = 0
    for i, (label, series) in enumerate(groups):
        counts = series.value_counts(sort=False).reindex(bins, fill_value=0)
        tallest = max(tallest, int(counts.max()))
        ax.bar([b - 0.4 + width * (i + 0.5) for b in bins], counts.to_numpy(), width=width,
               label=label)
    ax.set_xticks(list(bins))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # runs are counted: no 1.5
    ax.set_ylim(0, max(tallest, 1) * (1.3 if by else 1.05))  # room for the legend
    ax.set_xlabel(column)
    ax.set_ylabel("runs")
    ax.set_title(f"{column} per run")
    if by:
        ax.legend(title=by)
    return ax


def _colour(verdict: Any) -> str:
    if isinstance(verdict, str) and verdict in POSITIVE_VERDICTS:
        return COLOURS["positive"]
    if isinstance(verdict, str) and verdict in NEGATIVE_VERDICTS:
        return COLOURS["negative"]
    return COLOURS["other"]


_ROLE_ORDER = ("analyst", "architect", "coordinator", "developer", "bar", "qa", "reviewer")


def _role_order(role: str) -> tuple[int, str]:
    return (_ROLE_ORDER.index(role) if role in _ROLE_ORDER else len(_ROLE_ORDER), role)
