"""The overlay drawing: both versions in one graph model, rendered by crewbook.draw."""

from __future__ import annotations

import os
from pathlib import Path

import crewbook
from crewbook.compare import diff_schemas
from crewbook.compare.graph import diff_graphs, overlay
from crewbook.draw import Edge, GraphModel, Node, to_dot, to_mermaid

from .conftest import write_lite_v2


def _model(name: str, nodes: list[str], edges: list[tuple[str, str, str]]) -> GraphModel:
    m = GraphModel(name)
    for i, n in enumerate(nodes):
        m.add_node(Node(n, rank=i))
    for s, t, label in edges:
        m.add_edge(Edge(s, t, "requires", label))
    return m


def test_overlay_marks_added_removed_changed_and_renamed() -> None:
    a = _model("a", ["keep", "gone", "old"], [("keep", "gone", ""), ("keep", "old", "x")])
    b = _model("b", ["keep", "new", "fresh"], [("keep", "new", "y"), ("keep", "fresh", "")])
    m = overlay(a, b, renames={"old": "new"}, changed={"keep": ["template"]})
    status = {n.id: n.status for n in m.nodes.values()}
    assert status == {"keep": "changed", "new": "changed", "fresh": "added", "gone": "removed"}
    assert "renamed from old" in (m.nodes["new"].badge or "")
    assert "changed: template" in (m.nodes["keep"].badge or "")
    kinds = {(e.source, e.target): (e.kind, e.style) for e in m.edges}
    assert kinds[("keep", "gone")] == ("removed", "dashed")
    assert kinds[("keep", "fresh")] == ("added", "solid")
    assert kinds[("keep", "new")][0] == "changed"  # label x → y
    dot = to_dot(m)
    assert '"gone" [label=' in dot
    assert "dashed" in dot
    assert "#2e7d32" in dot
    assert "#c62828" in dot
    assert "#ff8f00" in dot
    mermaid = to_mermaid(m)
    assert "classDef st_added" in mermaid
    assert "classDef st_removed" in mermaid
    assert "linkStyle" in mermaid


def test_overlay_of_a_drawing_with_itself_changes_nothing() -> None:
    a = _model("a", ["x", "y"], [("x", "y", "")])
    m = overlay(a, a)
    assert {n.status for n in m.nodes.values()} == {None}
    assert [e.kind for e in m.edges] == ["requires"]
    nodes, edges = diff_graphs(a, a)
    assert nodes.empty
    assert edges.empty


def test_overlay_dot_is_deterministic() -> None:
    a = _model("a", ["x", "y", "z"], [("x", "y", ""), ("y", "z", "")])
    b = _model("b", ["z", "y", "w"], [("y", "z", "new"), ("w", "y", "")])
    assert to_dot(overlay(a, b)) == to_dot(overlay(a, b))


GOLDEN = Path(__file__).parents[1] / "data" / "golden"
UPDATE = os.environ.get("CREWBOOK_UPDATE_GOLDEN") == "1"


def _tour_diff_dot(tour: Path) -> str:
    lite = tour / "_codev" / "schemas" / "lite"
    return diff_schemas(lite, write_lite_v2(tour), project=tour).dot()


def test_golden_dot_of_the_tour_redesign(tour: Path) -> None:
    """Regenerate with ``CREWBOOK_UPDATE_GOLDEN=1 pytest tests/compare -p no:nbval
    -o addopts=""`` after an intended change, and review the diff."""
    text = _tour_diff_dot(tour)
    path = GOLDEN / "compare-tour-lite-v2.dot"
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text("utf-8")


def test_no_path_leaks_into_the_dot(tour: Path, tmp_path: Path) -> None:
    other = crewbook.example_project(dest=tmp_path / "elsewhere" / "tour")
    assert _tour_diff_dot(tour) == _tour_diff_dot(other)
