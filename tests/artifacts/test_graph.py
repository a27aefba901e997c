"""Graph models of SPEC A: schema, change status, broken schema, listing; the role matrix."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import crewbook
from crewbook.artifacts.frames import role_matrix_frame
from crewbook.artifacts.graph import (
    GATE_ID,
    STATUS_LEGEND,
    broken_schema_graph,
    folder_of,
    ranks,
    report_graph,
    role_matrix,
)
from crewbook.artifacts.registry import schema_path_graph
from crewbook.draw import GraphModel
from crewbook.errors import Problem, SchemaError

DATA = Path(__file__).parents[1] / "data"
BROKEN = DATA / "broken_schemas"
FULL = DATA / "valid_schemas" / "full-featured"


def edges(model: GraphModel) -> set[tuple[str, str, str]]:
    return {(e.source, e.target, e.kind) for e in model.edges}


def broken(name: str) -> GraphModel:
    return crewbook.validate_schema(BROKEN / name).graph_model()


@pytest.mark.parametrize(("generates", "folder"), [
    ("brief.md", None), ("specs/**/*.md", "specs"), ("docs/api/spec.md", "docs/api"),
    ("notes/*.md", "notes"), ("a/b*/c/*.md", "a"), ("*.md", None),
])
def test_folder_of(generates: str, folder: str | None) -> None:
    assert folder_of(generates) == folder


def test_ranks_are_longest_chains_and_none_on_cycles() -> None:
    assert ranks({"a": [], "b": ["a"], "c": ["a", "b"], "d": ["ghost"]}) == {
        "a": 0, "b": 1, "c": 2, "d": 0}
    assert ranks({"a": ["b"], "b": ["a"], "c": ["a"], "d": []}) == {
        "a": None, "b": None, "c": None, "d": 0}


def test_spec_driven() -> None:
    model = crewbook.get_schema("spec-driven").graph_model()
    assert model.title == "schema spec-driven (built-in)"
    assert {n.id: n.rank for n in model.nodes.values()} == {
        "proposal": 0, "specs": 1, "design": 1, "tasks": 2, GATE_ID: 3}
    assert edges(model) == {
        ("proposal", "specs", "requires"), ("proposal", "design", "requires"),
        ("specs", "tasks", "requires"), ("design", "tasks", "requires"),
        ("tasks", GATE_ID, "apply")}
    specs, gate = model.nodes["specs"], model.nodes[GATE_ID]
    assert (specs.kind, specs.detail, specs.group) == ("collection", "specs/**/*.md", "specs")
    assert model.nodes["design"].kind == "artifact"
    assert (gate.kind, gate.label, gate.detail, gate.status) == (
        "gate", "apply", "tracks tasks.md", None)
    assert all(n.status is None for n in model.nodes.values())
    assert model.legend == ()


def test_role_badges_and_descriptions() -> None:
    model = crewbook.load_schema(FULL).graph_model()
    assert model.nodes["proposal"].badge == "role: Author"
    assert model.nodes["proposal"].tooltip == "Why the change is needed"
    assert model.nodes["specs"].badge is None
    assert model.nodes["checks"].kind == "collection"
    assert (model.nodes["checks"].rank, model.nodes[GATE_ID].rank) == (0, 3)


def test_change_status_colours_next_and_legend(tour: Path) -> None:
    status = crewbook.Project(tour).status("add-csv-export")
    model = status.graph_model()
    assert model.title == "change add-csv-export · schema lite · next: tasks"
    assert {n.id: n.status for n in model.nodes.values()} == {
        "brief": "done", "specs": "done", "tasks": "ready", GATE_ID: "blocked"}
    assert [n.id for n in model.nodes.values() if n.emphasis] == ["tasks"]
    assert model.nodes["tasks"].badge == "next"
    assert model.nodes["brief"].badge == "role: Editor"
    assert model.nodes[GATE_ID].detail == "tracks tasks.md · 0/0 tasks"
    assert model.legend == STATUS_LEGEND
    assert [key for key, _ in model.legend] == ["done", "ready", "blocked", "skipped", "next"]


def test_skipped_files_counted_and_gate_progress(make_project: Callable[..., Any]) -> None:
    project = make_project()
    project.change("quick", "spec-driven", skip_specs=True, files={
        "proposal.md": "x", "design.md": "x",
        "tasks.md": "- [x] 1.1 one\n- [ ] 1.2 two\n"})
    model = crewbook.Project(project.root).status("quick").graph_model()
    assert model.nodes["specs"].status == "skipped"
    assert model.nodes["tasks"].status == "done"
    assert model.nodes[GATE_ID].status == "in_progress"
    assert model.nodes[GATE_ID].detail == "tracks tasks.md · 1/2 tasks"
    assert not any(n.emphasis for n in model.nodes.values())


def test_several_files_are_counted(tour: Path) -> None:
    extra = tour / "_codev/changes/add-csv-export/specs/export/json.md"
    extra.write_text("# json\n", encoding="utf-8")
    model = crewbook.Project(tour).status("add-csv-export").graph_model()
    assert model.nodes["specs"].detail == "specs/**/*.md (2 files)"


def test_the_tour_research_schema(tour: Path) -> None:
    report = crewbook.validate_schema(tour / "_codev/schemas/research", display_root=tour)
    model = report.graph_model()
    assert model.title == "schema research — invalid: 3 problems"
    assert {n.id: n.status for n in model.nodes.values()} == {
        "question": "error", "findings": "error", "recommendation": None,
        "missing:recomendation": None, GATE_ID: "error"}
    assert model.nodes["question"].badge == "✖ unknown_key"
    assert model.nodes["question"].tooltip == (
        "_codev/schemas/research/schema.yaml:7:5: unknown key 'requries'; "
        "did you mean 'requires'?")
    assert model.nodes["missing:recomendation"].kind == "missing"
    assert edges(model) == {
        ("recommendation", "findings", "cycle"), ("findings", "recommendation", "cycle"),
        ("missing:recomendation", GATE_ID, "dangling")}
    styles = {(e.source, e.target): (e.style, e.label) for e in model.edges}
    assert styles[("missing:recomendation", GATE_ID)] == ("dashed", "")
    assert styles[("findings", "recommendation")] == ("bold", "cycle")
    assert [key for key, _ in model.legend] == ["error", "missing", "cycle"]


def test_a_three_cycle_and_a_self_dependency() -> None:
    model = broken("cycle-three")
    cycle = {(s, t) for s, t, k in edges(model) if k == "cycle"}
    assert cycle == {("b", "a"), ("c", "b"), ("a", "c")}
    assert (model.nodes["tasks"].rank, model.nodes[GATE_ID].rank) == (0, 1)
    loop = broken("self-dependency")
    assert ("tasks", "tasks", "cycle") in edges(loop)
    assert ("proposal", "tasks", "requires") in edges(loop)


def test_dangling_requires_and_duplicate_ids() -> None:
    model = broken("many-problems")
    assert ("missing:desing", "tasks", "dangling") in edges(model)
    assert model.nodes["design"].badge == "✖ missing_key\n✖ unknown_key"
    assert model.nodes["tasks"].badge == "✖ reserved_role\n✖ unknown_artifact"
    assert model.nodes[GATE_ID].status == "error"
    twice = broken("duplicate-artifact-id")
    assert set(twice.nodes) == {"proposal", "tasks", "proposal (#3)", GATE_ID}
    assert twice.nodes["proposal (#3)"].status == "error"
    assert twice.nodes["proposal"].status is None


def test_odd_raw_data_still_draws() -> None:
    model = broken_schema_graph(
        {"artifacts": ["text", {"generates": "x.md"}, {"id": "b", "requires": "a"}]},
        [Problem("wrong_type", "nope", key="artifacts[2].requires"),
         Problem("missing_key", "no name")], name="odd")
    assert set(model.nodes) == {"artifacts[0]", "artifacts[1]", "b"}
    assert model.nodes["artifacts[0]"].detail == "no generates"
    assert model.nodes["b"].status == "error"
    assert model.edges == []
    assert model.title == "schema odd — invalid: 2 problems (1 not shown on a node)"
    assert broken_schema_graph(["not", "a", "mapping"], name="x").nodes == {}
    assert broken("missing-apply").nodes.keys() == {"tasks"}


def test_a_valid_schema_from_raw_data_matches_its_shape() -> None:
    raw = crewbook.validate_schema(FULL).graph_model()
    loaded = crewbook.load_schema(FULL).graph_model()
    assert edges(raw) == edges(loaded)
    assert {n.id: n.rank for n in raw.nodes.values()} == {
        n.id: n.rank for n in loaded.nodes.values()}
    assert raw.title == "schema full-featured"


def test_unreadable_files_give_no_drawing(tmp_path: Path) -> None:
    report = crewbook.validate_schema(BROKEN / "malformed-yaml")
    assert report_graph(report) is None
    with pytest.raises(crewbook.CrewbookError, match="nothing to draw"):
        report.graph_model()
    assert report_graph(crewbook.ValidationReport(())) is None
    with pytest.raises(SchemaError, match="cannot draw"):
        schema_path_graph(BROKEN / "malformed-yaml")
    for name in ("empty-file", "not-a-mapping"):  # nothing to draw from: said so, not a crash
        assert report_graph(crewbook.validate_schema(BROKEN / name)) is None
        with pytest.raises(SchemaError, match="holds no YAML mapping to draw from") as info:
            schema_path_graph(BROKEN / name)
        assert info.value.codes == [name.replace("-", "_")]


def test_listing(tour: Path) -> None:
    model = crewbook.Project(tour).schemas().graph_model()
    assert model.clusters == {"lite": "lite (project)", "spec-driven": "spec-driven (built-in)",
                              "research": "research (unusable)"}
    assert model.nodes["research/unusable"].status == "error"
    assert model.nodes["research/unusable"].detail == "unusable: 3 problems"
    assert ("lite/brief", "lite/specs", "requires") in edges(model)
    assert model.nodes["spec-driven/tasks"].group == "spec-driven"
    assert model.title == "schemas of tour"


def test_role_matrix_frame() -> None:
    frame = role_matrix_frame(crewbook.load_schema(FULL))
    assert list(frame.index) == ["proposal", "checks", "specs", "design", "tasks"]
    assert list(frame.columns) == ["author", "designer"]
    assert (frame.index.name, frame.columns.name) == ("artifact", "role")
    assert all(str(t) == "Int64" for t in frame.dtypes)
    assert frame.loc["proposal", "author"] == 2
    assert frame.loc["proposal", "designer"] == 1, "design requires proposal: its role reads it"
    assert frame.loc["design", "designer"] == 2
    assert pd.isna(frame.loc["tasks", "author"])
    empty = role_matrix_frame(crewbook.get_schema("spec-driven"))
    assert (list(empty.columns), len(empty)) == ([], 4)


def test_role_matrix_display() -> None:
    schema = crewbook.load_schema(FULL)
    matrix = schema.role_matrix()
    assert matrix.title == "schema full-featured: artifact × role"
    assert "| proposal | writes | reads    |" in str(matrix)
    assert ">writes</td>" in matrix._repr_html_()
    assert role_matrix(schema).frame.equals(matrix.frame)
