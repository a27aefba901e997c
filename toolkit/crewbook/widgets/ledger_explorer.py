"""`LedgerExplorer(frame)`: filter a ledger frame by loop, role, kind and date; the
outcome plot (rounds per run) and the run's timeline follow the filters; pick a run in
the list to see its events.

The filters narrow each other (faceted): each dropdown offers the values found among
the events the *other* filters keep, so loop=coordinator then role lists only the roles
of coordinator runs. A choice is never dropped behind the user's back: dates that keep
none of the chosen events leave loop, role and kind as they are (the summary says so),
and moving the dates back shows the chosen events again; a reversed range is named. The
filtering is the plain function `filter_events` (tested alone). The plots are drawn
with `crewbook.ledger.plots` on their own matplotlib figures (no pyplot state) as SVG
images at their own size (crisp at any zoom, no upscaling); an empty selection says
"no events match" instead of showing an empty image. The widget stays under
`MAX_HEIGHT` and scrolls inside; durations read "46m 53s", as everywhere (`format_duration`).
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Callable
from datetime import date
from typing import Any

import ipywidgets as w
import pandas as pd

from ..draw.table import format_duration
from ..ledger.analyses import run_outcomes
from ._common import guarded, note_html, table_html

ALL = "(all)"
#: Columns of the events table, those the frame has (``duration`` is ``duration_ms``
#: shown for reading).
EVENT_COLUMNS = ("seq", "ts", "kind", "role", "stage", "verdict", "attempt", "duration",
                 "summary")
#: The tallest the widget grows before it scrolls inside (CSS).
MAX_HEIGHT = "780px"
#: Screen pixels per inch of a figure (CSS: 96 px to the inch), so an image is shown at
#: exactly the size it was drawn.
PX_PER_INCH = 96


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


def svg_image(draw: Callable[[Any], Any], size: tuple[float, float],
              alt: str = "plot") -> str:
    """`draw(ax)` on its own figure of `size` inches, as an SVG ``<img>`` whose width is
    the figure's own (no upscaling: crisp at any zoom); the same bytes for the same
    drawing (fixed SVG ids, no date)."""
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    with rc_context({"svg.hashsalt": "crewbook", "svg.fonttype": "none"}):
        fig = Figure(figsize=size)
        ax = fig.subplots()
        draw(ax)
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    width, height = round(size[0] * PX_PER_INCH), round(size[1] * PX_PER_INCH)
    return (f"<img class='crewbook-plot' alt='{html.escape(alt)}' width='{width}' "
            f"height='{height}' style='max-width:none' "
            f"src='data:image/svg+xml;base64,{data}'>")


class LedgerExplorer(w.VBox):  # type: ignore[misc]
    """Filters, the outcome plot, the run list, the run's timeline and events."""

    def __init__(self, frame: pd.DataFrame, *, max_runs: int = 500) -> None:
        self.frame = frame
        self.max_runs = max_runs
        narrow = w.Layout(width="15em")
        self.loop_pick = w.Dropdown(description="loop", options=_choices(frame, "loop"),
                                    layout=narrow)
        self.role_pick = w.Dropdown(description="role", options=_choices(frame, "role"),
                                    layout=narrow)
        self.kind_pick = w.Dropdown(description="kind", options=_choices(frame, "kind"),
                                    layout=narrow)
        dates = w.Layout(width="18em")
        self.start_pick = w.DatePicker(description="from", layout=dates)
        self.end_pick = w.DatePicker(description="to", layout=dates)
        self.run_list = w.Select(description="run", options=[], rows=9,
                                 layout=w.Layout(width="20em"))
        self.summary = w.HTML()
        self.outcome_plot = w.HTML(layout=w.Layout(overflow="auto"))
        self.timeline_plot = w.HTML(layout=w.Layout(overflow="auto"))
        self.events_view = w.HTML(layout=w.Layout(max_height="260px", overflow="auto"))
        self.message = w.HTML()
        self.output = w.Output()
        self._updating = False
        guard = guarded(self.output, self.message)
        for pick in (self.loop_pick, self.role_pick, self.kind_pick, self.start_pick,
                     self.end_pick):
            pick.observe(guard(lambda _: self._filters_changed()), names="value")
        self.run_list.observe(guard(lambda _: self._run_changed()), names="value")
        filters = w.VBox([w.HBox([self.loop_pick, self.role_pick, self.kind_pick]),
                          w.HBox([self.start_pick, self.end_pick])])
        super().__init__([filters, self.summary, w.HBox([self.run_list, self.outcome_plot]),
                          self.timeline_plot, self.events_view, self.message, self.output],
                         layout=w.Layout(max_height=MAX_HEIGHT, overflow="auto"))
        self.add_class("crewbook-ledger-explorer")
        with self.output:
            self.apply_filters()

    def picks(self) -> dict[str, w.Dropdown]:
        """The dropdown filters, by column."""
        return {"loop": self.loop_pick, "role": self.role_pick, "kind": self.kind_pick}

    def filtered(self, *, without: str | None = None) -> pd.DataFrame:
        """The events the filters keep (all runs); `without` leaves one dropdown out
        (its choices are the values the others keep)."""
        values = {c: (None if c == without else p.value) for c, p in self.picks().items()}
        return filter_events(self.frame, **values, start=self.start_pick.value,
                             end=self.end_pick.value)

    def _filters_changed(self) -> None:
        if not self._updating:
            self.apply_filters()

    def _run_changed(self) -> None:
        if not self._updating:
            self.show_run()

    def narrow_choices(self) -> None:
        """Recompute each dropdown's choices from the other filters. The current value
        always stays among them, even when the dates keep none of its events: a choice
        is the user's, and going back to ``(all)`` silently would show every loop once
        the dates are widened again."""
        self._updating = True
        try:
            for column, pick in self.picks().items():
                options = _choices(self.filtered(without=column), column)
                if pick.value not in options:
                    options = [ALL, *sorted([*options[1:], str(pick.value)])]
                if tuple(options) != tuple(pick.options):
                    value = pick.value
                    pick.options = options
                    pick.value = value
        finally:
            self._updating = False

    def _nothing_kept(self) -> str:
        """Why the filters keep no event: a reversed range, the dates against the
        dropdowns' choices, or the choices themselves."""
        start, end = self.start_pick.value, self.end_pick.value
        if start is not None and end is not None and start > end:
            return (f"the date range is reversed: from {start} is after to {end}; swap "
                    "the two dates")
        chosen = {c: p.value for c, p in self.picks().items() if p.value != ALL}
        undated = filter_events(self.frame, **chosen)
        picks = ", ".join(f"{c} {v}" for c, v in chosen.items())
        if (start is not None or end is not None) and not undated.empty:
            return (f"no events match these dates: {picks or 'the frame'} has "
                    f"{len(undated):,} events, none from {start or 'the start'} to "
                    f"{end or 'the end'}; widen the dates (your choices are kept)")
        return "no events match these filters: widen one (pick (all) or other dates)"

    def apply_filters(self) -> None:
        """Narrow the choices, then refresh the run list, the summary and the outcome
        plot for the filters."""
        self.message.value = ""
        self.narrow_choices()
        kept = self.filtered()
        runs = sorted(kept["run"].astype(str).unique()) if "run" in kept.columns else []
        if kept.empty:
            self.summary.value = note_html(self._nothing_kept())
            self.outcome_plot.value = ""
        else:
            self.summary.value = note_html(
                f"{len(kept):,} events in {len(runs):,} runs match"
                + (f"; the list shows the first {self.max_runs}"
                   if len(runs) > self.max_runs else ""))
            self.outcome_plot.value = self._outcome_plot(runs)
        current = self.run_list.value
        self._updating = True
        try:
            self.run_list.options = runs[: self.max_runs]
            self.run_list.value = current if current in self.run_list.options else (
                runs[0] if runs else None)
        finally:
            self._updating = False
        self.show_run()

    def _outcome_plot(self, runs: list[str]) -> str:
        from ..ledger.plots import plot_rounds

        # Outcomes of the runs kept, counted on all their events (rounds need verdicts).
        whole = self.frame[self.frame["run"].astype(str).isin(runs)]
        outcomes = run_outcomes(whole)
        if outcomes["rounds"].dropna().empty:
            return note_html("(no run here has rounds to plot)")
        return svg_image(lambda ax: plot_rounds(outcomes, ax=ax), (4.6, 2.7),
                         "rounds per run")

    def show_run(self) -> None:
        """The picked run's timeline and its events (those the filters keep)."""
        run = self.run_list.value
        events = filter_events(self.filtered(), run=run) if run is not None else None
        # No run, or none of its events kept: nothing to draw. Decided from the filters,
        # not from the run list: the browser may echo the list's old value after the
        # filters emptied it (seen in CI: a timeline drawn beside "no events match").
        if run is None or events is None or events.empty or run not in self.run_list.options:
            self.timeline_plot.value = ""
            self.events_view.value = note_html("no events match: no run to show")
            return
        from ..ledger.analyses import timeline
        from ..ledger.plots import plot_timeline

        whole = self.frame[self.frame["run"].astype(str) == run]
        roles = timeline(whole, run)["role"].nunique() if len(whole) else 0
        self.timeline_plot.value = (
            svg_image(lambda ax: plot_timeline(whole, run, ax=ax),
                      (8.6, 0.9 + 0.32 * max(roles, 1)), f"timeline of {run}")
            if roles else note_html(f"(run {run} has no acts to draw)"))
        rows: list[dict[str, Any]] = [{str(k): v for k, v in r.items()}
                                      for r in events.to_dict("records")]
        for row in rows:
            ms = row.get("duration_ms")
            row["duration"] = format_duration(None if ms is None or pd.isna(ms)
                                              else pd.Timedelta(ms, unit="ms"))
            ts = row.get("ts")
            if isinstance(ts, pd.Timestamp):
                row["ts"] = ts.tz_convert("UTC").strftime("%Y-%m-%d %H:%M:%S")
        columns = [c for c in EVENT_COLUMNS if c in events.columns
                   or (c == "duration" and "duration_ms" in events.columns)]
        self.events_view.value = (f"<b>{len(events)} events of {html.escape(run)}</b>"
                                  + table_html(rows, columns, "no events match"))

    def __repr__(self) -> str:
        return f"<LedgerExplorer {len(self.frame):,} events, run {self.run_list.value}>"
