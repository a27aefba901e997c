"""diff_schemas on hand-made pairs: empty, renames, fields, edges, gate, order, consequences."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crewbook import Schema, load_schema
from crewbook.artifacts.model import ApplySpec, ArtifactSpec, SchemaFile
from crewbook.compare import SchemaDiff, diff_schemas

Maker = Callable[..., Any]


def _schema(name: str, artifacts: list[dict[str, Any]], apply: list[str],
            tracks: str = "tasks.md") -> dict[str, Any]:
    return {"name": name, "artifacts": artifacts, "apply": {"requires": apply, "tracks": tracks}}


BASE = [
    {"id": "brief", "generates": "brief.md",
     "role": {"id": "editor", "name": {"en": "Editor"}, "question": "Clear?",
              "done_when": ["One page"]}},
    {"id": "specs", "generates": "specs/**/*.md", "requires": ["brief"]},
    {"id": "tasks", "generates": "tasks.md", "requires": ["specs"]},
]


def test_identical_schemas_give_an_empty_diff(make_project: Maker) -> None:
    p = make_project()
    a = p.schema("one", _schema("one", BASE, ["tasks"]))
    b = p.schema("two", _schema("two", BASE, ["tasks"]))
    d = diff_schemas(a, b)
    assert d.empty
    assert d.entries == ()
    assert d.frame().empty
    assert "no differences" in d.text()
    assert d.to_dict()["empty"] is True


def test_rename_is_detected_and_dependents_are_not_reported(make_project: Maker) -> None:
    p = make_project()
    renamed = [dict(BASE[0], id="summary"), dict(BASE[1], requires=["summary"]), BASE[2]]
    d = diff_schemas(p.schema("one", _schema("one", BASE, ["tasks"])),
                     p.schema("two", _schema("two", renamed, ["tasks"])))
    assert [(e.change, e.item, e.before) for e in d.entries] == [
        ("renamed", "summary", "brief")]
    assert dict(d.renames) == {"brief": "summary"}
    assert d.to_dict()["renames"] == {"brief": "summary"}
    assert "renamed from brief" in d.text()
    node = d.graph_model().nodes["summary"]
    assert node.status == "changed"
    assert "renamed from brief" in (node.badge or "")


def test_changed_fields_edges_gate_and_order(make_project: Maker) -> None:
    p = make_project()
    after = [
        {"id": "brief", "generates": "brief.md", "template": "brief.md",
         "role": {"id": "writer", "name": {"en": "Writer"}, "question": "Clear?",
                  "done_when": ["One page", "Why first"]}},
        {"id": "specs", "generates": "specs/*.md", "requires": ["brief"]},
        {"id": "review", "generates": "review.md", "requires": ["specs"]},
        {"id": "tasks", "generates": "tasks.md", "requires": ["review"]},
    ]
    d = diff_schemas(p.schema("one", _schema("one", BASE, ["tasks"])),
                     p.schema("two", _schema("two", after, ["tasks", "review"], "plan.md"),
                              templates=["brief.md"]))
    got = {(e.section, e.change, e.item, e.field) for e in d.entries}
    assert ("artifact", "added", "review", None) in got
    assert ("artifact", "changed", "brief", "template") in got
    assert ("artifact", "changed", "brief", "role") in got
    assert ("artifact", "changed", "brief", "role_name") in got
    assert ("artifact", "changed", "brief", "done_when") in got
    assert ("artifact", "changed", "specs", "generates") in got
    assert ("artifact", "changed", "tasks", "requires") in got
    assert ("edge", "added", "specs → review (requires)", None) in got
    assert ("edge", "added", "review → tasks (requires)", None) in got
    assert ("edge", "removed", "specs → tasks (requires)", None) in got
    assert ("edge", "added", "review → apply (apply)", None) in got
    assert ("apply", "changed", "apply", "requires") in got
    assert ("apply", "changed", "apply", "tracks") in got
    moved = {e.item: (e.before, e.after) for e in d.section("order")}
    assert moved == {"tasks": (3, 4)}
    assert "build order: brief → specs → tasks  ⇒  brief → specs → review → tasks" in d.text()
    done_when = next(e for e in d.entries if e.field == "done_when")
    assert (done_when.before, done_when.after) == (("One page",), ("One page", "Why first"))


def test_removed_artifact_and_its_edges(make_project: Maker) -> None:
    p = make_project()
    after = [BASE[0], dict(BASE[2], requires=["brief"])]
    d = diff_schemas(p.schema("one", _schema("one", BASE, ["tasks"])),
                     p.schema("two", _schema("two", after, ["tasks"])))
    assert [e.item for e in d.entries if e.change == "removed"] == [
        "specs", "brief → specs (requires)", "specs → tasks (requires)"]
    model = d.graph_model()
    assert model.nodes["specs"].status == "removed"
    removed_edges = [e for e in model.edges if e.kind == "removed"]
    assert {(e.source, e.target) for e in removed_edges} == {("brief", "specs"),
                                                             ("specs", "tasks")}
    assert all(e.style == "dashed" for e in removed_edges)


def test_consequences_for_existing_changes(make_project: Maker) -> None:
    p = make_project()
    before = p.schema("lite", _schema("lite", BASE, ["tasks"]))
    after = [BASE[0],
             {"id": "notes", "generates": "notes.md", "requires": ["brief"]},
             {"id": "review", "generates": "review.md", "requires": ["notes"]},
             {"id": "tasks", "generates": "tasks.md", "requires": ["review"]}]
    v2 = p.schema("lite-v2", _schema("lite-v2", after, ["tasks"]))
    p.change("csv", schema="lite", files={"brief.md": "# b\n", "specs/a.md": "# s\n"})
    p.change("other", schema="spec-driven")
    d = diff_schemas(before, v2, project=p.root)
    got = {(c.change, c.artifact): (c.what, c.before, c.after) for c in d.consequences}
    assert got == {
        ("csv", "specs"): ("no_longer_generated", "done", None),
        ("csv", "notes"): ("new", None, "ready"),
        ("csv", "review"): ("new", None, "blocked"),
        ("csv", "tasks"): ("blocked", "ready", "blocked"),
    }
    lost = next(c for c in d.consequences if c.what == "no_longer_generated")
    assert "specs/a.md" in lost.note
    frame = d.consequences_frame()
    assert list(frame.columns) == ["change", "artifact", "what", "before", "after", "note"]
    assert str(frame["what"].dtype) == "category"
    assert set(d.frames()) == {"changes", "consequences"}
    assert "csv: tasks blocked (ready → blocked): waits for review" in d.text()
    # only the changes given
    given = diff_schemas(before, v2, changes=["csv"], project=p.root).consequences
    assert {c.change for c in given} == {"csv"}
    assert diff_schemas(before, v2).consequences == ()  # no project, no changes


def test_unblocked_and_apply_gate(make_project: Maker) -> None:
    p = make_project()
    before = p.schema("one", _schema("one", BASE, ["specs"]))
    after = [BASE[0], dict(BASE[2], requires=["brief"])]
    two = p.schema("two", _schema("two", after, ["brief"]))
    folder = p.change("c", schema="one", files={"brief.md": "x", "tasks.md": "- [ ] 1 do\n"})
    d = diff_schemas(before, two, changes=[folder])
    got = {(c.artifact, c.what, c.before, c.after) for c in d.consequences}
    assert ("specs", "dropped", "ready", None) in got
    assert ("apply", "apply", "blocked", "ready") in got


def test_accepts_schema_objects_and_files(make_project: Maker) -> None:
    p = make_project()
    a = p.schema("one", _schema("one", BASE, ["tasks"]))
    d = diff_schemas(load_schema(a), a / "schema.yaml")
    assert d.empty
    assert (d.a, d.b) == ("one (a)", "one (b)")
    assert diff_schemas(a, a, labels=("old", "new")).headline() == \
        "schema old → new: no differences"


def test_drawing_dot_is_stable_and_overlaid(make_project: Maker) -> None:
    p = make_project()
    after = [BASE[0], BASE[1], {"id": "review", "generates": "review.md", "requires": ["specs"]},
             dict(BASE[2], requires=["review"])]
    a = p.schema("one", _schema("one", BASE, ["tasks"]))
    b = p.schema("two", _schema("two", after, ["tasks"]))
    dot = diff_schemas(a, b).dot()
    assert dot == diff_schemas(a, b).dot()
    assert '"review" [label=<<b>review</b>' in dot
    assert 'fillcolor="#e8f5e9", color="#2e7d32"' in dot  # added: green
    assert '"specs" -> "tasks" [color="#c62828", penwidth="1.4", style="dashed"]' in dot
    assert "legend" in dot


def test_bad_input_raises_a_schema_error(make_project: Maker) -> None:
    p = make_project()
    a = p.schema("one", _schema("one", BASE, ["tasks"]))
    broken = p.schema("bad", {"name": "bad", "artifacts": [], "apply": {}})
    from crewbook import SchemaError

    with pytest.raises(SchemaError):
        diff_schemas(a, broken)


def _random_schema(name: str, spec: list[tuple[str, list[int]]]) -> Schema:
    """A valid schema from (generates, indexes of earlier artifacts it requires) pairs."""
    arts = []
    for i, (generates, deps) in enumerate(spec):
        requires = sorted({f"a{j}" for j in deps if j < i})
        arts.append(ArtifactSpec(id=f"a{i}", generates=generates, requires=tuple(requires)))
    ids = [a.id for a in arts]
    model = SchemaFile(name=name, artifacts=tuple(arts),
                       apply=ApplySpec(requires=(ids[-1],), tracks="tasks.md"))
    return Schema(name=name, source="file", folder=Path("."), model=model)


SPEC = st.lists(st.tuples(st.sampled_from(["a.md", "b.md", "c.md", "d/*.md"]),
                          st.lists(st.integers(0, 5), max_size=3)), min_size=1, max_size=6)


@given(SPEC)
def test_property_a_schema_against_itself_is_empty(spec: list[tuple[str, list[int]]]) -> None:
    schema = _random_schema("one", spec)
    assert diff_schemas(schema, schema).empty


@given(SPEC, SPEC)
def test_property_what_b_adds_a_removes(a: list[tuple[str, list[int]]],
                                        b: list[tuple[str, list[int]]]) -> None:
    one, two = _random_schema("one", a), _random_schema("two", b)
    forward, backward = diff_schemas(one, two), diff_schemas(two, one)

    def items(d: SchemaDiff, change: str) -> set[tuple[str, str]]:
        return {(e.section, e.item) for e in d.entries if e.change == change}

    assert items(forward, "added") == items(backward, "removed")
    assert items(forward, "removed") == items(backward, "added")
    assert {(old, new) for old, new in forward.renames} == \
        {(new, old) for old, new in backward.renames}


def test_generates_changed_orphans_written_files(make_project: Maker) -> None:
    p = make_project()
    before = p.schema("one", _schema("one", BASE, ["tasks"]))
    moved = [BASE[0], dict(BASE[1], generates="deltas/**/*.md"), BASE[2]]
    after = p.schema("two", _schema("two", moved, ["tasks"]))
    p.change("c", schema="one", files={"brief.md": "x", "specs/a.md": "y"})
    d = diff_schemas(before, after, project=p.root)
    got = {(c.artifact, c.what, c.before, c.after) for c in d.consequences}
    assert ("specs", "no_longer_generated", "done", "ready") in got
    assert ("tasks", "blocked", "ready", "blocked") in got
    note = next(c.note for c in d.consequences if c.artifact == "specs")
    assert note == "specs/a.md belong to no artifact of the new schema"
