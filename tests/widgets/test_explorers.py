"""SchemaExplorer, LedgerExplorer and DrawingView, driven through their controls."""

from __future__ import annotations

import base64
import datetime
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import crewbook
from crewbook.draw import GraphModel, Node
from crewbook.ledger.synthetic import write_history
from crewbook.widgets import DrawingView, LedgerExplorer, SchemaExplorer
from crewbook.widgets._common import highlighted
from crewbook.widgets.ledger_explorer import ALL, filter_events, svg_image


@pytest.fixture
def project() -> crewbook.Project:
    return crewbook.Project(crewbook.example_project())


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    folder = tmp_path_factory.mktemp("history")
    write_history(folder / "h", runs=12, seed=3)
    return crewbook.read_ledger(folder / "h")


def test_schema_explorer_shows_schema_artifact_and_change(project: crewbook.Project) -> None:
    explorer = SchemaExplorer(project)
    assert explorer.schema_pick.value == project.schema().name
    assert explorer.artifact_pick.options == tuple(project.schema().order)
    drawing = explorer.schema_drawing.value
    assert drawing
    other = next(n for n in explorer.schema_names if n != explorer.schema_pick.value)
    explorer.schema_pick.value = other
    assert explorer.schema_drawing.value != drawing
    assert explorer.artifact_pick.options == tuple(project.schema(other).order)
    assert explorer.message.value == ""


def test_schema_explorer_artifact_details(project: crewbook.Project) -> None:
    explorer = SchemaExplorer(project)
    explorer.schema_pick.value = "lite"
    schema = project.schema("lite")
    with_role = next(a for a in schema.artifacts if a.role is not None and a.role.done_when)
    explorer.artifact_pick.value = with_role.id
    view = explorer.artifact_view.value
    assert with_role.role is not None
    assert with_role.role.id in view
    assert "done_when" in view
    assert all(c in view for c in with_role.role.done_when)
    template = schema.template_text(with_role.id)
    if template:
        assert template.strip().splitlines()[0].replace("&", "&amp;")[:20] in view


def test_schema_explorer_change_status_and_tasks(project: crewbook.Project) -> None:
    change = project.change("add-csv-export")
    (change.folder / "tasks.md").write_text("## 1. Export\n\n- [x] 1.1 Writer\n- [ ] 1.2 Button\n")
    explorer = SchemaExplorer(project)
    assert explorer.change_pick.value == "add-csv-export"
    assert "1.2" in explorer.tasks_view.value
    assert "Button" in explorer.tasks_view.value
    assert explorer.change_drawing.value


def test_filter_events(history: pd.DataFrame) -> None:
    assert filter_events(history).equals(history)
    assert filter_events(history, loop=ALL, role=None).equals(history)
    crew = filter_events(history, loop="crew", kind="verdict")
    assert len(crew) == ((history.loop == "crew") & (history.kind == "verdict")).sum()
    day = history.ts.min().date()
    first_day = filter_events(history, start=day, end=day)
    assert len(first_day) == (history.ts.dt.date == day).sum()
    assert filter_events(history, start=datetime.date(2100, 1, 1)).empty


def test_ledger_explorer_filters_update_plots_and_runs(history: pd.DataFrame) -> None:
    explorer = LedgerExplorer(history)
    runs = explorer.run_list.options
    assert len(runs) == history.run.nunique()
    assert "data:image/svg+xml;base64," in explorer.outcome_plot.value
    timeline = explorer.timeline_plot.value
    assert "data:image/svg+xml;base64," in timeline
    explorer.run_list.value = runs[1]
    assert explorer.timeline_plot.value != timeline
    assert f"events of {runs[1]}" in explorer.events_view.value
    loop = explorer.loop_pick.options[1]
    plot = explorer.outcome_plot.value
    explorer.loop_pick.value = loop
    assert set(explorer.run_list.options) == set(history[history.loop == loop].run.astype(str))
    assert explorer.outcome_plot.value != plot
    explorer.start_pick.value = datetime.date(2100, 1, 1)
    assert explorer.run_list.options == ()
    assert "no events match" in explorer.summary.value
    assert "no events match" in explorer.events_view.value
    assert "<img" not in explorer.outcome_plot.value + explorer.timeline_plot.value, \
        "no empty (broken) image"
    assert explorer.message.value == ""
    assert repr(explorer).startswith(f"<LedgerExplorer {len(history):,} events")


def test_ledger_explorer_filters_narrow_each_other(history: pd.DataFrame) -> None:
    explorer = LedgerExplorer(history)
    all_roles = set(history.role.dropna().astype(str))
    explorer.loop_pick.value = "coordinator"
    coordinator = history[history.loop == "coordinator"]
    assert set(explorer.role_pick.options) == {ALL, *coordinator.role.dropna().astype(str)}
    assert set(explorer.role_pick.options) != {ALL, *all_roles}, "the choices narrowed"
    explorer.role_pick.value = "qa"
    both = coordinator[coordinator.role == "qa"]
    assert len(explorer.filtered()) == len(both) > 0
    assert f"{len(both):,} events in {both.run.nunique():,} runs match" in \
        explorer.summary.value
    assert set(explorer.run_list.options) == set(both.run.astype(str))
    assert set(explorer.kind_pick.options) == {ALL, *both.kind.astype(str)}
    # the loop choices are those where qa acts; going back to (all) widens again
    assert set(explorer.loop_pick.options) == {
        ALL, *history[history.role == "qa"].loop.astype(str)}
    explorer.loop_pick.value = ALL
    explorer.role_pick.value = ALL
    assert set(explorer.role_pick.options) == {ALL, *all_roles}


def test_ledger_explorer_dates_that_match_nothing_keep_the_choices(
        history: pd.DataFrame) -> None:
    """Dates that keep none of the chosen events leave loop, role and kind as chosen:
    moving the dates back shows those events again, not every loop's."""
    explorer = LedgerExplorer(history)
    explorer.role_pick.value = "analyst"           # only the crew has analysts
    assert explorer.loop_pick.options == (ALL, "crew")
    analyst = history[history.role == "analyst"]
    assert set(explorer.kind_pick.options) == {ALL, *analyst.kind.astype(str)}
    kind = explorer.kind_pick.options[-1]
    explorer.kind_pick.value = kind
    explorer.loop_pick.value = "crew"
    chosen = analyst[(analyst.kind == kind) & (analyst.loop == "crew")]
    assert 0 < len(chosen) < len(history)
    picks = (explorer.loop_pick, explorer.role_pick, explorer.kind_pick)
    explorer.start_pick.value = datetime.date(2100, 1, 1)   # nothing left
    assert [p.value for p in picks] == ["crew", "analyst", kind], "the choices are kept"
    assert explorer.role_pick.options == (ALL, "analyst")
    assert explorer.filtered().empty
    assert "no events match these dates" in explorer.summary.value
    assert f"{len(chosen):,} events" in explorer.summary.value
    explorer.start_pick.value = None
    assert len(explorer.filtered()) == len(chosen)
    assert f"{len(chosen):,} events in {chosen.run.nunique():,} runs match" in \
        explorer.summary.value
    assert len(explorer.role_pick.options) > 2, "the choices widen again"


def test_ledger_explorer_names_a_reversed_range(history: pd.DataFrame) -> None:
    explorer = LedgerExplorer(history)
    first = history.ts.min().tz_convert("UTC").date()
    explorer.start_pick.value = first + datetime.timedelta(days=2)
    explorer.end_pick.value = first
    assert "the date range is reversed" in explorer.summary.value
    assert "swap" in explorer.summary.value
    explorer.end_pick.value = None
    assert "reversed" not in explorer.summary.value


def test_ledger_explorer_durations_read_and_fit(history: pd.DataFrame) -> None:
    explorer = LedgerExplorer(history)
    view = explorer.events_view.value
    assert "duration_ms" not in view
    assert ">duration<" in view
    assert re.search(r">\d+m \d\ds<", view), "durations as minutes and seconds"
    assert "days" not in view
    assert "+00:00" not in view
    assert explorer.layout.max_height == "780px"
    assert explorer.layout.overflow == "auto"
    assert explorer.events_view.layout.overflow == "auto"
    width = re.search(r"width='(\d+)'", explorer.timeline_plot.value)
    assert width is not None
    assert int(width.group(1)) <= 900, "drawn at display size"
    svg = base64.b64decode(explorer.timeline_plot.value.split("base64,")[1].split("'")[0])
    assert svg.lstrip().startswith((b"<?xml", b"<svg"))




def test_schema_explorer_picks_out_the_artifact(project: crewbook.Project) -> None:
    explorer = SchemaExplorer(project)
    first = explorer.artifact_pick.value
    drawn = explorer.schema_drawing.value
    assert "#1565c0" in drawn, "the picked artifact has the blue border"
    other = explorer.artifact_pick.options[-1]
    assert other != first
    explorer.artifact_pick.value = other
    assert explorer.schema_drawing.value != drawn
    model = highlighted(project.schema().graph_model(), other)
    assert model.nodes[other].emphasis
    assert dict(model.nodes[other].attrs)["color"] == "#1565c0"
    assert not project.schema().graph_model().nodes[other].emphasis, "the model is a copy"
    assert f"<title>{other}</title>" in explorer.schema_drawing.value or "crewbook-nodraw" \
        in explorer.schema_drawing.value


def test_drawing_view_zooms(tmp_path: Path) -> None:
    model = GraphModel("g")
    model.add_node(Node("a", "a"))
    view = DrawingView(model)
    first = view.drawing.value
    view.zoom.value = 0.5
    assert view.drawing.value != first or "No drawing" in first
    assert repr(view) == "<DrawingView of GraphModel at zoom 0.5>"


def test_svg_image_is_stable_and_sized() -> None:
    def draw(ax: Any) -> None:
        ax.plot([0, 1, 2], [2, 0, 1])

    first = svg_image(draw, (2.5, 1.5), "a line")
    assert first == svg_image(draw, (2.5, 1.5), "a line"), "same drawing, same bytes"
    assert "width='240' height='144'" in first
    assert "alt='a line'" in first


def test_widget_tables_wrap_only_prose() -> None:
    from crewbook.widgets._common import table_html

    rows = [{"run": "crew-2", "summary": "lint: fail (exit 1, 0.0 s): python3 -c 'import sys'"}]
    shown = table_html(rows, ["run", "summary"])
    run_cell, summary_cell = re.findall(r"<td style='([^']*)'>", shown)
    assert "white-space:nowrap" in run_cell  # an id never breaks at its hyphen
    assert "white-space:normal" in summary_cell


def test_a_run_the_filters_no_longer_keep_is_not_drawn(history: pd.DataFrame) -> None:
    """The run list may still hold a run when the filters already keep none of its
    events (the browser echoed the list's old value; seen in CI): no timeline then."""
    from datetime import date

    explorer = LedgerExplorer(history)
    assert explorer.run_list.value is not None
    assert "<img" in explorer.timeline_plot.value
    explorer._updating = True  # the date arrives before the list is refreshed
    explorer.start_pick.value = date(2100, 1, 1)
    explorer._updating = False
    explorer.show_run()
    assert explorer.timeline_plot.value == ""
    assert "no events match" in explorer.events_view.value


def test_one_widgets_callbacks_run_one_at_a_time() -> None:
    """Two callbacks of one widget from two threads never interleave (a kernel may run
    two browser messages on two threads)."""
    import threading
    import time

    import ipywidgets as w

    from crewbook.widgets._common import guarded

    guard = guarded(w.Output(), w.HTML())
    seen: list[str] = []

    def slow(name: str) -> None:
        seen.append(f"{name} starts")
        time.sleep(0.05)
        seen.append(f"{name} ends")

    first = threading.Thread(target=guard(slow), args=("a",))
    first.start()
    time.sleep(0.01)
    guard(slow)("b")
    first.join()
    assert seen == ["a starts", "a ends", "b starts", "b ends"]
