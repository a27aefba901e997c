"""Schema validation (SPEC A3, A4, A7): one broken schema per rule, cycles, the order."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crewbook
from crewbook.artifacts.checks import check_schema, find_cycles
from crewbook.artifacts.model import SchemaFile
from crewbook.artifacts.schema import Schema
from crewbook.artifacts.step_roles import builtin_role_ids
from crewbook.sources import parse_yaml

DATA = Path(__file__).parents[1] / "data"
BROKEN = sorted(p for p in (DATA / "broken_schemas").iterdir() if p.is_dir())
VALID = sorted(p for p in (DATA / "valid_schemas").iterdir() if p.is_dir())
EXPECT = re.compile(r"^# expect: (?P<code>[a-z_]+) (?P<line>\d+|-)(?: (?P<fragment>.+))?$")
PROBLEM_KEYS = {"code", "path", "line", "column", "key", "message"}


def expectations(file: Path) -> list[tuple[str, int | None, str | None]]:
    """The `# expect: <code> <line> [message fragment]` lines heading a case file."""
    found = []
    for line in file.read_text("utf-8").splitlines():
        match = EXPECT.match(line)
        if not match:
            break
        where = match["line"]
        found.append((match["code"], None if where == "-" else int(where), match["fragment"]))
    return found


# ----------------------------------------------------------- the broken cases


def test_there_is_a_broken_case_per_rule() -> None:
    codes = {code for case in BROKEN for code, _, _ in expectations(case / "schema.yaml")}
    assert len(BROKEN) >= 24
    assert codes >= {
        "missing_key",
        "invalid_id",
        "invalid_value",
        "wrong_type",
        "empty_list",
        "unknown_key",
        "duplicate_id",
        "unknown_artifact",
        "dependency_cycle",
        "missing_template",
        "unsafe_path",
        "duplicate_role",
        "reserved_role",
        "yaml_syntax",
        "not_a_mapping",
        "empty_file",
        "duplicate_key",
    }


@pytest.mark.parametrize("case", BROKEN, ids=lambda p: p.name)
def test_broken_schema_reports_exactly_the_expected_problems(case: Path, cli) -> None:
    expected = expectations(case / "schema.yaml")
    assert expected, f"{case.name}/schema.yaml must start with '# expect: <code> <line>'"

    result = cli("validate", case, "--json")

    assert result.code == 1
    assert result.err == ""
    report = result.json
    assert report["valid"] is False
    problems = report["problems"]
    assert all(set(p) >= PROBLEM_KEYS for p in problems)
    assert all(p["path"].endswith("schema.yaml") for p in problems)
    got = sorted((p["code"], p["line"] or 0) for p in problems)
    assert got == sorted((code, line or 0) for code, line, _ in expected)
    for code, line, fragment in expected:
        if fragment:
            messages = [p["message"] for p in problems if (p["code"], p["line"]) == (code, line)]
            assert any(fragment in m for m in messages), (fragment, messages)


@pytest.mark.parametrize("case", BROKEN, ids=lambda p: p.name)
def test_loading_a_broken_schema_raises_every_error_at_once(case: Path) -> None:
    expected = expectations(case / "schema.yaml")
    warnings = {"schema_name_mismatch", "duplicate_output", "tracks_not_generated"}
    with pytest.raises(crewbook.SchemaError) as info:
        crewbook.load_schema(case)
    assert sorted(info.value.codes) == sorted(c for c, _, _ in expected if c not in warnings)
    assert "Traceback" not in str(info.value)


@pytest.mark.parametrize("case", VALID, ids=lambda p: p.name)
def test_valid_schema_exits_0_without_any_problem(case: Path, cli) -> None:
    result = cli("validate", case, "--json")
    assert result.code == 0
    assert result.json == {"valid": True, "problems": []}
    assert crewbook.load_schema(case).name == case.name


def test_text_output_names_file_line_column_and_key(cli) -> None:
    result = cli("validate", DATA / "broken_schemas" / "artifact-key-typo")
    assert result.code == 1
    assert (
        "schema.yaml:8:5: artifacts[1].requries: unknown key 'requries'; "
        "did you mean 'requires'? [unknown_key]"
    ) in result.out


# ------------------------------------------------------------- single rules


def check(text: str, folder: Path | None = None, name: str = "s"):
    doc = parse_yaml(text, "schema.yaml")
    return check_schema(doc, folder or Path("/nonexistent"), schema_name=name)


def codes(problems) -> list[tuple[str, int | None]]:
    return [(p.code, p.line) for p in problems]


GOOD = """\
name: s
artifacts:
  - id: proposal
    generates: proposal.md
  - id: tasks
    generates: tasks.md
    requires: [proposal]
apply:
  requires: [tasks]
  tracks: tasks.md
"""


def test_a_good_schema_gives_a_model_and_no_problem() -> None:
    model, problems = check(GOOD)
    assert problems == []
    assert isinstance(model, SchemaFile)
    assert model.version == 1
    assert [a.id for a in model.artifacts] == ["proposal", "tasks"]


def test_cycle_message_shows_the_whole_path_from_the_first_declared() -> None:
    text = GOOD.replace("generates: proposal.md", "generates: proposal.md\n    requires: [tasks]")
    model, problems = check(text)
    assert model is None
    [problem] = problems
    assert problem.code == "dependency_cycle"
    assert "proposal → tasks → proposal" in problem.message
    assert (problem.line, problem.key) == (5, "artifacts[0].requires[0]")


def test_two_independent_cycles_are_both_reported() -> None:
    text = """\
name: s
artifacts:
  - {id: a, generates: a.md, requires: [b]}
  - {id: b, generates: b.md, requires: [a]}
  - {id: c, generates: c.md, requires: [d]}
  - {id: d, generates: d.md, requires: [c]}
apply: {requires: [d], tracks: d.md}
"""
    _, problems = check(text)
    messages = [p.message for p in problems if p.code == "dependency_cycle"]
    assert len(messages) == 2
    assert "a → b → a" in messages[0]
    assert "c → d → c" in messages[1]


def test_structural_errors_do_not_hide_the_cross_checks() -> None:
    text = """\
name: s
version: two
artifacts:
  - {id: a, generates: a.md, requires: [b]}
  - {id: b, generates: 7, requires: [a, zz]}
apply: {requires: [b], tracks: b.md}
"""
    _, problems = check(text)
    assert codes(problems) == [
        ("wrong_type", 2),
        ("dependency_cycle", 4),
        ("wrong_type", 5),
        ("unknown_artifact", 5),
    ]
    assert [p.line for p in problems] == sorted(p.line for p in problems)


@pytest.mark.parametrize(
    ("fragment", "code"),
    [
        ("artifacts: tasks", "wrong_type"),
        ("artifacts: [tasks]", "wrong_type"),
        ("artifacts: [{id: 5, generates: a.md}]", "wrong_type"),
        ("artifacts: [{id: a, generates: a.md, requires: [1]}]", "wrong_type"),
        ("artifacts: [{id: a, generates: a.md, role: editor}]", "wrong_type"),
        ("artifacts: [{id: a, generates: a.md, template: 3}]", "wrong_type"),
    ],
)
def test_odd_types_are_reported_not_crashed_on(fragment: str, code: str) -> None:
    text = f"name: s\n{fragment}\napply: {{requires: [a], tracks: a.md}}\n"
    model, problems = check(text)
    assert model is None
    assert code in [p.code for p in problems]


def test_apply_that_is_not_a_mapping_is_a_wrong_type() -> None:
    text = "name: s\nartifacts: [{id: a, generates: a.md}]\napply: [a]\n"
    _, problems = check(text)
    assert codes(problems) == [("wrong_type", 3)]


@pytest.mark.parametrize("role_id", sorted(builtin_role_ids()))
def test_every_builtin_step_role_id_is_reserved(role_id: str) -> None:
    text = GOOD.replace(
        "generates: tasks.md",
        f"generates: tasks.md\n    role: {{id: {role_id}, name: {{en: X}}, question: Q?}}",
    )
    _, problems = check(text)
    assert codes(problems) == [("reserved_role", 7)]
    assert {"skeptic", "implementer", "verifier", "archivist"} <= builtin_role_ids()


def test_role_name_needs_a_non_empty_english_name() -> None:
    text = GOOD.replace(
        "generates: tasks.md",
        "generates: tasks.md\n    role: {id: planner, name: {en: '', fr: X}, question: Q?}",
    )
    _, problems = check(text)
    assert codes(problems) == [("invalid_value", 7)]


def test_duplicate_output_is_a_warning_and_the_schema_stays_usable() -> None:
    text = GOOD.replace("generates: proposal.md", "generates: tasks.md")
    model, problems = check(text)
    assert model is not None
    assert [(p.code, p.severity, p.line) for p in problems] == [("duplicate_output", "warning", 6)]
    assert "'tasks' generates 'tasks.md', as 'proposal' does" in problems[0].message


def test_tracks_no_artifact_generates_is_a_warning() -> None:
    model, problems = check(GOOD.replace("tracks: tasks.md", "tracks: todo.md"))
    assert model is not None
    assert [(p.code, p.severity, p.line) for p in problems] == [
        ("tracks_not_generated", "warning", 10)
    ]


def test_name_differing_from_the_folder_is_a_warning() -> None:
    model, problems = check(GOOD, name="other")
    assert model is not None
    [problem] = problems
    assert (problem.code, problem.severity, problem.line) == ("schema_name_mismatch", "warning", 1)
    assert "set `name: other`" in problem.message


def test_templates_are_looked_up_in_the_schema_templates_folder(tmp_path: Path) -> None:
    (tmp_path / "templates" / "sub").mkdir(parents=True)
    (tmp_path / "templates" / "sub" / "tasks.md").write_text("- [ ] 1.1\n")
    ok = GOOD.replace("generates: tasks.md", "generates: tasks.md\n    template: sub/tasks.md")
    model, problems = check(ok, tmp_path)
    assert (model is not None, problems) == (True, [])

    no_folder = GOOD.replace("generates: tasks.md", "generates: tasks.md\n    template: t.md")
    _, problems = check(no_folder, tmp_path / "elsewhere")
    assert codes(problems) == [("missing_template", 7)]
    assert "no templates/ folder" in problems[0].message


def test_a_template_symlink_leading_outside_templates_is_unsafe(tmp_path: Path) -> None:
    (tmp_path / "templates").mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("not a template")
    os.symlink(secret, tmp_path / "templates" / "tasks.md")
    text = GOOD.replace("generates: tasks.md", "generates: tasks.md\n    template: tasks.md")
    _, problems = check(text, tmp_path)
    assert codes(problems) == [("unsafe_path", 7)]
    assert "outside templates/" in problems[0].message


# ---------------------------------------------------------------- properties


@st.composite
def dags(draw: st.DrawFn) -> list[tuple[str, list[str]]]:
    """(id, requires) in declaration order, for a random acyclic graph."""
    n = draw(st.integers(1, 9))
    ids = [f"a{i}" for i in range(n)]  # a hidden topological order
    edges = {
        ids[j]: sorted(draw(st.sets(st.sampled_from(ids[:j]))) if j else set()) for j in range(n)
    }
    declared = draw(st.permutations(ids))
    return [(art_id, edges[art_id]) for art_id in declared]


def _schema(artifacts: list[tuple[str, list[str]]]) -> Schema:
    data = {
        "name": "random",
        "artifacts": [{"id": a, "generates": f"{a}.md", "requires": r} for a, r in artifacts],
        "apply": {"requires": [artifacts[-1][0]], "tracks": f"{artifacts[-1][0]}.md"},
    }
    model, problems = check(yaml.safe_dump(data, sort_keys=False), name="random")
    assert [p.code for p in problems] == []
    assert model is not None
    return Schema(name="random", source="file", folder=Path("."), model=model)


@settings(
    max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(dags())
def test_order_is_topological_with_ties_by_declaration(artifacts) -> None:
    schema = _schema(artifacts)
    declared = [a for a, _ in artifacts]
    requires = dict(artifacts)
    order = schema.order

    assert sorted(order) == sorted(declared)
    rank = {a: i for i, a in enumerate(order)}
    assert all(rank[dep] < rank[a] for a, deps in requires.items() for dep in deps)
    placed: set[str] = set()
    for chosen in order:
        available = [a for a in declared if a not in placed and set(requires[a]) <= placed]
        assert chosen == available[0], "ties are broken by declaration order"
        placed.add(chosen)
    depth = schema.depth
    assert all(depth[a] == 1 + max((depth[d] for d in requires[a]), default=-1) for a in declared)


def _acyclic(graph: dict[str, list[str]]) -> bool:
    waiting = {node: set(deps) for node, deps in graph.items()}
    while waiting:
        free = [node for node, deps in waiting.items() if not deps]
        if not free:
            return False
        for node in free:
            del waiting[node]
        for deps in waiting.values():
            deps.difference_update(free)
    return True


@st.composite
def graphs(draw: st.DrawFn, with_cycle: bool) -> dict[str, list[str]]:
    n = draw(st.integers(1, 8))
    nodes = [f"n{i}" for i in range(n)]
    graph = {node: sorted(draw(st.sets(st.sampled_from(nodes), max_size=3))) for node in nodes}
    if with_cycle:
        ring = draw(st.lists(st.sampled_from(nodes), min_size=1, max_size=n, unique=True))
        for here, there in zip(ring, ring[1:] + ring[:1], strict=True):
            if there not in graph[here]:
                graph[here].append(there)
    return graph


def _assert_real_cycle(graph: dict[str, list[str]], cycle: list[str]) -> None:
    assert cycle, "a cycle has at least one node"
    assert len(set(cycle)) == len(cycle), "an elementary cycle visits each node once"
    for here, there in zip(cycle, cycle[1:] + cycle[:1], strict=True):
        assert there in graph[here], f"{here} does not require {there}"
    declared = list(graph)
    assert cycle[0] == min(cycle, key=declared.index), "starts at its first declared node"


@settings(max_examples=200, deadline=None, database=None)
@given(graphs(with_cycle=True))
def test_find_cycles_reports_real_cycles_in_a_cyclic_graph(graph) -> None:
    cycles = find_cycles(graph)
    assert cycles
    for cycle in cycles:
        _assert_real_cycle(graph, cycle)


@settings(max_examples=200, deadline=None, database=None)
@given(graphs(with_cycle=False))
def test_find_cycles_is_empty_exactly_when_the_graph_is_acyclic(graph) -> None:
    cycles = find_cycles(graph)
    assert (cycles == []) == _acyclic(graph)
    for cycle in cycles:
        _assert_real_cycle(graph, cycle)
