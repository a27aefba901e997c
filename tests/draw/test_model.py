"""The graph model: building, ordering, and collapsing big graphs into summaries."""

from __future__ import annotations

import pytest

from crewbook.draw import Edge, GraphModel, Node, attrs, options
from crewbook.draw.model import RANK_BANDS
from crewbook.errors import InvalidInputError


def chain(n: int, folders: int = 1, name: str = "g") -> GraphModel:
    """n artifacts in a chain, spread over `folders` consecutive folders."""
    model = GraphModel(name)
    size = -(-n // folders)
    for i in range(n):
        model.add_node(Node(f"a{i}", group=f"f{i // size}", rank=i))
        if i:
            model.add_edge(Edge(f"a{i - 1}", f"a{i}"))
    return model


def test_ids_are_unique() -> None:
    model = GraphModel("g")
    model.add_node(Node("a"))
    with pytest.raises(ValueError, match="'a' is already in graph 'g'"):
        model.add_node(Node("a", label="again"))


def test_nodes_sort_by_rank_then_id_unranked_last() -> None:
    model = GraphModel("g")
    for node in (Node("z", rank=0), Node("b", rank=1), Node("a", rank=1), Node("x")):
        model.add_node(node)
    assert [n.id for n in model.sorted_nodes()] == ["z", "a", "b", "x"]
    assert [n.id for n in model] == ["z", "a", "b", "x"]


def test_edges_sort_on_every_field_and_keep_duplicates() -> None:
    model = GraphModel("g")
    for edge in (Edge("b", "c"), Edge("a", "c", "apply"), Edge("a", "c"), Edge("a", "c")):
        model.add_edge(edge)
    assert [(e.source, e.target, e.kind) for e in model.sorted_edges()] == [
        ("a", "c", "apply"), ("a", "c", "requires"), ("a", "c", "requires"),
        ("b", "c", "requires"),
    ]


def test_helpers() -> None:
    model = GraphModel("g")
    model.add_node(Node("a", status="done"))
    model.add_node(Node("b", status="done", label="B"))
    model.add_edge(Edge("a", "ghost"))
    assert model.dangling_ends() == ["ghost"]
    assert model.statuses() == {"done": 2}
    assert model.nodes["b"].text == "B"
    assert model.nodes["a"].text == "a"
    assert attrs(color="red", penwidth=2) == (("color", "red"), ("penwidth", "2"))
    assert repr(model) == "<GraphModel 'g': 2 nodes, 1 edges>"


def test_collapse_by_folder_counts_edges_between_summaries() -> None:
    model = chain(30, folders=3)
    model.add_edge(Edge("a0", "a25"))  # a second edge from f0 to f2
    model.add_edge(Edge("a1", "a29"))  # and a third
    model.add_node(Node("apply:gate", kind="gate", rank=30))
    model.add_edge(Edge("a29", "apply:gate", "apply"))
    small = model.collapse(threshold=10)
    assert sorted(small.nodes) == ["apply:gate", "group:f0", "group:f1", "group:f2"]
    summary = small.nodes["group:f0"]
    assert (summary.kind, summary.label, summary.detail) == ("summary", "f0/", "10 artifacts")
    assert summary.tooltip == "a0, a1, a2, a3, a4, a5, a6, a7 …"
    counts = {(e.source, e.target, e.kind): e.count for e in small.edges}
    assert counts == {
        ("group:f0", "group:f1", "requires"): 1,
        ("group:f1", "group:f2", "requires"): 1,
        ("group:f0", "group:f2", "requires"): 2,
        ("group:f2", "apply:gate", "apply"): 1,
    }
    assert small.note == "30 of 31 nodes collapsed into 3 folders, 1 shown individually"
    assert len(model) == 31, "collapse returns a new model"


def test_expand_keeps_a_folder_as_individual_nodes() -> None:
    small = chain(30, folders=3).collapse(threshold=10, expand=["f1"])
    individual = [f"a{i}" for i in range(10, 20)]
    assert sorted(small.nodes) == sorted(["group:f0", "group:f2", *individual])
    edges = {(e.source, e.target) for e in small.edges}
    assert ("group:f0", "a10") in edges
    assert ("a19", "group:f2") in edges
    assert ("a10", "a11") in edges


def test_expanding_a_name_that_is_no_summary_says_which_names_exist() -> None:
    model = chain(30, folders=3)
    with pytest.raises(InvalidInputError) as info:
        model.collapse(threshold=10, expand=["f1", "f9"])
    message = str(info.value)
    assert "nothing to expand named 'f9'" in message
    assert "collapses by folder into: 'f0', 'f1', 'f2'" in message
    with pytest.raises(InvalidInputError, match="collapses by rank into: 'rank 0-2'"):
        model.collapse(by="rank", threshold=10, expand=["f1"])


def test_folders_are_cut_at_the_shallowest_useful_depth() -> None:
    model = GraphModel("g")
    for i, group in enumerate(["docs/a", "docs/a", "docs/b", "docs/b/c"]):
        model.add_node(Node(f"n{i}", group=group, rank=i))
    model.add_edge(Edge("n0", "n2"))
    small = model.collapse(threshold=3)
    assert sorted(small.nodes) == ["group:docs/a", "group:docs/b"]


def test_auto_falls_back_to_rank_bands_when_folders_depend_on_each_other() -> None:
    model = GraphModel("g")
    for i in range(12):  # round-robin folders: f0 → f1 → f0 ... a knot between folders
        model.add_node(Node(f"a{i}", group=f"f{i % 2}", rank=i))
        if i:
            model.add_edge(Edge(f"a{i - 1}", f"a{i}"))
    auto = model.collapse(threshold=4)
    assert all(key.startswith("rank:") for key in auto.nodes)
    assert "rank bands" in auto.note
    forced = model.collapse(by="group", threshold=4)
    assert sorted(forced.nodes) == ["group:f0", "group:f1"]


def test_rank_bands_are_bounded() -> None:
    model = chain(500)
    small = model.collapse(by="rank")
    assert len(small) <= RANK_BANDS
    assert small.nodes["rank:rank 0-12"].detail == "13 artifacts"
    with options.override(collapse_threshold=5):
        assert len(model.collapse(by="rank")) == 5


def test_summary_status_is_shared_or_counted() -> None:
    model = GraphModel("g")
    for i, (group, status) in enumerate([("a", "done"), ("a", "done"), ("b", "done"),
                                         ("b", "ready"), ("c", "error"), ("c", "done")]):
        model.add_node(Node(f"n{i}", group=group, status=status, rank=i, emphasis=i == 3))
    model.add_edge(Edge("n0", "n2"))
    model.add_edge(Edge("n2", "n4"))
    small = model.collapse(threshold=3)
    assert small.nodes["group:a"].status == "done"
    assert small.nodes["group:b"].status is None
    assert small.nodes["group:b"].detail == "2 artifacts: 1 done, 1 ready"
    assert small.nodes["group:b"].emphasis
    assert small.nodes["group:c"].status == "error"


def test_a_cycle_hidden_inside_a_summary_is_mentioned() -> None:
    model = GraphModel("g")
    for i, group in enumerate("aabb"):
        model.add_node(Node(f"n{i}", group=group))
    model.add_edge(Edge("n0", "n1", "cycle"))
    model.add_edge(Edge("n1", "n0", "cycle"))
    model.add_edge(Edge("n1", "n2"))
    small = model.collapse(threshold=3)
    assert small.nodes["group:a"].detail == "2 artifacts · cycle inside"
    assert small.nodes["group:b"].detail == "2 artifacts"
