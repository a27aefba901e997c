"""Main specs checked with the OpenSpec CLI's rules (`openspec validate --specs`) and
counted as `openspec list --specs` counts them."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from crewbook.artifacts.spec_checks import check_main_spec, requirement_count

from .test_openspec_parity import CLI, openspec

PURPOSE = "This capability covers the whole login flow for every user of the app."
GOOD_REQ = "### Requirement: X\nThe system SHALL x.\n\n#### Scenario: s\n- WHEN a\n"


def spec(purpose: str | None = PURPOSE, body: str | None = GOOD_REQ, tail: str = "") -> str:
    text = "# cap\n\n"
    if purpose is not None:
        text += f"## Purpose\n{purpose}\n\n"
    if body is not None:
        text += f"## Requirements\n{body}"
    return text + tail


def codes(text: str) -> list[tuple[str, str, int | None]]:
    return [(p.code, p.severity, p.line) for p in check_main_spec(text, "specs/cap/spec.md")]


def test_a_good_spec_has_no_problem() -> None:
    assert codes(spec()) == []
    assert codes(spec().replace("\n", "\r\n")) == []


@pytest.mark.parametrize(("text", "expected"), [
    (spec(purpose=None), [("spec_no_purpose", "error", None)]),
    (spec(purpose=""), [("spec_no_purpose", "error", None)]),
    (spec(body=None), [("spec_no_requirements_section", "error", None)]),
    (spec(body=""), [("spec_no_requirements", "error", None)]),
    (spec(body="### Requirement: X\nThe system SHALL x.\n"),
     [("requirement_no_scenario", "error", 7)]),
    (spec(body="### Requirement: X\nThe system SHALL x.\n\n#### Scenario: s\n"),
     [("requirement_no_scenario", "error", 7)]),
    (spec(body=GOOD_REQ.replace("SHALL", "does")), [("requirement_not_normative", "warning", 7)]),
    (spec(tail="\n## ADDED Requirements\n"), [("spec_delta_header", "error", 13)]),
    (spec(body=GOOD_REQ + "\n" + GOOD_REQ), [("duplicate_requirement", "error", 13)]),
    (spec(tail="\n## Notes\n### Requirement: Y\nThe system SHALL y.\n"),
     [("requirement_outside_requirements", "error", 14)]),
    (spec(purpose="Too short."), [("purpose_too_brief", "warning", None)]),
    (spec(purpose="TBD"), [("purpose_placeholder", "warning", 4)]),
    (spec(purpose="TBD - created by archiving change x. Update Purpose after archive."),
     [("purpose_placeholder", "warning", 4)]),
])
def test_each_rule_with_its_severity_and_line(text: str,
                                              expected: list[tuple[str, str, int | None]]
                                              ) -> None:
    assert codes(text) == expected


def test_a_level_3_note_under_requirements_is_a_requirement_without_scenario() -> None:
    found = check_main_spec(spec(body="### Note\nsome note\n\n" + GOOD_REQ), "f.md")
    assert [(p.code, p.line) for p in found] == [("requirement_no_scenario", 7)]
    assert "'Note'" in found[0].message


@pytest.mark.parametrize(("text", "count"), [
    (spec(), 1),
    (spec(purpose=None), 0),
    (spec(body=None), 0),
    (spec(body="### Note\nsome note\n\n" + GOOD_REQ), 2),
    (spec(body="#### Scenario: lost\n- WHEN a\n\n" + GOOD_REQ), 2),
    (spec(body="### X without prefix\nThe system SHALL x.\n"), 1),
    (spec(body="```\n### Requirement: fenced\n```\n" + GOOD_REQ), 1),
])
def test_requirement_count_as_the_cli_lists_it(text: str, count: int) -> None:
    assert requirement_count(text) == count


def test_validate_reports_main_specs_and_strict_counts_warnings(
        tmp_path: Path, cli: Callable[..., Any]) -> None:
    (tmp_path / "openspec" / "changes").mkdir(parents=True)
    for name, text in (("ok", spec()), ("weak", spec(body=GOOD_REQ.replace("SHALL", "does")))):
        (tmp_path / "openspec" / "specs" / name).mkdir(parents=True)
        (tmp_path / "openspec" / "specs" / name / "spec.md").write_text(text)
    done = cli("validate", tmp_path, "--json")
    assert done.code == 0
    assert [(p["path"], p["line"], p["code"]) for p in done.json["problems"]] == [
        ("openspec/specs/weak/spec.md", 7, "requirement_not_normative")]
    strict = cli("validate", tmp_path, "--json", "--strict")
    assert strict.code == 1
    assert not strict.json["valid"]
    (tmp_path / "openspec" / "specs" / "bad").mkdir()
    (tmp_path / "openspec" / "specs" / "bad" / "spec.md").write_text(spec(purpose=None))
    assert cli("validate", tmp_path, "--json").code == 1


def test_metadata_without_schema_is_said(tmp_path: Path, cli: Callable[..., Any]) -> None:
    change = tmp_path / "openspec" / "changes" / "c1"
    change.mkdir(parents=True)
    (change / ".openspec.yaml").write_text("created: 2025-01-01\n")
    (change / "tasks.md").write_text("- [x] one\n- [ ] two\n")
    done = cli("--project", tmp_path, "status", "--json")
    assert [c["change"] for c in done.json["changes"]] == ["c1"]
    found = [(p["code"], p["severity"]) for c in done.json["changes"] for p in c["problems"]]
    assert ("metadata_no_schema", "warning") in found


def _no_schema_project(root: Path, metadata: str = "created: 2025-01-01\n") -> Path:
    change = root / "openspec" / "changes" / "c1"
    (change / "specs" / "auth").mkdir(parents=True)
    (change / ".openspec.yaml").write_text(metadata)
    (change / "proposal.md").write_text("## Why\nBecause.\n")
    (change / "specs" / "auth" / "spec.md").write_text(
        "## ADDED Requirements\n### Requirement: A\nThe system SHALL a.\n\n"
        "#### Scenario: a\n- WHEN a\n")
    return root


@pytest.mark.parametrize(("metadata", "key", "line", "warning"), [
    ("created: 2025-01-01\n", "schema", 1, "metadata_no_schema"),
    ("schema: spec-driven\nretire_capabilities: yes-please\n", "retire_capabilities", 2,
     "retire_marker_invalid")], ids=["no schema", "marker not boolean"])
def test_metadata_the_cli_refuses_is_refused_by_status_as_the_cli_does(
        tmp_path: Path, cli: Callable[..., Any], metadata: str, key: str, line: int,
        warning: str) -> None:
    """`openspec status` refuses the change ("Invalid metadata", exit 1) and `openspec
    validate` passes it: crewbook's status says the same error (file, line, key) beside
    its own reading (a warning), and its validate passes it with the warning."""
    root = _no_schema_project(tmp_path, metadata)
    for args in (("status", "--json"), ("status", "--change", "c1", "--json")):
        done = cli("--project", root, *args)
        assert done.code == 1
        problems = done.json["changes"][0]["problems"] if "changes" in done.json \
            else done.json["problems"]
        said = {(p["code"], p["severity"], p["key"], p["path"], p["line"]) for p in problems}
        where = "openspec/changes/c1/.openspec.yaml"
        assert ("metadata_invalid", "error", key, where, line) in said
        assert (warning, "warning", key, where, line) in said
    for strict in ((), ("--strict",)):
        checked = cli("validate", root, "--json", *strict)
        assert checked.code == 0
        assert [p["code"] for p in checked.json["problems"]] == [warning]
    if shutil.which("node") is not None and CLI.exists():  # the CLI itself, when installed
        theirs = openspec(root, "status", "--all", "--json")["changes"][0]
        assert "artifacts" not in theirs
        assert "Invalid metadata" in json.dumps(theirs)
        for strict in ((), ("--strict",)):
            checked_by_cli = openspec(root, "validate", "--all", "--json", *strict)
            assert checked_by_cli["items"][0]["valid"] is True


def test_a_change_naming_an_unknown_schema_stays_listed(tmp_path: Path,
                                                         cli: Callable[..., Any]) -> None:
    for name, schema in (("good", "spec-driven"), ("odd", "no-such-schema")):
        change = tmp_path / "openspec" / "changes" / name
        change.mkdir(parents=True)
        (change / ".openspec.yaml").write_text(f"schema: {schema}\n")
        (change / "tasks.md").write_text("- [x] one\n- [ ] two\n* [x] three\n")
    done = cli("--project", tmp_path, "status", "--json")
    assert done.code == 1
    listed = {c["change"]: c for c in done.json["changes"]}
    assert sorted(listed) == ["good", "odd"]
    assert (listed["odd"]["apply"]["done"], listed["odd"]["apply"]["total"]) == (2, 3)
    assert listed["odd"]["problems"]


SCHEMA = """name: custom
version: 1
artifacts:
  - id: proposal
    generates: proposal.md
    description: Why
    template: proposal.md
  - id: plan
    generates: plan.md
    description: How
    template: plan.md
    requires: [proposal]
apply:
  requires: [plan]
  tracks: progress.md
"""


def test_tracks_no_artifact_writes_counts_tasks_md(tmp_path: Path,
                                                    cli: Callable[..., Any]) -> None:
    """OpenSpec counts tasks.md when no artifact generates `apply.tracks`."""
    schema = tmp_path / "openspec" / "schemas" / "custom"
    schema.mkdir(parents=True)
    (schema / "schema.yaml").write_text(SCHEMA)
    change = tmp_path / "openspec" / "changes" / "c1"
    change.mkdir(parents=True)
    (change / ".openspec.yaml").write_text("schema: custom\n")
    (change / "tasks.md").write_text("- [x] one\n- [ ] two\n")
    (change / "progress.md").write_text("- [x] only\n")
    done = cli("--project", tmp_path, "list", "--json")
    assert [(c["completedTasks"], c["totalTasks"]) for c in done.json["changes"]] == [(1, 2)]


GLOB_SCHEMA = """name: globby
version: 1
artifacts:
  - id: proposal
    generates: proposal.md
    description: Why
    template: proposal.md
  - id: work
    generates: "work/**/*.md"
    description: Work
    template: work.md
    requires: [proposal]
apply:
  requires: [work]
  tracks: "work/**/*.md"
"""


def test_a_glob_tracks_schema_keeps_its_changes_listed_and_counted(
        tmp_path: Path, cli: Callable[..., Any]) -> None:
    """OpenSpec counts the checkboxes of every file the tracked glob matches."""
    schema = tmp_path / "openspec" / "schemas" / "globby"
    schema.mkdir(parents=True)
    (schema / "schema.yaml").write_text(GLOB_SCHEMA)
    change = tmp_path / "openspec" / "changes" / "c1"
    (change / "work" / "a").mkdir(parents=True)
    (change / ".openspec.yaml").write_text("schema: globby\n")
    (change / "tasks.md").write_text("- [ ] not tracked\n")
    (change / "work" / "one.md").write_text("- [x] one\n- [ ] two\n")
    (change / "work" / "a" / "two.md").write_text("- [x] three\n")
    listed = cli("--project", tmp_path, "list", "--json").json["changes"]
    assert [(c["name"], c["completedTasks"], c["totalTasks"]) for c in listed] == [
        ("c1", 2, 3)]
    status = cli("--project", tmp_path, "status", "--json").json["changes"]
    assert [(c["change"], c["apply"]["done"], c["apply"]["total"]) for c in status] == [
        ("c1", 2, 3)]
    # a schema the CLI cannot read (no template): it falls back to tasks.md
    (schema / "schema.yaml").write_text(GLOB_SCHEMA.replace("    template: work.md\n", ""))
    listed = cli("--project", tmp_path, "list", "--json").json["changes"]
    assert [(c["completedTasks"], c["totalTasks"]) for c in listed] == [(0, 1)]


def test_strict_keeps_crewbooks_advisory_notes_as_warnings() -> None:
    """`--strict` is `openspec validate --strict`: the CLI's warnings become errors,
    crewbook's notes on keys it ignores do not."""
    from crewbook.commands.validate import strict
    from crewbook.errors import Problem
    from crewbook.report import ValidationReport

    report = ValidationReport((Problem("unused_key", "goal", severity="warning"),
                               Problem("requirement_not_normative", "x", severity="warning")))
    assert [p.severity for p in strict(report).problems] == ["warning", "error"]


def test_a_huge_spec_is_checked_in_linear_time() -> None:
    """20,000 requirements: the section tree is built in one pass (no header-pair scan)."""
    body = "".join(f"### Requirement: R{i}\nThe system SHALL r.\n\n#### Scenario: s\n- WHEN a\n\n"
                   for i in range(20_000))
    assert check_main_spec(spec(body=body), "f.md") == []
    assert requirement_count(spec(body=body)) == 20_000
