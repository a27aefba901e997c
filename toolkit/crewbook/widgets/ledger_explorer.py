"""`LedgerExplorer(frame)`: filter a ledger frame by run, loop, role, kind and date; the
outcome plot (rounds per run) and the run's timeline follow the filters; pick a run in
the list to see its events.

The filtering is the plain function `filter_events` (tested alone); the plots are drawn
with `crewbook.ledger.plots` on their own matplotlib figures (no pyplot state) and shown
as PNG images.
"""

from __future__ import annotations

import io
from datetime import date
from typing import Any

import ipywidgets as w
import pandas as pd

from ..draw.table import readable
from ..ledger.analyses import run_outcomes
from ._common import guarded, note_html

ALL = "(all)"
#: Columns of the events table, those the frame has.
EVENT_COLUMNS = ("seq", "ts", "kind", "role", "stage", "verdict", "attempt", "duration_ms",
                 "summary")


def filter_events(df: pd.DataFrame, *, run: str | None = None, loop: str | None = None,
                  role: str | None = None, kind: str | None = None,
                  start: date | None = None, end: date | None = None) -> pd.DataFrame:
    """The events of `df` matching every filter given (None or ``"(all)"``: no filter);
    `start` and `end` are days, both included, compared with ``ts`` in UTC."""
    mask = pd.Series(True, index=df.index)
    for column, value in (("run", run), ("loop", loop), ("role", role), ("kind", kind)):
        if value not in (None, ALL) and column in df.columns:
            mask &= df[column].astype("string") == value
    if (start is not None or end is not None) and "ts" in df.columns:
        days = df["ts"].dt.tz_convert("UTC").dt.date
        if start is not None:
            mask &= days >= start
        if end is not None:
            mask &= days <= end
    return df[mask.fillna(False)]


def _choices(df: pd.DataFrame, column: str) -> list[str]:
    if column not in df.columns:
        return [ALL]
    return [ALL, *sorted(str(v) for v in df[column].dropna().unique())]


def _png(draw: Any, size: tuple[float, float]) -> bytes:
    from matplotlib.figure import Figure

    fig = Figure(figsize=size)
    ax = fig.subplots()
    draw(ax)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80)
    return buffer.getvalue()


class LedgerExplorer(w.VBox):  # type: ignore[misc]
    """Filters, the outcome plot, the run list, the run's timeline and events."""

    def __init__(self, frame: pd.DataFrame, *, max_runs: int = 500) -> None:
        self.frame = frame
        self.max_runs = max_runs
        self.loop_pick = w.Dropdown(description="loop", options=_choices(frame, "loop"))
        self.role_pick = w.Dropdown(description="role", options=_choices(frame, "role"))
        self.kind_pick = w.Dropdown(description="kind", options=_choices(frame, "kind"))
        self.start_pick = w.DatePicker(description="from")
        self.end_pick = w.DatePicker(description="to")
        self.run_list = w.Select(description="run", options=[], rows=8)
        self.summary = w.HTML()
        self.outcome_plot = w.Image(format="png")
        self.timeline_plot = w.Image(format="png")
        self.events_view = w.HTML()
        self.message = w.HTML()
        self.output = w.Output()
        guard = guarded(self.output, self.message)
        for pick in (self.loop_pick, self.role_pick, self.kind_pick, self.start_pick,
                     self.end_pick):
            pick.observe(guard(lambda _: self.apply_filters()), names="value")
        self.run_list.observe(guard(lambda _: self.show_run()), names="value")
        filters = w.VBox([w.HBox([self.loop_pick, self.role_pick, self.kind_pick]),
                          w.HBox([self.start_pick, self.end_pick])])
        super().__init__([filters, self.summary, w.HBox([self.run_list, self.outcome_plot]),
                          self.timeline_plot, self.events_view, self.message, self.output])
        self.add_class("crewbook-ledger-explorer")
        with self.output:
            self.apply_filters()

    def filtered(self) -> pd.DataFrame:
        """The events the filters keep (all runs)."""
        return filter_events(self.frame, loop=self.loop_pick.value, role=self.role_pick.value,
                             kind=self.kind_pick.value, start=self.start_pick.value,
                             end=self.end_pick.value)

    def apply_filters(self) -> None:
        """Refresh the run list, the summary and the outcome plot for the filters."""
        self.message.value = ""
        kept = self.filtered()
        runs = sorted(kept["run"].astype(str).unique()) if "run" in kept.columns else []
        self.summary.value = note_html(f"{len(kept):,} events in {len(runs):,} runs match"
                                       + (f"; the list shows the first {self.max_runs}"
                                          if len(runs) > self.max_runs else ""))
        if kept.empty:
            self.outcome_plot.value = b""
        else:
            from ..ledger.plots import plot_rounds

            # Outcomes of the runs kept, counted on all their events (rounds need verdicts).
            whole = self.frame[self.frame["run"].astype(str).isin(runs)]
            outcomes = run_outcomes(whole)
            self.outcome_plot.value = _png(lambda ax: plot_rounds(outcomes, ax=ax), (5, 2.6))
        current = self.run_list.value
        self.run_list.options = runs[: self.max_runs]
        self.run_list.value = current if current in self.run_list.options else (
            runs[0] if runs else None)
        self.show_run()

    def show_run(self) -> None:
        """The picked run's timeline and its events (those the filters keep)."""
        run = self.run_list.value
        if run is None:
            self.timeline_plot.value = b""
            self.events_view.value = note_html("(no run matches the filters)")
            return
        from ..ledger.plots import plot_timeline

        whole = self.frame[self.frame["run"].astype(str) == run]
        self.timeline_plot.value = _png(lambda ax: plot_timeline(whole, run, ax=ax), (9, 2.8))
        events = filter_events(self.filtered(), run=run)
        columns = [c for c in EVENT_COLUMNS if c in events.columns]
        self.events_view.value = (f"<b>{len(events)} events of {run}</b>"
                                  + readable(events[columns], index=False)._repr_html_())

    def __repr__(self) -> str:
        return f"<LedgerExplorer {len(self.frame):,} events, run {self.run_list.value}>"
