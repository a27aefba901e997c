"""SchemaExplorer, LedgerExplorer and DrawingView, driven through their controls."""

from __future__ import annotations

import datetime
from pathlib import Path

import pandas as pd
import pytest

import crewbook
from crewbook.draw import GraphModel, Node
from crewbook.ledger.synthetic import write_history
from crewbook.widgets import DrawingView, LedgerExplorer, SchemaExplorer
from crewbook.widgets.ledger_explorer import ALL, filter_events


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
    assert bytes(explorer.outcome_plot.value).startswith(b"\x89PNG")
    timeline = bytes(explorer.timeline_plot.value)
    assert timeline.startswith(b"\x89PNG")
    explorer.run_list.value = runs[1]
    assert bytes(explorer.timeline_plot.value) != timeline
    assert f"events of {runs[1]}" in explorer.events_view.value
    loop = explorer.loop_pick.options[1]
    plot = bytes(explorer.outcome_plot.value)
    explorer.loop_pick.value = loop
    assert set(explorer.run_list.options) == set(history[history.loop == loop].run.astype(str))
    assert bytes(explorer.outcome_plot.value) != plot
    explorer.start_pick.value = datetime.date(2100, 1, 1)
    assert explorer.run_list.options == ()
    assert "no run matches" in explorer.events_view.value
    assert explorer.message.value == ""
    assert repr(explorer).startswith(f"<LedgerExplorer {len(history):,} events")


def test_drawing_view_zooms(tmp_path: Path) -> None:
    model = GraphModel("g")
    model.add_node(Node("a", "a"))
    view = DrawingView(model)
    first = view.drawing.value
    view.zoom.value = 0.5
    assert view.drawing.value != first or "No drawing" in first
    assert repr(view) == "<DrawingView of GraphModel at zoom 0.5>"
