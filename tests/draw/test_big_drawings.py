"""Big drawings (issue 24): a neighbourhood (`focus`, `depth`), overviews that fit the
cell, displays of a 2,000-artifact schema that stay small, mermaid beside the SVG."""

from __future__ import annotations

import base64
import importlib.util
import itertools
import re
from pathlib import Path
from typing import Any

import pytest

import crewbook
from crewbook.draw import Edge, GraphModel, Node, to_mermaid
from crewbook.draw.cards import FIT_HEIGHT, head_tail, short_list, svg_size
from crewbook.draw.layout import CELL_WIDTH, MIN_TEXT_PX
from crewbook.errors import NotFoundError, UsageError

from .test_mermaid import EDGE_LINE, NODE_LINE, parse_edges, parse_nodes

ROOT = Path(__file__).parents[2]


def chain(n: int) -> GraphModel:
    """a0 → a1 → … → a(n-1), plus a fan into a5 from b0…b11."""
    model = GraphModel("chain", "a chain")
    for i in range(n):
        model.add_node(Node(f"a{i}", rank=i))
        if i:
            model.add_edge(Edge(f"a{i - 1}", f"a{i}"))
    for j in range(12):
        model.add_node(Node(f"b{j}", rank=0))
        model.add_edge(Edge(f"b{j}", "a5"))
    return model


def test_focus_keeps_the_neighbourhood_and_counts_what_it_leaves_out() -> None:
    out = chain(20).focus("a10", depth=2)
    kept = {n.id for n in out.nodes.values() if n.kind != "note"}
    assert kept == {"a8", "a9", "a10", "a11", "a12"}
    assert out.nodes["a10"].emphasis
    assert ("peripheries", "2") in out.nodes["a10"].attrs, "the focused node is marked"
    stubs = {n.id: n.text for n in out.nodes.values() if n.kind == "note"}
    assert stubs == {"more:a8:in": "+1 more", "more:a12:out": "+1 more"}
    assert {(e.source, e.target) for e in out.edges if e.kind == "summary"} == {
        ("more:a8:in", "a8"), ("a12", "more:a12:out")}
    assert "5 of 32 nodes, 27 left out" in out.note
    fan = chain(20).focus("a5", depth=0)
    assert fan.nodes["more:a5:in"].text == "+13 more", "a4 and the 12 b's"
    assert len(chain(20).focus("a5", depth=1)) == 17, "a5, a4, a6, b0…b11, 2 stubs"


def test_focus_on_an_unknown_node_names_the_closest() -> None:
    with pytest.raises(NotFoundError, match=r"no node 'a100'; closest: 'a10'"):
        chain(20).focus("a100")
    with pytest.raises(UsageError, match="depth"):
        chain(20).focus("a1", depth=-1)


@pytest.mark.requires_dot
def test_every_drawable_takes_focus_and_depth(tour: Path) -> None:
    project = crewbook.Project(tour)
    loop = crewbook.load_pipeline(ROOT / "tests/data/pipelines/role_pipeline.toml").loop(
        workspace=ROOT / "tests/data/pipelines/workspace")
    things: list[Any] = [project.schema("lite"), project.status("add-csv-export"), loop]
    for thing in things:
        model = thing.graph_model()
        first = model.sorted_nodes()[0].id
        assert f"around {first!r} within 1 edge" in thing.dot(focus=first)
        nodes = [n for n in parse_nodes(thing.mermaid(focus=first, depth=1))
                 if not n.startswith("legend:")]
        assert first in nodes
        assert len(nodes) <= len(model) + 2
        drawing = thing.graph(focus=first, depth=0)
        assert "peripheries" in drawing.source
        with pytest.raises(NotFoundError, match="closest"):
            thing.svg(focus=first + "x")


def test_mermaid_of_odd_ids_is_one_statement_per_line() -> None:
    model = GraphModel("odd")
    ids = ["end", "a-b", 'say "hi"', "<script>", "x:::y", "graph", "été/1", "a b", "more:x:in"]
    for node_id in ids:
        model.add_node(Node(node_id, detail="#1 & <b>"))
    for a, b in itertools.pairwise(ids):
        model.add_edge(Edge(a, b, label='"|x|"'))
    text = to_mermaid(model.focus("x:::y", depth=2))
    lines = text.splitlines()
    assert lines[0] == "flowchart LR"
    statement = re.compile(r"^\s*(%%.*|classDef \w+ [\w:#,;.\- ]+|class [\w,]+ \w+|"
                           r"linkStyle \d+ [\w:#,.\- ]+|subgraph n_\w+\[\"[^\"]*\"\]|end)$")
    for line in lines[1:]:
        assert NODE_LINE.match(line) or EDGE_LINE.match(line) or statement.match(line), line
    assert set(parse_nodes(text)) >= {"<script>", "x:::y", "graph", "été/1"}
    assert ("graph", "été/1", "-->", "#quot;|x|#quot;") in parse_edges(text)


def test_head_tail_and_short_lists() -> None:
    assert head_tail(list(range(16))) == (list(range(16)), 0, [])
    assert head_tail(list(range(100))) == (list(range(10)), 85, [95, 96, 97, 98, 99])
    assert short_list([f"x{i}" for i in range(30)], " → ", head=2, tail=1) == \
        "x0 → x1 → … (27 more) … → x29"


@pytest.fixture(scope="module")
def schema_2000(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A schema of 2,000 artifacts written by benchmarks/gen_schema.py (fixed seed),
    shared by the tests of this module (writing and loading it takes about a second)."""
    spec = importlib.util.spec_from_file_location("gen_schema", ROOT / "benchmarks/gen_schema.py")
    assert spec is not None
    assert spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return crewbook.load_schema(gen.write(2000, tmp_path_factory.mktemp("gen")))


@pytest.mark.slow  # writes and loads 2,000 artifacts, dot lays out 40 folders: about 3 s
@pytest.mark.requires_dot
def test_a_2000_artifact_schema_displays_small_and_on_an_overview(schema_2000: Any) -> None:
    schema = schema_2000
    bundle = schema._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", "image/svg+xml", "text/vnd.mermaid"}
    size = sum(len(v.encode("utf-8")) for v in bundle.values())
    assert size < 300_000, f"the whole display is {size:,} bytes"
    html = bundle["text/html"]
    assert "… 1,985 more artifacts …" in html, "first 10 and last 5 rows, and how many more"
    assert html.count("<tr><td><b>a0") == 15
    assert "(1,989 more)" in bundle["text/plain"]
    assert len(bundle["text/plain"]) < 300
    # the overview: collapsed, drawn (not tuples), fitted to the cell; 40 folders
    # depending on each other are a knot at 820 px: fewer bands of ranks read
    assert re.search(r"collapsed into (8|12|20) rank bands", html)
    found = re.search(r"<img alt='drawing' style='width:(\d+)px;max-width:100%;height:auto' "
                      r"src='data:image/svg\+xml;base64,([^']+)'", html)
    assert found is not None
    svg = base64.b64decode(found.group(2)).decode("utf-8")
    width, height = svg_size(svg) or (0, 0)
    shown = int(found.group(1))
    assert shown <= min(width, CELL_WIDTH)
    assert shown * height / width <= FIT_HEIGHT + 1, "no taller than the fitted height"
    box = re.search(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+)', svg)
    assert box is not None
    smallest = min(float(x) for x in re.findall(r'font-size="([\d.]+)"', svg))
    assert smallest * shown / float(box.group(1)) >= MIN_TEXT_PX, "its text legible"
    assert "Overview of a " in html
    assert "area-000/" in bundle["text/vnd.mermaid"]


@pytest.mark.requires_dot
def test_a_focus_in_a_2000_artifact_schema_is_small_and_whole(schema_2000: Any) -> None:
    svg = schema_2000.svg(focus="a01234", depth=2)
    width, _height = svg_size(svg) or (0, 0)
    assert width < 2000
    assert "<title>a01234</title>" in svg
    assert "+3 more" in svg
    assert "of 2,001 nodes" in svg


def test_an_expanded_folder_is_a_box_of_its_own() -> None:
    model = GraphModel("folders")
    for area in range(3):
        for i in range(5):
            model.add_node(Node(f"x{area}{i}", group=f"area-{area}/sub", rank=i))
            if i:
                model.add_edge(Edge(f"x{area}{i - 1}", f"x{area}{i}"))
        if area:
            model.add_edge(Edge(f"x{area - 1}4", f"x{area}0"))
    out = model.collapse(by="group", expand=["area-1"], threshold=3)
    assert out.clusters == {"area-1 (expanded)": "area-1/ (expanded)"}
    members = sorted(n.id for n in out.nodes.values() if n.group == "area-1 (expanded)")
    assert members == [f"x1{i}" for i in range(5)]
    assert {n.id for n in out.nodes.values() if n.kind == "summary"} == {
        "group:area-0", "group:area-2"}
    assert repr(out).endswith("collapsed (10 of 15 nodes collapsed into 2 folders, "
                              "5 shown individually)>")
