"""Real OpenSpec projects (`tests/data/openspec_real/`) open in place, without the CLI.

Facts checked here were read off the files by hand; the held-out sample is only read by
the parity test (`test_openspec_parity.py`), never here.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from crewbook.artifacts import Project, validate_project

REAL = Path(__file__).parents[1] / "data" / "openspec_real"


def test_openspec_repo_sample_opens_in_place() -> None:
    project = Project(REAL / "openspec_repo")
    assert project.layout == "openspec"
    assert project.warnings == ()
    names = [c.name for c in project.changes()]
    assert names == ["add-qa-smoke-harness", "add-skill-cli-auto-approval",
                     "fix-archive-retirement-guidance", "fix-cli-local-date-semantics",
                     "fix-opencode-commands-directory", "schema-alias-support",
                     "suppress-telemetry-notice-in-json"]
    status = project.status("schema-alias-support")
    assert [(a.id, a.status) for a in status.artifacts] == [
        ("proposal", "done"), ("specs", "ready"), ("design", "ready"), ("tasks", "blocked")]
    archived = project.archived()
    assert [(a.name, a.archived) for a in archived] == [
        ("sort-active-changes-by-progress", dt.date(2025, 9, 29)),
        ("slim-root-agents-file", dt.date(2025, 10, 14)),
        ("add-agent-schema-selection", dt.date(2026, 1, 6))]


def test_invalid_real_changes_are_reported_with_file_and_line() -> None:
    project = Project(REAL / "openspec_repo")
    problems = project.change("add-skill-cli-auto-approval").validate_deltas()
    dropped = [p for p in problems if p.code == "scenario_dropped"]
    assert dropped
    assert all(p.line and (p.path or "").endswith("spec.md") for p in dropped)
    assert "Trae adapter formatting" in dropped[0].message
    assert project.change("fix-cli-local-date-semantics").validate_deltas() == []


def test_whole_project_validation_lists_every_invalid_change() -> None:
    report = validate_project(REAL / "openspec_repo")
    invalid = sorted({Path(p.path or "").parts[2] for p in report.problems
                      if p.severity == "error"})
    assert invalid == ["add-skill-cli-auto-approval", "fix-opencode-commands-directory",
                       "schema-alias-support"]


def test_example_sample_warns_about_unused_config_key() -> None:
    project = Project(REAL / "openspec_example")
    assert [(w.code, w.key) for w in project.warnings] == [("unused_key", "planning")]
    assert [c.name for c in project.changes()] == ["ideas"]
    history = project.history(git=False)
    assert list(history["state"].astype(str)) == ["archived", "archived", "active"]
    assert history["cycle_days"].iloc[0] == 0


def test_requirements_frames_of_real_specs() -> None:
    project = Project(REAL / "openspec_repo")
    df = project.requirements()
    assert set(df["capability"]) == {p.name for p in (project.specs_folder).iterdir()}
    assert df["line"].notna().all()
    assert (df["scenarios"] >= 0).all()
    assert df["file"].str.startswith("openspec/specs/").all()
    change = project.change("suppress-telemetry-notice-in-json")
    assert list(change.requirements()["op"].astype(str)) == ["MODIFIED"]
    scenarios = change.scenarios()
    assert list(scenarios["requirement"].unique()) == ["First-run telemetry notice"]
    assert len(project.scenarios()) == int(df["scenarios"].sum())
