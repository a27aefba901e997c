"""DrawingView (issue 24): a window on a drawing you pan, zoom, search and focus, and
`reveal_html`, which keeps a loop's current node in view (the Stepper draws with it)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from crewbook.draw import Edge, GraphModel, Node
from crewbook.widgets import DrawingView, Stepper
from crewbook.widgets.view import Viewport, reveal_html

pytestmark = pytest.mark.requires_dot


def wide(n: int = 60) -> GraphModel:
    """A chain of `n` nodes, left to right: far wider than any window."""
    model = GraphModel("wide")
    for i in range(n):
        model.add_node(Node(f"n{i:02d}", rank=i))
        if i:
            model.add_edge(Edge(f"n{i - 1:02d}", f"n{i:02d}"))
    return model


def view_box(html: str) -> tuple[float, ...]:
    found = re.search(r'<svg\b[^>]*viewBox="([-\d.]+) ([-\d.]+) ([-\d.]+) ([-\d.]+)"', html)
    assert found is not None, html[:300]
    return tuple(float(x) for x in found.groups())


def test_the_view_opens_on_the_whole_drawing_then_pans_and_zooms() -> None:
    view = DrawingView(wide(), window=(400, 300))  # too small for all 60 nodes at 1:1
    assert view.port is not None
    assert view.port.fits(), "the overview: all of it in the window"
    assert view.zoom.value < 1.0
    assert "overview · whole drawing" in view.status.value
    assert set(view.search.options) == {f"n{i:02d}" for i in range(60)}
    view.buttons["actual"].click()
    assert view.zoom.value == 1.0
    assert not view.port.fits()
    start = view_box(view.drawing.value)
    view.buttons["left"].click()  # the window is centred: it can move left
    moved = view_box(view.drawing.value)
    assert moved[0] < start[0]
    assert moved[2:] == start[2:]
    view.buttons["zoom_in"].click()
    assert view.zoom.value == pytest.approx(1.25, abs=0.01)
    assert view_box(view.drawing.value)[2] < moved[2], "zooming in shows less"
    view.buttons["fit"].click()
    assert view.port.fits()


def test_search_focuses_on_a_neighbourhood_and_back() -> None:
    view = DrawingView(wide(), window=(300, 200))
    view.depth.value = 1
    view.search.value = "n30"
    assert view.focused == "n30"
    assert view.port is not None
    assert set(view.port.positions) == {"n29", "n30", "n31", "more:n29:in", "more:n31:out"}
    assert view.port.visible("n30")
    assert "<b>n30</b> within 1 edges" in view.status.value
    assert view.zoom.value == 1.0
    view.search.value = "N300"  # a typo: a red line naming the closest ids, nothing lost
    closest = "no node &#x27;N300&#x27;; closest: &#x27;n00&#x27;, &#x27;n30&#x27;;"
    assert closest in view.message.value
    assert view.focused == "n30"
    view.buttons["overview_button"].click()
    assert view.focused is None
    assert view.message.value == ""
    assert len(view.port.positions) == 60
    view.reveal("n59")
    assert view.port.visible("n59")
    assert not view.port.visible("n00")
    assert repr(view) == "<DrawingView of GraphModel at zoom 1.0>"


def test_reveal_html_keeps_the_emphasised_node_in_view() -> None:
    model = wide()
    model.nodes["n50"] = Node("n50", rank=50, emphasis=True)
    html = reveal_html(lambda: model, window=(400, 300))
    assert "the part around &#x27;n50&#x27;" in html or "the part around 'n50'" in html
    port = Viewport(html[html.index("<svg"):])
    x, _y, width, _h = view_box(html)
    assert x <= port.positions["n50"][0] <= x + width
    assert x > 0, "not the start of the drawing"


def test_a_loop_a_little_wider_than_the_window_is_shown_whole(pipeline_loop: Any) -> None:
    stepper = Stepper(pipeline_loop)
    html = stepper.drawing.value
    box = view_box(html)
    port = Viewport(html[html.index("<svg"):])
    assert box[2] == pytest.approx(port.size[0]), "all of it, where the loop finishes too"
    assert box[3] == pytest.approx(port.size[1])
    for end in ("done", "escalated"):
        assert box[0] <= port.positions[end][0] <= box[0] + box[2]
