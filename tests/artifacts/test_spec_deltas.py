"""Spec deltas (A9): parsing into frames, OpenSpec's validation rules, the archive
preview (pure) and the archive itself (refusing, atomic)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from crewbook.artifacts import Project, archive_change, parse_delta, parse_spec, preview_archive
from crewbook.artifacts.archive import ArchiveRefused, recover_archives
from crewbook.artifacts.specs import requirements_frame, scenarios_frame

MAIN = """# auth Specification

## Purpose
Who may log in.

## Requirements
### Requirement: Login
The system SHALL let users log in.

#### Scenario: good password
- **WHEN** the password matches
- **THEN** the user is in

#### Scenario: bad password
- **WHEN** it does not
- **THEN** refused

### Requirement: Logout
The system SHALL let users log out.

#### Scenario: logout
- **WHEN** asked
- **THEN** out

```
### Requirement: Not real (fenced)
```

### Requirement: Old name
The system MUST keep sessions.

#### Scenario: kept
- **WHEN** idle
- **THEN** kept
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def project_with(tmp_path: Path, delta: str, name: str = "change-x") -> Project:
    base = tmp_path / "openspec"
    write(base / "specs" / "auth" / "spec.md", MAIN)
    write(base / "changes" / name / "proposal.md", "# p\n")
    write(base / "changes" / name / "specs" / "auth" / "spec.md", delta)
    return Project(tmp_path)


def codes(project: Project, name: str = "change-x") -> list[tuple[str, str]]:
    return [(p.code, p.severity) for p in project.change(name).validate_deltas()]


GOOD = """## ADDED Requirements
### Requirement: Two factor
The system SHALL ask for a second factor.

#### Scenario: code sent
- **WHEN** logging in
- **THEN** a code is sent

## MODIFIED Requirements
### Requirement: Login
The system SHALL let users log in with email.

#### Scenario: good password
- **WHEN** the password matches
- **THEN** the user is in

#### Scenario: bad password
- **WHEN** it does not
- **THEN** refused

## REMOVED Requirements
### Requirement: Logout

## RENAMED Requirements
- FROM: `### Requirement: Old name`
- TO: `### Requirement: Sessions`
"""


def test_main_spec_requirements_and_scenarios_with_lines() -> None:
    spec = parse_spec(MAIN, "auth", "openspec/specs/auth/spec.md")
    assert spec.names() == ["Login", "Logout", "Old name"]  # the fenced one is not real
    assert spec["Login"].line == 7
    assert [(s.name, s.line) for s in spec["Login"].scenarios] == [
        ("good password", 10), ("bad password", 14)]
    df = requirements_frame([spec])
    assert list(df.columns) == ["capability", "requirement", "op", "scenarios", "normative",
                                "file", "line"]
    assert list(df["scenarios"]) == [2, 1, 1]
    assert str(df["line"].dtype) == "Int64"
    assert list(scenarios_frame([spec])["line"]) == [10, 14, 21, 32]


def test_delta_operations_parsed_with_lines() -> None:
    delta = parse_delta(GOOD, "auth", "d.md")
    assert [r.key for r in delta.added] == ["Two factor"]
    assert [r.key for r in delta.modified] == ["Login"]
    assert delta.removed == (("Logout", 22),)
    assert delta.renamed == (("Old name", "Sessions", 25),)
    df = requirements_frame([delta], {"change": "c"})
    assert list(df["op"].astype(str)) == ["ADDED", "MODIFIED", "REMOVED", "RENAMED"]
    assert list(df["change"]) == ["c"] * 4


def test_valid_delta_has_no_problem(tmp_path: Path) -> None:
    assert codes(project_with(tmp_path, GOOD)) == []


@pytest.mark.parametrize(("delta", "expected"), [
    ("## ADDED Requirements\n### Requirement: X\nThe system SHALL x.\n",
     [("requirement_no_scenario", "error")]),
    ("## ADDED Requirements\n### Requirement: X\nthe system does x.\n\n#### Scenario: s\n- ok\n",
     [("requirement_not_normative", "warning")]),
    ("## ADDED Requirements\n### Requirement: X\n\n#### Scenario: s\n- ok\n",
     [("requirement_no_text", "error")]),
    ("# Notes only\n", [("delta_no_sections", "error"), ("no_deltas", "error")]),
    ("## ADDED Requirements\nnothing\n", [("delta_empty", "error"), ("no_deltas", "error")]),
    ("## ADDED Requirements\n### Requirement: X\nThe system SHALL x.\n\n#### Scenario: s\n- a\n"
     "### Requirement: X\nThe system SHALL x.\n\n#### Scenario: s\n- a\n",
     [("duplicate_requirement", "error")]),
    ("## MODIFIED Requirements\n### Requirement: Login\nThe system SHALL log in.\n\n"
     "#### Scenario: good password\n- ok\n",
     [("scenario_dropped", "error")]),
    ("## MODIFIED Requirements\n### Requirement: Nope\nThe system SHALL x.\n\n"
     "#### Scenario: s\n- ok\n", [("delta_target_missing", "warning")]),
    ("## REMOVED Requirements\n### Requirement: Logout\n\n## MODIFIED Requirements\n"
     "### Requirement: Logout\nThe system SHALL x.\n\n#### Scenario: logout\n- ok\n",
     [("delta_conflict", "error")]),
    ("## RENAMED Requirements\n- FROM: `### Requirement: Old name`\n",
     [("rename_unpaired", "error"), ("delta_empty", "error"), ("no_deltas", "error")]),
    ("## Notes\n### Requirement: Stray\nThe system SHALL x.\n\n## ADDED Requirements\n"
     "### Requirement: X\nThe system SHALL x.\n\n#### Scenario: s\n- a\n",
     [("requirement_outside_delta", "warning")]),
])
def test_delta_rules(tmp_path: Path, delta: str, expected: list[tuple[str, str]]) -> None:
    assert codes(project_with(tmp_path, delta)) == expected


def test_problems_name_file_and_line(tmp_path: Path) -> None:
    project = project_with(tmp_path, "## ADDED Requirements\n\n### Requirement: X\nThe system "
                           "SHALL x.\n")
    [problem] = project.change("change-x").validate_deltas()
    assert problem.path == "openspec/changes/change-x/specs/auth/spec.md"
    assert problem.line == 3
    assert "Scenario" in problem.message


def test_skip_specs_accepts_no_delta(tmp_path: Path) -> None:
    base = tmp_path / "openspec"
    write(base / "changes" / "c" / ".openspec.yaml", "schema: spec-driven\nskip_specs: true\n")
    assert codes(Project(tmp_path), "c") == []
    write(base / "changes" / "c" / "specs" / "a" / "spec.md", "## ADDED Requirements\n")
    assert ("skip_specs_conflict", "error") in codes(Project(tmp_path), "c")


def test_delta_in_unread_place_is_an_error(tmp_path: Path) -> None:
    project = project_with(tmp_path, GOOD)
    write(project.changes_folder / "change-x" / "specs" / "auth.md", "## ADDED Requirements\n")
    assert ("delta_not_read", "error") in codes(project)


def test_preview_applies_in_openspec_order_and_writes_nothing(tmp_path: Path) -> None:
    project = project_with(tmp_path, GOOD)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    preview = preview_archive(project.change("change-x"))
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
    assert preview.ok
    [update] = preview.updates
    after = parse_spec(update.after or "", "auth")
    assert after.names() == ["Login", "Sessions", "Two factor"]
    assert "with email" in after["Login"].text
    assert dict(update.statuses) == {"Sessions": "renamed", "Logout": "removed",
                                     "Login": "modified", "Two factor": "added"}
    frame = preview.frame()
    assert list(zip(frame["requirement"], frame["status"].astype(str), strict=True)) == [
        ("Login", "modified"), ("Sessions", "renamed"), ("Two factor", "added"),
        ("Logout", "removed")]
    text = preview.diff(40)
    assert "before" in text
    assert "> ### Requirement: Two factor" in text
    dot = preview.dot()
    assert "Two factor" in dot
    assert "auth" in dot
    assert "<table" in preview._repr_html_()
    assert repr(preview).startswith("<ArchivePreview 'change-x': ok")


def test_new_capability_gets_a_skeleton(tmp_path: Path) -> None:
    project = project_with(tmp_path, GOOD)
    write(project.changes_folder / "change-x" / "specs" / "billing" / "spec.md",
          "## Purpose\nMoney in.\n\n## ADDED Requirements\n### Requirement: Pay\nThe system "
          "SHALL take payments.\n\n#### Scenario: s\n- ok\n")
    update = next(u for u in preview_archive(project.change("change-x")).updates
                  if u.capability == "billing")
    assert update.before is None
    assert (update.after or "").startswith("# billing Specification\n\n## Purpose\nMoney in.")


def test_archive_refuses_invalid_deltas_and_writes_nothing(tmp_path: Path) -> None:
    project = project_with(tmp_path, "## MODIFIED Requirements\n### Requirement: Nope\nThe "
                           "system SHALL x.\n\n#### Scenario: s\n- ok\n")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    with pytest.raises(ArchiveRefused) as info:
        archive_change(project.change("change-x"))
    assert any("Nope" in p.message for p in info.value.problems)
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_archive_moves_change_and_updates_spec(tmp_path: Path, cli: Callable[..., Any]) -> None:
    project_with(tmp_path, GOOD)
    dry = cli("--project", tmp_path, "archive", "change-x", "--dry-run", "--json")
    assert dry.code == 0
    assert dry.json["ok"] is True
    assert (tmp_path / "openspec" / "changes" / "change-x").is_dir()
    done = cli("--project", tmp_path, "archive", "change-x")
    assert done.code == 0, done.err
    archived = Project(tmp_path).archived()
    assert [a.name for a in archived] == ["change-x"]
    spec = (tmp_path / "openspec" / "specs" / "auth" / "spec.md").read_text()
    assert "### Requirement: Sessions" in spec
    assert "Logout" not in spec
    assert Project(tmp_path).changes() == []


def test_archive_crash_after_commit_point_is_finished_by_recovery(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crash after the journal is committed (here: the folder move fails) leaves a
    journal that the next opening of the project (or `recover_archives`) finishes: the
    new state, complete."""
    project = project_with(tmp_path, GOOD)
    real_rename = os.rename

    def crash(src: Any, dst: Any) -> None:
        raise OSError("simulated crash")

    monkeypatch.setattr(os, "rename", crash)
    with pytest.raises(OSError, match="simulated crash"):
        archive_change(project.change("change-x"))
    monkeypatch.setattr(os, "rename", real_rename)
    assert recover_archives(project) == ["change-x"]
    assert [a.name for a in Project(tmp_path).archived()] == ["change-x"]
    assert "Sessions" in (tmp_path / "openspec" / "specs" / "auth" / "spec.md").read_text()
    left = (tmp_path / "openspec" / "changes" / "archive").glob(".crewbook-*")
    assert [p.name for p in left] == []  # the journal and staging are gone


def test_archive_crash_before_commit_point_leaves_old_state(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = project_with(tmp_path, GOOD)
    before = (tmp_path / "openspec" / "specs" / "auth" / "spec.md").read_bytes()
    real_replace = os.replace

    def crash(src: Any, dst: Any) -> None:
        if str(dst).endswith(".crewbook-journal.json"):
            raise OSError("simulated crash")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="simulated crash"):
        archive_change(project.change("change-x"))
    monkeypatch.setattr(os, "replace", real_replace)
    assert recover_archives(Project(tmp_path)) == []
    assert (tmp_path / "openspec" / "specs" / "auth" / "spec.md").read_bytes() == before
    assert [c.name for c in Project(tmp_path).changes()] == ["change-x"]
