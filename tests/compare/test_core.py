"""The graph-diff core: records, edges, renames, the overlay drawing, the result type."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from crewbook.compare.core import (
    Diff,
    DiffEntry,
    diff_edges,
    diff_graphs,
    diff_records,
    overlay,
)
from crewbook.draw import Edge, GraphModel, Node, to_dot, to_mermaid

IDS = st.sampled_from(["a", "b", "c", "d", "e", "f"])
RECORD = st.fixed_dictionaries({
    "generates": st.sampled_from(["x.md", "y.md", "z.md", "w.md"]),
    "requires": st.lists(IDS, max_size=2, unique=True).map(tuple),
    "role": st.sampled_from([None, "editor"]),
})
RECORDS = st.dictionaries(IDS, RECORD, max_size=6)


def test_identical_records_give_an_empty_diff() -> None:
    recs = {"a": {"generates": "a.md", "requires": ()}, "b": {"generates": "b.md",
                                                              "requires": ("a",)}}
    d = diff_records(recs, dict(recs), signature=("generates", "requires"), refs=("requires",))
    assert d.empty
    assert d.entries("artifact") == []


def test_added_removed_and_changed_fields() -> None:
    a = {"a": {"generates": "a.md"}, "b": {"generates": "b.md", "template": None}}
    b = {"b": {"generates": "b2.md", "template": "t.md"}, "c": {"generates": "c.md"}}
    d = diff_records(a, b)
    assert d.added == ("c",)
    assert d.removed == ("a",)
    assert d.renamed == ()
    assert d.changed == {"b": {"generates": ("b.md", "b2.md"), "template": (None, "t.md")}}


def test_rename_by_signature_and_references_follow_it() -> None:
    a = {"brief": {"generates": "brief.md", "requires": ()},
         "specs": {"generates": "specs.md", "requires": ("brief",)}}
    b = {"summary": {"generates": "brief.md", "requires": ()},
         "specs": {"generates": "specs.md", "requires": ("summary",)}}
    d = diff_records(a, b, signature=("generates", "requires"), refs=("requires",))
    assert d.renamed == (("brief", "summary"),)
    assert d.added == ()
    assert d.removed == ()
    assert d.changed == {}  # specs.requires follows the rename: not a change


def test_chained_renames_are_found_whole() -> None:
    a = {"p": {"generates": "p.md", "requires": ()}, "q": {"generates": "q.md", "requires": ("p",)}}
    b = {"p2": {"generates": "p.md", "requires": ()},
         "q2": {"generates": "q.md", "requires": ("p2",)}}
    d = diff_records(a, b, signature=("generates", "requires"), refs=("requires",))
    assert d.renames == {"p": "p2", "q": "q2"}
    assert d.empty is False
    assert not d.added
    assert not d.removed
    assert not d.changed


def test_an_ambiguous_signature_is_no_rename() -> None:
    a = {"x": {"generates": "same.md"}, "y": {"generates": "same.md"}}
    b = {"z": {"generates": "same.md"}}
    d = diff_records(a, b, signature=("generates",))
    assert d.renamed == ()
    assert d.removed == ("x", "y")
    assert d.added == ("z",)


def test_edges_are_read_through_renames() -> None:
    d = diff_edges({("old", "t", "requires"): {}, ("s", "t", "requires"): {"label": "x"}},
                   {("new", "t", "requires"): {}, ("s", "t", "requires"): {"label": "y"}},
                   {"old": "new"})
    assert d.added == ()
    assert d.removed == ()
    assert d.changed == {("s", "t", "requires"): {"label": ("x", "y")}}
    d2 = diff_edges([("a", "b", "requires")], [("a", "c", "requires")])
    assert d2.added == (("a", "c", "requires"),)
    assert d2.removed == (("a", "b", "requires"),)


@given(RECORDS)
def test_a_record_set_against_itself_is_empty(a: dict[str, Any]) -> None:
    d = diff_records(a, a, signature=("generates", "requires"), refs=("requires",))
    assert d.empty


@given(RECORDS, RECORDS)
def test_what_one_side_adds_the_other_removes(a: dict[str, Any], b: dict[str, Any]) -> None:
    forward = diff_records(a, b, signature=("generates", "requires"), refs=("requires",))
    backward = diff_records(b, a, signature=("generates", "requires"), refs=("requires",))
    assert forward.added == backward.removed
    assert forward.removed == backward.added
    assert sorted((new, old) for old, new in forward.renamed) == sorted(backward.renamed)


@given(st.sets(st.tuples(IDS, IDS, st.just("requires"))),
       st.sets(st.tuples(IDS, IDS, st.just("requires"))))
def test_edge_diff_is_symmetric(a: set[tuple[str, str, str]],
                                b: set[tuple[str, str, str]]) -> None:
    assert diff_edges(a, b).added == diff_edges(b, a).removed
    assert diff_edges(a, a).empty


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


def test_diff_result_shapes() -> None:
    entries = (DiffEntry("artifact", "added", "x"),
               DiffEntry("artifact", "changed", "y", "requires", ("a",), ("a", "b")),
               DiffEntry("edge", "removed", "a → y (requires)"))
    d = Diff("one", "two", entries)
    assert not d.empty
    assert d.counts() == {"added": 1, "removed": 1, "changed": 1}
    frame = d.frame()
    assert list(frame.columns) == ["section", "change", "item", "field", "before", "after",
                                   "note"]
    assert str(frame["change"].dtype) == "category"
    assert frame.loc[1, "after"] == ["a", "b"]
    data = d.to_dict()
    assert data["empty"] is False
    assert data["changes"][1]["before"] == ["a"]
    text = d.text()
    assert "artifact y requires: [a] → [a, b]" in text
    assert repr(d) == "<Diff 'one' → 'two': 1 added, 1 removed, 1 changed>"
    assert Diff("one", "two", ()).empty
    assert "no differences" in Diff("one", "two", ()).text()
    bundle = d._repr_mimebundle_()
    assert "crewbook-diff" in bundle["text/html"]
