"""Changes (SPEC A6, A8, A9): creating one, and where it stands."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pandas as pd
import pytest
import yaml

import crewbook
from crewbook.artifacts.status import STATUS_ORDER, match_outputs
from crewbook.errors import (
    AlreadyExistsError,
    ChangeNotFoundError,
    ConfigError,
    InvalidInputError,
    SchemaError,
    SchemaNotFoundError,
)

GLOBS = {
    "name": "globs",
    "artifacts": [
        {"id": "brief", "generates": "brief.md"},
        {"id": "notes", "generates": "notes/note-?.md", "requires": ["brief"]},
        {"id": "logs", "generates": "logs/[0-9].md", "requires": ["brief"]},
        {"id": "flat", "generates": "flat/*.md"},
        {"id": "tasks", "generates": "tasks.md", "requires": ["notes", "logs"]},
    ],
    "apply": {"requires": ["tasks"], "tracks": "tasks.md"},
}


def states(status: crewbook.ChangeStatus) -> dict[str, tuple[str, list[str], list[str]]]:
    return {a.id: (a.status, list(a.missing), list(a.paths)) for a in status.artifacts}


# ----------------------------------------------- the four cases of the issue


def test_status_json_on_nested_glob_empty_folder_symlink_and_skip_specs(
    make_project, tmp_path: Path, cli
) -> None:
    project = make_project()
    outside = tmp_path / "outside"
    (outside / "more").mkdir(parents=True)
    (outside / "secret.md").write_text("not part of the change")
    (outside / "more" / "leak.md").write_text("- [x] 9.9 not ours\n")

    project.change("nested", files={"proposal.md": "p", "specs/a/b/c.md": "s"})
    empty = project.change("empty", files={"proposal.md": "p"})
    (empty / "specs" / "a" / "b").mkdir(parents=True)
    linked = project.change("linked", files={"specs/x/spec.md": "s"})
    os.symlink(outside / "secret.md", linked / "proposal.md")
    os.symlink(outside / "more", linked / "specs" / "more")
    skipping = project.change("skipping", skip_specs=True, files={"proposal.md": "p"})

    result = cli("status", "--change", "nested", "--project", project.root, "--json")
    assert result.code == 0
    data = result.json
    assert {"schema", "artifacts", "apply"} <= set(data)
    assert data["schema"] == "spec-driven"
    assert data["artifacts"] == [
        {"id": "proposal", "status": "done", "missing": [], "paths": ["proposal.md"]},
        {"id": "specs", "status": "done", "missing": [], "paths": ["specs/a/b/c.md"]},
        {"id": "design", "status": "ready", "missing": [], "paths": []},
        {"id": "tasks", "status": "blocked", "missing": ["design"], "paths": []},
    ]
    assert {k: data["apply"][k] for k in ("state", "done", "total")} == {
        "state": "blocked",
        "done": 0,
        "total": 0,
    }
    assert data["problems"] == []

    data = cli("status", "--change", empty, "--project", project.root, "--json").json
    assert data["artifacts"][1] == {"id": "specs", "status": "ready", "missing": [], "paths": []}
    assert data["artifacts"][3]["missing"] == ["specs", "design"]

    result = cli("status", "--change", linked, "--project", project.root, "--json")
    assert result.code == 1, "a path leaving the change is invalid input"
    data = result.json
    assert data["artifacts"][0] == {
        "id": "proposal",
        "status": "ready",
        "missing": [],
        "paths": [],
    }
    assert data["artifacts"][1]["paths"] == ["specs/x/spec.md"]
    assert [(p["code"], p["path"], p["key"]) for p in data["problems"]] == [
        ("path_outside_change", "_codev/changes/linked/proposal.md", "proposal.generates"),
        ("path_outside_change", "_codev/changes/linked/specs/more/leak.md", "specs.generates"),
    ]
    assert "leads outside the change folder" in data["problems"][0]["message"]

    data = cli("status", "--change", skipping, "--project", project.root, "--json").json
    assert states_from_json(data) == {
        "proposal": ("done", []),
        "specs": ("skipped", []),
        "design": ("ready", []),
        "tasks": ("blocked", ["design"]),
    }


def states_from_json(data: dict) -> dict[str, tuple[str, list[str]]]:
    return {a["id"]: (a["status"], a["missing"]) for a in data["artifacts"]}


def test_skip_specs_skips_by_path_not_by_id(make_project) -> None:
    project = make_project()
    project.schema(
        "other",
        {
            "name": "other",
            "artifacts": [
                {"id": "deltas", "generates": "specs/**/*.md"},
                {"id": "spec-notes", "generates": "notes/specs.md"},
                {"id": "tasks", "generates": "tasks.md", "requires": ["deltas", "spec-notes"]},
            ],
            "apply": {"requires": ["tasks"], "tracks": "tasks.md"},
        },
    )
    folder = project.change("c", schema="other", skip_specs=True, files={"specs/a.md": "x"})
    status = crewbook.change_status(folder, project.root)
    assert states(status) == {
        "deltas": ("skipped", [], []),
        "spec-notes": ("ready", [], []),
        "tasks": ("blocked", ["spec-notes"], []),
    }
    assert status.skip_specs is True
    assert status.counts == {"done": 0, "ready": 1, "blocked": 1, "skipped": 1}


# ------------------------------------------------------------------- globs


def test_question_mark_and_bracket_globs(make_project) -> None:
    project = make_project()
    project.schema("globs", GLOBS)
    folder = project.change(
        "c",
        schema="globs",
        files={
            "brief.md": "b",
            "notes/note-ab.md": "two characters: no match",
            "logs/x.md": "not a digit",
            "flat/sub/deep.md": "* does not cross folders",
        },
    )
    status = crewbook.change_status(folder, project.root)
    assert states(status) == {
        "brief": ("done", [], ["brief.md"]),
        "flat": ("ready", [], []),
        "notes": ("ready", [], []),
        "logs": ("ready", [], []),
        "tasks": ("blocked", ["notes", "logs"], []),
    }
    (folder / "notes" / "note-1.md").write_text("n")
    (folder / "notes" / "note-2.md").write_text("n")
    (folder / "logs" / "7.md").write_text("l")
    (folder / "flat" / "top.md").write_text("f")
    status = crewbook.change_status(folder, project.root)
    assert states(status)["notes"] == ("done", [], ["notes/note-1.md", "notes/note-2.md"])
    assert states(status)["logs"] == ("done", [], ["logs/7.md"])
    assert states(status)["flat"] == ("done", [], ["flat/top.md"])
    assert states(status)["tasks"] == ("ready", [], [])
    assert [a.id for a in status.artifacts] == status.schema.order


def test_double_star_matches_zero_or_more_folders(tmp_path: Path) -> None:
    (tmp_path / "specs" / "a" / "b").mkdir(parents=True)
    (tmp_path / "specs" / "top.md").write_text("x")
    (tmp_path / "specs" / "a" / "b" / "deep.md").write_text("x")
    (tmp_path / "specs" / "a" / "dir.md").mkdir()  # a folder is not an output
    found, rejected = match_outputs(tmp_path, "specs/**/*.md")
    assert found == ["specs/a/b/deep.md", "specs/top.md"]
    assert rejected == []
    assert match_outputs(tmp_path, "specs/*.md") == (["specs/top.md"], [])
    assert match_outputs(tmp_path, "missing.md") == ([], [])


def test_a_symlink_inside_the_change_is_fine(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("x")
    os.symlink(tmp_path / "real.md", tmp_path / "alias.md")
    os.symlink(tmp_path / "nowhere.md", tmp_path / "dangling.md")
    assert match_outputs(tmp_path, "alias.md") == (["alias.md"], [])
    assert match_outputs(tmp_path, "dangling.md") == ([], [])


# ------------------------------------------------------- apply and checkboxes


def test_apply_goes_blocked_ready_in_progress_complete(make_project) -> None:
    project = make_project()
    project.chain_schema("two", "brief", "tasks")
    folder = project.change("c", schema="two", files={"brief.md": "b"})

    def apply_state() -> tuple[str, int, int, tuple[str, ...]]:
        ap = crewbook.change_status(folder, project.root).apply
        return ap.state, ap.done, ap.total, ap.missing

    assert apply_state() == ("blocked", 0, 0, ("tasks",))
    (folder / "tasks.md").write_text("# Tasks\n\nNothing to tick yet.\n")
    assert apply_state() == ("ready", 0, 0, ())
    (folder / "tasks.md").write_text("- [ ] 1.1 a\n- [ ] 1.2 b\n")
    assert apply_state() == ("ready", 0, 2, ())
    (folder / "tasks.md").write_text("- [x] 1.1 a\n- [ ] 1.2 b\n")
    assert apply_state() == ("in_progress", 1, 2, ())
    (folder / "tasks.md").write_text("- [x] 1.1 a\n- [X] 1.2 b\n")
    assert apply_state() == ("complete", 2, 2, ())


def test_checkbox_progress_ignores_code_fences(make_project, cli) -> None:
    project = make_project()
    project.chain_schema("two", "brief", "tasks")
    project.change(
        "c",
        schema="two",
        files={
            "brief.md": "b",
            "tasks.md": (
                "## 1. Setup\n"
                "\n"
                "- [x] 1.1 Create the module\n"
                "- [ ] 1.2 Add the dependency\n"
                "\n"
                "Example of the format:\n"
                "```markdown\n"
                "- [ ] 9.9 inside a fence\n"
                "- [x] 9.8 inside a fence\n"
                "```\n"
                "~~~\n"
                "- [x] 9.7 inside a tilde fence\n"
                "~~~\n"
                "## 2. Core\n"
                "  * [X] 2.1 Nested bullet, upper-case X\n"
                "+ [ ] plus bullet without an id\n"
                "-[ ] no space: not a checkbox\n"
                "[ ] no bullet: not a checkbox\n"
            ),
        },
    )
    data = cli("status", "--change", "c", "--project", project.root, "--json").json
    assert {k: data["apply"][k] for k in ("state", "done", "total")} == {
        "state": "in_progress",
        "done": 2,
        "total": 4,
    }
    status = crewbook.change_status("c", project.root)
    assert [(t.id, t.done, t.section, t.line) for t in status.tasks] == [
        ("1.1", True, "1. Setup", 3),
        ("1.2", False, "1. Setup", 4),
        ("2.1", True, "2. Core", 15),
        ("4", False, "2. Core", 16),
    ]
    frame = status.tasks_frame()
    assert list(frame.columns) == ["index", "id", "text", "done", "section", "line"]
    assert frame["done"].dtype == bool
    assert frame["index"].dtype == "Int64"
    assert frame["line"].dtype == "Int64"
    assert frame["done"].sum() == 2


def test_a_tracked_file_linking_outside_is_not_read(make_project, tmp_path: Path) -> None:
    project = make_project()
    project.chain_schema("two", "brief", "tasks")
    folder = project.change("c", schema="two", files={"brief.md": "b"})
    (tmp_path / "elsewhere.md").write_text("- [x] 1.1 a\n")
    os.symlink(tmp_path / "elsewhere.md", folder / "tasks.md")
    status = crewbook.change_status(folder, project.root)
    assert (status.apply.state, status.apply.done, status.apply.total) == ("blocked", 0, 0)
    assert [p.code for p in status.problems] == ["path_outside_change"]


# ----------------------------------------------------------------- frames


def test_status_frame_and_views(tour) -> None:
    status = crewbook.change_status("add-csv-export", tour)
    frame = status.frame()
    assert list(frame.columns) == [
        "id",
        "status",
        "missing",
        "paths",
        "generates",
        "role_id",
        "n_files",
    ]
    assert list(frame["status"].cat.categories) == list(STATUS_ORDER)
    assert isinstance(frame["role_id"].dtype, pd.CategoricalDtype)
    assert frame["n_files"].dtype == "Int64"
    assert frame["status"].tolist() == ["done", "done", "ready"]
    assert frame["paths"].tolist() == [["brief.md"], ["specs/export/csv.md"], []]
    assert (status.ready, status.next) == (["tasks"], "tasks")
    assert status["brief"].role_id == "editor"
    with pytest.raises(KeyError, match="did you mean 'tasks'"):
        status["task"]
    assert repr(status) == (
        "<ChangeStatus 'add-csv-export' (lite): 2 done, 1 ready; apply blocked 0/0>"
    )
    text = str(status)
    assert "✔ brief" in text
    assert "○ tasks" in text
    assert "apply: blocked, 0/0 tasks, waiting for tasks" in text
    assert "next: <b>tasks</b>" in status._repr_html_()


# ----------------------------------------------------------- new_change


def test_new_change_records_its_schema(tour) -> None:
    change = crewbook.new_change(
        "add-pdf", project=tour, description="PDF too", today=dt.date(2026, 12, 1)
    )
    record = yaml.safe_load((change.folder / "change.yaml").read_text("utf-8"))
    assert record == {"schema": "lite", "created": "2026-12-01", "description": "PDF too"}
    assert change.folder == tour / "_codev" / "changes" / "add-pdf"
    assert (change.name, change.schema_name) == ("add-pdf", "lite")

    other = crewbook.new_change("refactor", "spec-driven", tour, skip_specs=True)
    record = yaml.safe_load((other.folder / "change.yaml").read_text("utf-8"))
    assert (record["schema"], record["skip_specs"]) == ("spec-driven", True)


def test_changing_the_default_does_not_touch_changes_in_progress(tour) -> None:
    crewbook.new_change("add-pdf", project=tour)
    config = tour / "_codev" / "config.yaml"
    config.write_text(config.read_text("utf-8").replace("schema: lite", "schema: spec-driven"))
    assert crewbook.open_change("add-pdf", tour).schema_name == "lite"
    assert crewbook.change_status("add-pdf", tour).schema.name == "lite"
    assert crewbook.change_status("add-csv-export", tour).schema.name == "lite"
    assert crewbook.new_change("later", project=tour).schema_name == "spec-driven"


def test_without_config_the_default_is_spec_driven(make_project) -> None:
    project = make_project()
    assert crewbook.new_change("c", project=project.root).schema_name == "spec-driven"


def test_new_change_refuses_to_overwrite(tour) -> None:
    change_yaml = tour / "_codev" / "changes" / "add-csv-export" / "change.yaml"
    before = change_yaml.read_text("utf-8")
    with pytest.raises(AlreadyExistsError, match="already exists") as info:
        crewbook.new_change("add-csv-export", "spec-driven", tour)
    assert info.value.path == change_yaml.parent
    assert change_yaml.read_text("utf-8") == before


@pytest.mark.parametrize(
    ("name", "schema", "error"),
    [
        ("Bad Name", None, InvalidInputError),
        ("good-name", "nope", SchemaNotFoundError),
        ("good-name", "research", SchemaError),
    ],
)
def test_new_change_refuses_before_writing(tour, name: str, schema: str | None, error) -> None:
    with pytest.raises(error):
        crewbook.new_change(name, schema, tour)
    assert sorted(p.name for p in (tour / "_codev" / "changes").iterdir()) == ["add-csv-export"]


# ----------------------------------------------------------- open_change


def test_open_change_by_name_or_folder(tour, monkeypatch) -> None:
    folder = tour / "_codev" / "changes" / "add-csv-export"
    by_name = crewbook.open_change("add-csv-export", tour)
    by_path = crewbook.open_change(folder)
    assert by_name.folder == by_path.folder == folder
    assert by_path.project.root == tour
    monkeypatch.chdir(folder / "specs")
    assert crewbook.open_change("add-csv-export").name == "add-csv-export"
    assert "add-csv-export" in repr(by_name)


def test_open_change_errors(tour) -> None:
    with pytest.raises(ChangeNotFoundError, match="did you mean 'add-csv-export'"):
        crewbook.open_change("add-csv-exprt", tour)
    bad = tour / "_codev" / "changes" / "bad"
    bad.mkdir()
    (bad / "change.yaml").write_text("schema: lite\nskip-specs: true\n")
    with pytest.raises(ConfigError) as info:
        crewbook.open_change("bad", tour)
    assert [(p.code, p.line) for p in info.value.problems] == [("unknown_key", 2)]
    assert "did you mean 'skip_specs'" in str(info.value)
