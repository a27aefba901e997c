"""DOT text: quoting, styles, determinism (a hypothesis property) and validity under `dot`."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crewbook.draw import Edge, GraphModel, Node, attrs, to_dot, to_mermaid
from crewbook.draw.dot import html_text, node_label, quote
from crewbook.draw.render import render

# any text but control characters, backslash (DOT keeps `\\` doubled in names) and `%`
# (dot renames `%...` as its anonymous ids; labels, not names, are what is shown)
NAMES = st.text(st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\\%"),
                min_size=1, max_size=12)


@st.composite
def models(draw: st.DrawFn) -> tuple[list[Node], list[Edge]]:
    ids = draw(st.lists(NAMES, min_size=1, max_size=12, unique=True))
    nodes = [
        Node(i, label=draw(st.text(max_size=10)), kind=draw(st.sampled_from(
            ["artifact", "collection", "gate", "missing", "summary", "other"])),
            status=draw(st.sampled_from([None, "done", "ready", "blocked", "error"])),
            group=draw(st.sampled_from([None, "g1", "g2"])),
            detail=draw(st.none() | st.text(max_size=10)),
            badge=draw(st.none() | st.text(max_size=10)),
            rank=draw(st.none() | st.integers(0, 5)), emphasis=draw(st.booleans()),
            tooltip=draw(st.none() | st.text(max_size=10)))
        for i in ids
    ]
    edges = draw(st.lists(st.builds(
        Edge, st.sampled_from(ids), st.sampled_from(ids),
        st.sampled_from(["requires", "apply", "cycle", "dangling"]), st.text(max_size=6),
        st.sampled_from(["solid", "dashed", "dotted", "bold"]), st.just(()), st.integers(1, 3),
    ), max_size=20))
    return nodes, edges


def build(nodes: list[Node], edges: list[Edge], clusters: bool = False) -> GraphModel:
    model = GraphModel("g", title="t", legend=(("done", "done"), ("next", "next")),
                       clusters={"g1": "group one"} if clusters else {})
    for node in nodes:
        model.add_node(node)
    for edge in edges:
        model.add_edge(edge)
    return model


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(models(), st.randoms(use_true_random=False), st.booleans())
def test_same_model_same_text_whatever_the_insertion_order(
    parts: tuple[list[Node], list[Edge]], rnd: random.Random, clusters: bool
) -> None:
    nodes, edges = parts
    first = build(nodes, edges, clusters)
    shuffled_nodes, shuffled_edges = list(nodes), list(edges)
    rnd.shuffle(shuffled_nodes)
    rnd.shuffle(shuffled_edges)
    second = build(shuffled_nodes, shuffled_edges, clusters)
    assert to_dot(first) == to_dot(second)
    assert to_mermaid(first) == to_mermaid(second)


def test_order_does_change_the_text_when_the_model_changes() -> None:
    a = build([Node("x"), Node("y")], [Edge("x", "y")])
    b = build([Node("x"), Node("y")], [Edge("y", "x")])
    assert to_dot(a) != to_dot(b)


def test_quote_escapes_quotes_backslashes_and_newlines() -> None:
    assert quote('say "hi"') == '"say \\"hi\\""'
    assert quote("a\\b") == '"a\\\\b"'
    assert quote("one\ntwo\r\nthree") == '"one\\ntwo\\nthree"'
    assert quote("bell\x07") == '"bell\N{REPLACEMENT CHARACTER}"'


def test_html_text_escapes_markup() -> None:
    assert html_text('<b>&"x"</b>\nnext') == "&lt;b&gt;&amp;&quot;x&quot;&lt;/b&gt;<br/>next"
    assert html_text("]") == "&#93;"  # dot 2.43 rejects a label starting with ]


def test_labels_show_id_detail_and_badges() -> None:
    label = node_label(Node("brief", detail="brief.md", badge="role: Editor\n✖ bad_key"))
    assert label == (
        '<b>brief</b><br/><font point-size="9" color="#455a64">brief.md</font><br/>'
        '<font point-size="9" color="#6a1b9a">role: Editor</font><br/>'
        '<font point-size="9" color="#b71c1c">✖ bad_key</font>'
    )


def test_a_hostile_id_stays_one_node() -> None:
    evil = 'x" [color=red]; "y" -> "z'
    text = to_dot(build([Node(evil), Node("z")], [Edge(evil, "z")]))
    assert '"x\\" [color=red]; \\"y\\" -> \\"z"' in text
    edge_lines = [line for line in text.splitlines() if line.endswith(' -> "z"')]
    assert edge_lines == ['\t"x\\" [color=red]; \\"y\\" -> \\"z" -> "z"']


def test_styles_come_from_status_kind_and_emphasis() -> None:
    text = to_dot(build(
        [Node("d", status="done"), Node("n", status="ready", emphasis=True),
         Node("m", kind="missing"), Node("s", kind="summary"),
         Node("c", attrs=attrs(fillcolor="pink"))],
        [Edge("m", "d", "dangling", style="dashed"), Edge("d", "n", "cycle", "cycle", "bold"),
         Edge("s", "n", count=12)],
    ))
    assert 'fillcolor="#c8e6c9", color="#2e7d32"' in text
    assert 'fillcolor="#bbdefb", color="#1565c0", penwidth="3"' in text
    assert ('"m" [label=<<b>m</b>>, style="rounded,dashed", color="#c62828", '
            'fontcolor="#c62828"]') in text
    assert 'shape="folder"' in text
    assert '"c" [label=<<b>c</b>>, fillcolor="pink"]' in text
    assert ('"m" -> "d" [color="#d50000", penwidth="1.4", style="dashed", '
            'fontcolor="#d50000"]') in text
    assert '"d" -> "n" [color="#d50000", penwidth="2.2", style="bold", label="cycle"' in text
    assert '"s" -> "n" [penwidth="2.8", xlabel="×12"]' in text
    assert '{ rank=sink; "legend:"' in text


def test_clusters_hold_their_nodes() -> None:
    model = build([Node("a", group="g1"), Node("b", group="g2")], [], clusters=True)
    text = to_dot(model)
    assert 'subgraph "cluster_g:g1" {\n\t\tgraph [label="group one"' in text
    assert '\t\t"a" [label=' in text
    assert '\t"b" [label=' in text


@pytest.mark.requires_dot
@pytest.mark.parametrize("label", ["\r", "\n", " ", "\r\n", "\t"])
def test_a_blank_loop_label_beside_an_xlabel_draws(label: str) -> None:
    """dot 2.43 asserted (xlabels.c) on a blank self-loop label next to an xlabel: the
    cause of the failures seen with `\r` labels, which dot reads as line breaks."""
    model = build([Node("0"), Node("00")],
                  [Edge("0", "0", "requires", label), Edge("0", "00", "requires", "", count=2)])
    assert "label=" not in to_dot(model).split('"0" -> "0"')[1].splitlines()[0]
    assert render(to_dot(model), "svg").startswith(b"<")


@pytest.mark.requires_dot
def test_parallel_edges_the_spline_router_gives_up_on_still_draw() -> None:
    """A model Graphviz 2.43's router rejects ("in routesplines, illegal values of prev")
    is drawn with straight edges instead of failing (found by the property below; the
    DOT file is the model's `to_dot` text as hypothesis made it)."""
    text = (Path(__file__).parents[1] / "data" / "dot" / "router-gives-up.dot").read_text("utf-8")
    plain = subprocess.run(["dot", "-Tjson"], input=text.encode(), capture_output=True,
                           check=False)
    drawn = json.loads(render(text, "json"))
    assert len(drawn["edges"]) == text.count(" -> ")
    if plain.returncode == 0:  # a Graphviz without the bug: nothing to fall back from
        pytest.skip("this dot routes the bundle itself")


def test_header_and_title() -> None:
    text = to_dot(GraphModel("lite", title="schema lite", note="3 of 4 collapsed"))
    assert text.startswith('digraph "lite" {\n\tgraph [rankdir="LR", ')
    assert 'label="schema lite\\n(3 of 4 collapsed)"' in text
    assert text.endswith("}\n")


@pytest.mark.requires_dot
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models())
def test_dot_accepts_any_model_and_keeps_its_ids(parts: tuple[list[Node], list[Edge]]) -> None:
    nodes, edges = parts
    text = to_dot(build(nodes, edges, clusters=True))
    drawn = json.loads(render(text, "json", timeout=30))
    names = {o["name"] for o in drawn.get("objects", []) if "nodes" not in o}
    ours = {n.id for n in nodes} | {"legend:"}
    assert names == {x.replace("\n", "\\n") for x in ours}
    assert len(drawn.get("edges", [])) == len(edges)
