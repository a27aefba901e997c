"""Mermaid text: safe ids that decode back, escaped labels, and edges parsed back out."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import crewbook
from crewbook.draw import Edge, GraphModel, Node, decode_mermaid_id, mermaid_id, to_mermaid
from crewbook.draw.mermaid import mermaid_text

EDGE_LINE = re.compile(r'^\s*(n_\w+) (-->|-\.->|==>)(?:\|"([^"]*)"\|)? (n_\w+)$')
NODE_LINE = re.compile(r'^\s*(n_\w+)(\[\[|\[/|\{\{|\(\[|\[|>)"([^"]*)"(\]\]|/\]|\}\}|\]\)|\])'
                       r"(?::::(\w+))?$")


def parse_edges(text: str) -> list[tuple[str, str, str, str]]:
    """(source id, target id, arrow, label) of every edge line, ids decoded."""
    found = []
    for line in text.splitlines():
        match = EDGE_LINE.match(line)
        if match:
            src, arrow, label, dst = match.groups()
            found.append((decode_mermaid_id(src), decode_mermaid_id(dst), arrow, label or ""))
    return found


def parse_nodes(text: str) -> dict[str, tuple[str, str | None]]:
    """Node id → (label, class) of every node line, ids decoded."""
    found = {}
    for line in text.splitlines():
        match = NODE_LINE.match(line)
        if match:
            found[decode_mermaid_id(match.group(1))] = (match.group(3), match.group(5))
    return found


@given(st.text(min_size=1, max_size=30))
def test_ids_are_safe_and_decode_back(node_id: str) -> None:
    encoded = mermaid_id(node_id)
    assert re.fullmatch(r"n_\w+", encoded, re.ASCII)
    assert decode_mermaid_id(encoded) == node_id


def test_ids_read_well_and_dodge_reserved_words() -> None:
    assert mermaid_id("add-csv-export") == "n_add_dcsv_dexport"
    assert mermaid_id("end") == "n_end"
    assert mermaid_id("apply:gate") == "n_apply_cgate"
    assert mermaid_id("snake_case") == "n_snake__case"
    assert mermaid_id("é") == "n__ue9_"


def test_labels_cannot_break_out_of_their_quotes() -> None:
    assert mermaid_text('a "b" #1 <i>\n`x`') == "a #quot;b#quot; #35;1 &lt;i&gt;<br/>#96;x#96;"


def test_the_tour_change_parses_back_to_its_model(tour: Path) -> None:
    status = crewbook.Project(tour).status("add-csv-export")
    model = status.graph_model()
    text = status.mermaid()
    assert text.startswith("flowchart LR\n")
    edges = parse_edges(text)
    assert sorted((s, t) for s, t, _, _ in edges) == sorted(
        (e.source, e.target) for e in model.edges
    )
    nodes = parse_nodes(text)
    assert set(model.nodes) <= set(nodes)
    assert nodes["tasks"] == ("<b>tasks</b><br/><small>tasks.md</small><br/><i>next</i>",
                              "st_ready")
    assert nodes["brief"][1] == "st_done"
    assert nodes["apply:gate"][1] == "st_blocked"
    assert "  class n_tasks next" in text


def test_broken_schema_edges_keep_their_kind(tour: Path) -> None:
    report = crewbook.validate_schema(tour / "_codev/schemas/research")
    text = report.mermaid()
    edges = {(s, t): (arrow, label) for s, t, arrow, label in parse_edges(text)}
    assert edges[("findings", "recommendation")] == ("==>", "cycle")
    assert edges[("recommendation", "findings")] == ("==>", "cycle")
    assert edges[("missing:recomendation", "apply:gate")] == ("-.->", "")
    styled = re.findall(r"linkStyle (\d+) stroke:#d50000", text)
    assert len(styled) == 3


def test_counts_clusters_and_legend() -> None:
    model = GraphModel("g", legend=(("done", "done"),), clusters={"x": 'box "x"'})
    model.add_node(Node("a", group="x"))
    model.add_node(Node("b"))
    model.add_edge(Edge("a", "b", count=4, label="uses"))
    text = to_mermaid(model)
    assert parse_edges(text) == [("a", "b", "-->", "uses ×4")]
    assert '  subgraph n_cluster_cx["box #quot;x#quot;"]\n    n_a["<b>a</b>"]\n  end' in text
    assert '    n_legend_cdone["done"]:::st_done' in text
