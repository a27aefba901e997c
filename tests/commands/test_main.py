"""The `crewbook` command: exit codes, `--json` shapes, and finding the project."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import crewbook

DATA = Path(__file__).parents[1] / "data"
PROBLEM_KEYS = {"code", "path", "line", "column", "key", "message"}


# ------------------------------------------------------------------ exit codes


def test_exit_0_when_all_is_well(tour, cli) -> None:
    assert cli("--project", tour, "schemas").code == 0
    assert cli("validate", DATA / "valid_schemas" / "minimal").code == 0
    assert cli("--project", tour, "status", "--change", "add-csv-export").code == 0


def test_exit_1_when_invalid_input_is_found(tour, cli) -> None:
    result = cli("validate", tour)
    assert result.code == 1
    assert "research/schema.yaml:7:5" in result.out
    assert (
        cli(
            "validate", DATA / "valid_schemas" / "minimal", DATA / "broken_schemas" / "cycle-three"
        ).code
        == 1
    )


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["frobnicate"],
        ["new"],
        ["validate"],
        ["roles", "--bogus"],
        ["example", "no-such-example"],
    ],
    ids=lambda a: " ".join(a) or "no-command",
)
def test_exit_2_on_usage_errors(argv: list[str], tour, cli) -> None:
    result = cli("--project", tour, *argv)
    assert result.code == 2
    assert result.out == ""
    assert "usage: crewbook" in result.err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["status", "--change", "no-such-change"], "does not exist"),
        (["instructions", "nope", "--change", "add-csv-export"], "has no artifact 'nope'"),
        (["new", "change", "x", "--schema", "no-such-schema"], "no schema named"),
    ],
)
def test_exit_2_when_something_named_does_not_exist(argv, message, tour, cli) -> None:
    result = cli("--project", tour, *argv)
    assert result.code == 2
    assert result.err.startswith("crewbook: error: ")
    assert message in result.err
    assert "Traceback" not in result.err


def test_exit_2_outside_any_project(tmp_path: Path, monkeypatch, cli) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli("status", "--change", "x", "--json")
    assert result.code == 2
    error = result.json["error"]
    assert error["type"] == "ProjectNotFoundError"
    assert "no `_codev/` or `openspec/` folder" in error["message"]
    assert error["problems"] == []


def test_version(cli) -> None:
    result = cli("--version")
    assert (result.code, result.out.strip()) == (0, f"crewbook {crewbook.__version__}")


# ---------------------------------------------------------- finding a project


@pytest.mark.parametrize("before", [True, False], ids=["before", "after"])
def test_project_option_before_or_after_the_command(before: bool, tour, cli) -> None:
    argv = (
        ["--project", str(tour), "schemas", "--json"]
        if before
        else ["schemas", "--json", "--project", str(tour)]
    )
    names = [s["name"] for s in cli(*argv).json["schemas"]]
    assert names == ["lite", "spec-driven"]


def test_json_option_before_the_command(tour, cli) -> None:
    assert "schemas" in cli("--json", "--project", tour, "schemas").json


def test_the_project_is_found_by_walking_up(tour, monkeypatch, cli) -> None:
    deep = tour / "_codev" / "changes" / "add-csv-export" / "specs" / "export"
    monkeypatch.chdir(deep)
    assert [s["name"] for s in cli("schemas", "--json").json["schemas"]] == [
        "lite",
        "spec-driven",
    ]
    data = cli("status", "--change", "add-csv-export", "--json").json
    assert data["schema"] == "lite"
    result = cli("new", "change", "from-deep", "--json")
    assert result.json["path"] == "_codev/changes/from-deep"
    assert (tour / "_codev" / "changes" / "from-deep" / "change.yaml").is_file()


def test_a_relative_change_folder_works(tour, monkeypatch, cli) -> None:
    monkeypatch.chdir(tour / "_codev" / "changes")
    assert cli("status", "--change", "./add-csv-export", "--json").json["schema"] == "lite"


# ---------------------------------------------------------------- json shapes


def test_validate_json_shape(cli) -> None:
    data = cli("validate", DATA / "broken_schemas" / "artifact-key-typo", "--json").json
    assert set(data) == {"valid", "problems"}
    assert data["valid"] is False
    [problem] = data["problems"]
    assert set(problem) >= PROBLEM_KEYS
    assert {k: problem[k] for k in ("code", "line", "column", "key")} == {
        "code": "unknown_key",
        "line": 8,
        "column": 5,
        "key": "artifacts[1].requries",
    }
    assert problem["path"].endswith("broken_schemas/artifact-key-typo/schema.yaml")
    assert problem["message"] == "unknown key 'requries'; did you mean 'requires'?"


def test_validate_paths_are_shown_relative_to_the_project(tour, cli) -> None:
    data = cli("--project", tour, "validate", tour, "--json").json
    assert {p["path"] for p in data["problems"]} == {"_codev/schemas/research/schema.yaml"}


def test_schemas_json_shape(tour, cli) -> None:
    data = cli("--project", tour, "schemas", "--json").json
    assert set(data) == {"schemas", "warnings"}
    assert data["schemas"][0] == {
        "name": "lite",
        "source": "project",
        "path": "_codev/schemas/lite",
        "artifacts": ["brief", "specs", "tasks"],
    }
    assert data["schemas"][1]["source"] == "built-in"
    assert [set(w) for w in data["warnings"]] == [{"code", "schema", "message"}]
    assert (data["warnings"][0]["code"], data["warnings"][0]["schema"]) == (
        "schema_unusable",
        "research",
    )


def test_status_json_shape(tour, cli) -> None:
    data = cli("--project", tour, "status", "--change", "add-csv-export", "--json").json
    assert {"schema", "artifacts", "apply"} <= set(data)
    assert data["schema"] == "lite"
    assert all(set(a) == {"id", "status", "missing", "paths"} for a in data["artifacts"])
    assert [(a["id"], a["status"]) for a in data["artifacts"]] == [
        ("brief", "done"),
        ("specs", "done"),
        ("tasks", "ready"),
    ]
    assert {"state", "done", "total"} <= set(data["apply"])
    assert (data["apply"]["state"], data["apply"]["done"], data["apply"]["total"]) == (
        "blocked",
        0,
        0,
    )


def test_status_text(tour, cli) -> None:
    out = cli("--project", tour, "status", "--change", "add-csv-export").out
    assert out.splitlines() == [
        "Change add-csv-export (schema lite)",
        "  ✔ brief  done",
        "  ✔ specs  done",
        "  ○ tasks  ready",
        "  apply: blocked, 0/0 tasks, waiting for tasks",
    ]


def test_new_change_json_and_refusal(tour, cli) -> None:
    result = cli(
        "--project",
        tour,
        "new",
        "change",
        "add-pdf",
        "--schema",
        "spec-driven",
        "--description",
        "PDF export",
        "--skip-specs",
        "--json",
    )
    assert result.code == 0
    assert result.json == {
        "change": "add-pdf",
        "schema": "spec-driven",
        "path": "_codev/changes/add-pdf",
    }
    record = yaml.safe_load((tour / "_codev/changes/add-pdf/change.yaml").read_text("utf-8"))
    assert {k: record[k] for k in ("schema", "description", "skip_specs")} == {
        "schema": "spec-driven",
        "description": "PDF export",
        "skip_specs": True,
    }
    again = cli("--project", tour, "new", "change", "add-pdf", "--json")
    assert again.code == 1
    assert again.json["error"]["type"] == "AlreadyExistsError"
    text = cli("--project", tour, "new", "change", "other")
    assert text.out.strip() == "Created change other (schema lite) in _codev/changes/other/"


def test_instructions_json_and_text(tour, cli) -> None:
    data = cli(
        "--project", tour, "instructions", "brief", "--change", "add-csv-export", "--json"
    ).json
    assert {
        "change",
        "schema",
        "artifact",
        "generates",
        "status",
        "description",
        "instruction",
        "template",
        "role",
        "rules",
        "context",
        "decisions",
        "requires",
    } == set(data)
    assert data["role"]["done_when"][-1] == {"text": "Links the ticket", "origin": "project"}
    fr = cli(
        "--project", tour, "instructions", "brief", "--change", "add-csv-export", "--lang", "fr"
    )
    assert "## Role: Rédacteur (editor)" in fr.out


def test_roles_json_and_text(tour, cli) -> None:
    data = cli("--project", tour, "roles", "--at", "plan.write", "--json").json
    assert data["step"] == "plan.write"
    assert [(r["id"], r["origin"]) for r in data["roles"]] == [("editor", "schema:lite")]
    result = cli("--project", tour, "roles", "--at", "plan.wrte")
    assert result.code == 1
    assert "did you mean 'plan.write'" in result.err
    text = cli("--project", tour, "roles").out
    assert "plan.review   skeptic" in text


def test_example_copies_the_tour(tmp_path: Path, cli) -> None:
    data = cli("example", "tour", tmp_path / "copy", "--json").json
    assert data == {"example": "tour", "path": str(tmp_path / "copy")}
    assert (tmp_path / "copy" / "_codev" / "schemas" / "lite" / "schema.yaml").is_file()
    again = cli("example", "tour", tmp_path / "copy")
    assert again.code == 1
    assert "not empty" in again.err


def test_errors_with_json_are_one_json_document_on_stdout(tour, cli) -> None:
    result = cli("--project", tour, "status", "--change", "nope", "--json")
    assert result.code == 2
    assert result.err == ""
    assert set(result.json["error"]) == {"type", "message", "problems"}
    assert result.json["error"]["type"] == "ChangeNotFoundError"


# ----------------------------------------------------- hostile input files


def test_validate_a_50_mb_schema_without_reading_it(tmp_path: Path, cli) -> None:
    folder = tmp_path / "huge"
    folder.mkdir()
    with (folder / "schema.yaml").open("wb") as out:
        out.write(b"# generated\n" * (50 * 1024 * 1024 // 12 + 1))
    result = cli("validate", folder, "--json")
    assert result.code == 1
    [problem] = result.json["problems"]
    assert problem["code"] == "file_too_large"
    assert "over the limit" in problem["message"]


def test_validate_an_alias_bomb(tmp_path: Path, cli) -> None:
    folder = tmp_path / "bomb"
    folder.mkdir()
    levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev, name = chr(ord("a") + i - 1), chr(ord("a") + i)
        levels.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 10)}]")
    (folder / "schema.yaml").write_text("\n".join(levels) + "\n")
    result = cli("validate", folder, "--json")
    assert result.code == 1
    assert [p["code"] for p in result.json["problems"]] == ["yaml_too_complex"]
    assert result.err == ""


def test_validate_a_non_utf8_schema(tmp_path: Path, cli) -> None:
    folder = tmp_path / "latin"
    folder.mkdir()
    (folder / "schema.yaml").write_bytes("name: caf\xe9\n".encode("latin-1"))
    result = cli("validate", folder, "--json")
    assert [p["code"] for p in result.json["problems"]] == ["not_utf8"]


def test_status_without_change_shows_every_change(tour, cli) -> None:
    cli("--project", tour, "new", "change", "second")
    result = cli("--project", tour, "status", "--json")
    assert result.code == 0
    assert [c["change"] for c in result.json["changes"]] == ["add-csv-export", "second"]
    assert [a["status"] for a in result.json["changes"][1]["artifacts"]] == [
        "ready", "blocked", "blocked"]
    text = cli("--project", tour, "status")
    assert "Change add-csv-export (schema lite)" in text.out
    assert "Change second (schema lite)" in text.out
