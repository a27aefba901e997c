"""DrawingView's navigation: pans by a fraction of the window on both axes and never
past the edges, a zoom slider and status in one unit, a search over ids, labels and
folder names whatever the case, suggestions by edit distance."""

from __future__ import annotations

import re
from typing import Any

import pytest

from crewbook.delivery import Built, ChangeSummary, Delegate, Judgement, Plan
from crewbook.draw import Edge, GraphModel, Node, options
from crewbook.draw.layout import CELL_WIDTH, MIN_TEXT_PX
from crewbook.widgets import DrawingView, Stepper
from crewbook.widgets.view import Viewport

MIN = 60_000  # a minute, in the ms reports carry

pytestmark = pytest.mark.requires_dot


def grid(rows: int = 12, cols: int = 12) -> GraphModel:
    """Columns of nodes left to right, each column a stack of `rows`: wide and tall."""
    model = GraphModel("grid")
    for c in range(cols):
        for r in range(rows):
            model.add_node(Node(f"n{c:02d}-{r:02d}", label=f"Node {c}.{r}", rank=c,
                                group=f"area-{c // 4}"))
            if c:
                model.add_edge(Edge(f"n{c - 1:02d}-{r:02d}", f"n{c:02d}-{r:02d}"))
    return model


def box(view: DrawingView) -> tuple[float, ...]:
    found = re.search(r'viewBox="([-\d.]+) ([-\d.]+) ([-\d.]+) ([-\d.]+)"', view.drawing.value)
    assert found is not None
    return tuple(float(x) for x in found.groups())


def test_pans_on_both_axes_by_a_third_of_the_window_and_stays_inside() -> None:
    view = DrawingView(grid(), window=(300, 200))
    view.actual_size()
    _x, y, width, height = box(view)
    view.buttons["down"].click()
    assert box(view)[1] == pytest.approx(y + height / 3, abs=0.5)
    view.buttons["up"].click()
    assert box(view)[1] == pytest.approx(y, abs=0.5)
    for _ in range(50):  # far past the right edge
        view.buttons["right"].click()
    at_edge = box(view)[0]
    view.buttons["left"].click()
    assert box(view)[0] == pytest.approx(at_edge - width / 3, abs=0.5), "one click back"


def test_zoom_slider_and_status_say_the_same_percentage() -> None:
    big = GraphModel("strip")
    for i in range(120):
        big.add_node(Node(f"s{i:03d}", rank=i))
    view = DrawingView(big, window=(300, 200))
    assert view.port is not None
    assert view.zoom.readout_format.endswith("%")
    assert view.zoom.value == pytest.approx(view.port.zoom, abs=1e-4)
    shown = re.search(r"at (\d+)%", view.status.value)
    assert shown is not None
    assert int(shown.group(1)) == round(view.zoom.value * 100)


def test_search_ignores_case_and_finds_labels_and_folders() -> None:
    view = DrawingView(grid())
    view.search.value = "N03-04"
    assert view.focused == "n03-04"
    view.overview()
    view.search.value = "node 5.6"
    assert view.focused == "n05-06"
    assert "area-1" in view.search.options
    view.overview()
    assert view.resolve("AREA-1") == "n04-00", "a folder: its first node (rank, then id)"


def test_search_on_a_collapsed_folder_centres_its_summary() -> None:
    model = grid()
    with options.override(collapse_threshold=20):
        view = DrawingView(model)
        assert view.port is not None
        assert "group:area-2" in view.port.positions
        view.search.value = "Area-2"
        assert view.focused is None, "stays on the overview"
        assert view.port.visible("group:area-2")


def test_a_typo_suggests_by_edit_distance() -> None:
    model = GraphModel("ids")
    for i in range(600):
        model.add_node(Node(f"a{i:03d}"))
    view = DrawingView(model)
    view.search.value = "a45O"
    assert "closest: &#x27;a450&#x27;" in view.message.value


def test_the_stepper_shows_a_long_run_whole_and_legible(coordinator_loop: Any) -> None:
    loop = coordinator_loop
    loop.report(Plan(("a Download CSV button", "the CSV has the table's columns"),
                     summary="add an export endpoint and a button", duration_ms=MIN))
    for version, verdict in ((1, "fail"), (2, "fail"), (3, "pass")):
        loop.report(Delegate("developer", f"version {version}"))
        loop.report(Built(("app/export.py",), change=ChangeSummary.of(
            {"app/export.py": (10 * version, 0)}), duration_ms=MIN))
        loop.report(Delegate("qa", f"verify version {version}"))
        findings = ("no header row",) if verdict == "fail" else ()
        loop.report(Judgement("qa", verdict, findings=findings, duration_ms=MIN))
    assert len(loop.graph_model()) >= 8, "a long run: 8 acts or more"
    drawing = Stepper(loop).drawing.value
    root = re.search(r'<svg width="([\d.]+)px" height="([\d.]+)px"\s+viewBox="([-\d.]+) '
                     r'([-\d.]+) ([\d.]+) ([\d.]+)"', drawing)
    assert root is not None, drawing[:300]
    width, _height, _x, _y, box_width, _box_height = (float(v) for v in root.groups())
    port = Viewport(drawing[drawing.index("<svg"):])
    assert (box_width, float(root.group(6))) == pytest.approx(port.size), "all of it"
    assert width <= CELL_WIDTH
    fonts = [float(x) for x in re.findall(r'font-size="([\d.]+)"', drawing)]
    assert min(fonts) * width / box_width >= MIN_TEXT_PX


def test_the_fit_of_a_long_chain_is_whole_and_legible() -> None:
    chain = GraphModel("chain")
    for i in range(16):
        chain.add_node(Node(f"act-{i}", label=f"developer {i}", detail="version 2: 1 file",
                            rank=i))
        if i:
            chain.add_edge(Edge(f"act-{i - 1}", f"act-{i}", label="delegate → qa"))
    view = DrawingView(chain)
    assert view.port is not None
    assert view.port.fits(), "all of it"
    assert "overview · whole drawing" in view.status.value
    root = re.search(r'<svg width="([\d.]+)px"', view.drawing.value)
    assert root is not None
    fonts = [float(x) for x in re.findall(r'font-size="([\d.]+)"', view.drawing.value)]
    assert float(root.group(1)) <= CELL_WIDTH
    assert min(fonts) * float(root.group(1)) / view.port.view_box()[2] >= MIN_TEXT_PX
