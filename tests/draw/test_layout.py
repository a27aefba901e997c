"""Drawings laid out to be whole and legible at a cell's width (draw/layout.py): a long
chain folds into rows, displays cap width and height, the 1:1 view one click away."""

from __future__ import annotations

import base64
import re

import pytest

from crewbook.draw import Edge, GraphModel, Node, render_svg, to_dot, to_graphviz
from crewbook.draw.display import drawing_bundle
from crewbook.draw.layout import (
    CELL_WIDTH,
    FIT_HEIGHT,
    MIN_TEXT_PX,
    fit_layout,
    fold_rows,
    node_positions,
)
from crewbook.draw.model import closest

pytestmark = pytest.mark.requires_dot


def loop_run(acts: int = 10, back: int | None = 4) -> GraphModel:
    """A run as a loop draws it: `acts` labelled acts in a chain, left to right, with a
    detail line and labelled moves; the move into act `back` is a dashed send-back."""
    model = GraphModel("run", title="a long run", legend=(("done", "acted"),))
    for i in range(acts):
        model.add_node(Node(f"act-{i}", label=f"developer {i}", kind="role", status="done",
                            detail=f"version {i}: 2 files changed", rank=i))
        if i:
            model.add_edge(Edge(f"act-{i - 1}", f"act-{i}", "flow", label="delegate → qa",
                                style="dashed" if i == back else "solid"))
    return model


def text_px(svg: str, shown_width: float) -> float:
    """The smallest text on screen when `svg` is shown `shown_width` px wide: its
    smallest font-size (drawing units) times shown px per unit of its viewBox."""
    box = re.search(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) [\d.]+"', svg)
    assert box is not None
    sizes = [float(x) for x in re.findall(r'font-size="([\d.]+)"', svg)]
    return min(sizes) * shown_width / float(box.group(1))


def natural(svg: str) -> tuple[float, float]:
    found = re.search(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"', svg)
    assert found is not None
    return float(found.group(1)) * 4 / 3, float(found.group(2)) * 4 / 3


def shown(svg: str) -> float:
    """The width a cell shows `svg` at: 1:1, or shrunk to the cell and the height cap."""
    width, height = natural(svg)
    return min(width, CELL_WIDTH, width * FIT_HEIGHT / height)


def test_a_long_chain_is_folded_into_rows_legible_at_the_cell_width() -> None:
    model = loop_run()
    plain = render_svg(to_dot(model))
    assert text_px(plain, shown(plain)) < MIN_TEXT_PX, "left to right, it is unreadable"
    fitted = fit_layout(model)
    assert fitted.rows, "folded"
    assert sorted(n for row in fitted.rows for n in row) == sorted(model.nodes)
    svg = render_svg(to_dot(fitted))
    assert natural(svg)[0] < natural(plain)[0] / 2
    assert text_px(svg, shown(svg)) >= MIN_TEXT_PX
    assert to_dot(fit_layout(loop_run())) == to_dot(fitted), "the same bytes every time"


def test_a_row_starts_at_the_send_back() -> None:
    model = loop_run(10, back=5)
    positions = node_positions(render_svg(to_dot(model)))
    rows = fold_rows(model, positions, 2)
    assert [row[0] for row in rows] == ["act-0", "act-5"]


def test_a_small_drawing_keeps_its_layout() -> None:
    model = GraphModel("small", legend=(("done", "acted"),))
    for i in range(4):
        model.add_node(Node(f"n{i}", status="done", rank=i))
        if i:
            model.add_edge(Edge(f"n{i - 1}", f"n{i}"))
    assert fit_layout(model) is model
    assert "rank=same" not in to_dot(fit_layout(model))


def img_width(html: str) -> tuple[float, str]:
    img = re.search(r"<img[^>]*(?:style='width:|width=')(\d+)[^>]*base64,([A-Za-z0-9+/=]+)", html)
    assert img is not None, html[:300]
    return float(img.group(1)), base64.b64decode(img.group(2)).decode("utf-8")


def test_displays_cap_the_width_and_keep_the_1_to_1_view_a_click_away() -> None:
    wide = loop_run(14, back=None)
    for html in (drawing_bundle(wide)[0],
                 to_graphviz(wide)._repr_mimebundle_()["text/html"]):
        width, svg = img_width(html)
        assert width <= CELL_WIDTH
        assert width * natural(svg)[1] / natural(svg)[0] <= FIT_HEIGHT + 1
        assert text_px(svg, width) >= MIN_TEXT_PX
    plain = to_graphviz(wide, fit=False)._repr_mimebundle_()["text/html"]
    width, svg = img_width(plain)
    assert width == CELL_WIDTH < natural(svg)[0], "even unfolded, no wider than the cell"
    assert "<details class='crewbook-one-to-one'>" in plain
    one = plain[plain.index("<details"):]
    assert f"width='{round(natural(svg)[0])}'" in one, "at 1:1 inside the details"


def test_suggestions_by_edit_distance() -> None:
    ids = [f"a{i:03d}" for i in range(600)]
    assert closest("a45O", ids)[0] == "a450"
    assert closest("A450", ids) == ["a450", *closest("A450", ids)[1:]]
    assert closest("zzzzzz", ids) == []


def test_a_dense_graph_opens_on_folders_that_read() -> None:
    model = GraphModel("dense")
    for i in range(120):  # each node needs the three before it: a wide, tangled knot
        model.add_node(Node(f"a{i:03d}", group=f"area-{i // 40}", rank=i))
        for back in (1, 2, 3):
            if i >= back:
                model.add_edge(Edge(f"a{i - back:03d}", f"a{i:03d}"))
    html, svg = drawing_bundle(model)
    assert svg is not None
    assert "120 of 120 nodes collapsed into 3 folders" in html
    width, svg = img_width(html)
    assert text_px(svg, width) >= MIN_TEXT_PX
    plain = render_svg(to_dot(model))
    assert text_px(plain, shown(plain)) < MIN_TEXT_PX, "whole, it cannot be read"
