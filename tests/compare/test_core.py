"""The diff core: records and edges added, removed, renamed and changed, symmetrically."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from crewbook.compare.core import DiffEntry, diff_edges, diff_records

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


def test_entries_read_as_lines() -> None:
    assert str(DiffEntry("artifact", "added", "x")) == "+ artifact x added"
    assert str(DiffEntry("artifact", "renamed", "y", "id", "x", "y")) == \
        "~ artifact y: renamed from x"
    assert str(DiffEntry("apply", "changed", "apply", "tracks", "a.md", "b.md")) == \
        "~ apply tracks: a.md → b.md"
    assert DiffEntry("stage", "changed", "s", "needs", ("a",), ()).to_dict()["after"] == []


def _naive_renames(a: dict[str, Any], b: dict[str, Any]) -> dict[str, str]:
    """The definition: rounds over every record, until a round finds no unique match."""
    from collections import defaultdict

    from crewbook.compare.core import translate

    renames: dict[str, str] = {}
    while True:
        groups: dict[Any, tuple[list[str], list[str]]] = defaultdict(lambda: ([], []))
        for i in a:
            if i not in b and i not in renames:
                rec = translate(a[i], ("requires",), renames)
                groups[(rec["generates"], tuple(rec["requires"]))][0].append(i)
        for i in b:
            if i not in a and i not in renames.values():
                groups[(b[i]["generates"], tuple(b[i]["requires"]))][1].append(i)
        found = {o[0]: n[0] for o, n in groups.values() if len(o) == 1 and len(n) == 1}
        if not found:
            return renames
        renames.update(found)


@given(RECORDS, RECORDS)
def test_renames_equal_the_round_by_round_definition(a: dict[str, Any],
                                                     b: dict[str, Any]) -> None:
    fast = diff_records(a, b, signature=("generates", "requires"), refs=("requires",))
    assert fast.renames == _naive_renames(a, b)


def test_a_long_chain_of_renames_is_found_whole() -> None:
    n = 2000
    a = {f"a{i}": {"generates": f"f{i}.md", "requires": (f"a{i - 1}",) if i else ()}
         for i in range(n)}
    b = {f"b{i}": {"generates": f"f{i}.md", "requires": (f"b{i - 1}",) if i else ()}
         for i in range(n)}
    d = diff_records(a, b, signature=("generates", "requires"), refs=("requires",))
    assert d.renames == {f"a{i}": f"b{i}" for i in range(n)}
    assert d.changed == {}
