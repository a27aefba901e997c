"""`validate_paths`: one check per kind of file, every problem of every path."""

from __future__ import annotations

from pathlib import Path

from crewbook.commands.validate import validate_paths

DATA = Path(__file__).parents[1] / "data"


def found(report) -> list[tuple[str, str | None, int | None]]:
    return [(p.code, p.path, p.line) for p in report.problems]


def test_a_whole_project(tour) -> None:
    report = validate_paths([tour])
    assert not report.valid
    assert found(report) == [
        ("unknown_key", "_codev/schemas/research/schema.yaml", 7),
        ("dependency_cycle", "_codev/schemas/research/schema.yaml", 10),
        ("unknown_artifact", "_codev/schemas/research/schema.yaml", 15),
    ]
    assert report.subject == str(tour)


def test_a_whole_project_reports_unusable_folders_and_broken_changes(tour) -> None:
    schemas = tour / "_codev" / "schemas"
    (schemas / "empty").mkdir()
    (schemas / "research" / "schema.yaml").unlink()
    (schemas / "research").rmdir()
    change = tour / "_codev" / "changes" / "odd"
    change.mkdir()
    (change / "change.yaml").write_text("schema: lite\nstatus: draft\n")
    report = validate_paths([tour])
    assert [(p.code, p.severity) for p in report.problems] == [
        ("schema_unusable", "warning"),
        ("unknown_key", "error"),
    ]
    assert report.problems[0].path == "_codev/schemas/empty"
    assert report.problems[1].path == "_codev/changes/odd/change.yaml"


def test_a_config_file(tour) -> None:
    config = tour / "_codev" / "config.yaml"
    assert validate_paths([config]).problems == ()
    config.write_text("schema: Lite\nrules:\n  brief: one rule\n")
    assert [(p.code, p.line) for p in validate_paths([config]).problems] == [
        ("invalid_id", 1),
        ("wrong_type", 3),
    ]


def test_a_change_folder_or_its_change_yaml(tour, tmp_path: Path) -> None:
    folder = tour / "_codev" / "changes" / "add-csv-export"
    assert validate_paths([folder, folder / "change.yaml"]).problems == ()
    (tmp_path / "out.md").write_text("x")
    (folder / "tasks.md").symlink_to(tmp_path / "out.md")
    report = validate_paths([folder])
    assert [p.code for p in report.problems] == ["path_outside_change"]
    assert not report.valid


def test_a_change_whose_schema_is_missing(tour) -> None:
    folder = tour / "_codev" / "changes" / "add-csv-export"
    (folder / "change.yaml").write_text("schema: gone\n")
    report = validate_paths([folder])
    assert [(p.code, p.path) for p in report.problems] == [
        ("schema_not_found", "_codev/changes/add-csv-export/change.yaml"),
    ]
    assert "no schema named 'gone'" in report.problems[0].message
    whole = validate_paths([tour])
    assert [p.code for p in whole.problems] == [
        "unknown_key",
        "dependency_cycle",
        "unknown_artifact",
        "schema_not_found",
    ], "one broken change does not stop the rest of the project from being checked"


def test_several_paths_and_what_cannot_be_checked(tour) -> None:
    report = validate_paths(
        [
            DATA / "valid_schemas" / "minimal",
            DATA / "broken_schemas" / "self-dependency" / "schema.yaml",
            tour / "nope",
            tour / "_codev" / "changes" / "add-csv-export" / "brief.md",
            tour / "_codev",
        ]
    )
    assert [p.code for p in report.problems] == [
        "dependency_cycle",
        "file_not_found",
        "unknown_kind",
        "unknown_kind",
    ]
    assert "give a schema.yaml, config.yaml, change.yaml" in report.problems[2].message
    message = report.problems[3].message
    assert "holds no schema.yaml, change.yaml, _codev/ or .jsonl ledger" in message


def test_valid_inputs_give_an_empty_valid_report() -> None:
    report = validate_paths([p for p in (DATA / "valid_schemas").iterdir()])
    assert report.valid
    assert report.problems == ()
    assert str(report).endswith(": valid")


def test_a_folder_of_ledgers_is_checked_line_by_line(tmp_path: Path) -> None:
    from crewbook.commands.validate import validate_paths
    from crewbook.ledger import Ledger

    for name in ("a", "b"):
        with Ledger(tmp_path / f"{name}.jsonl", run=name, loop="pipeline") as ledger:
            ledger.append({"kind": "act", "role": "developer", "stage": "build"})
    lines = (tmp_path / "b.jsonl").read_text().splitlines()
    (tmp_path / "b.jsonl").write_text(lines[0] + "\nnot json\n" + lines[0] + "\n")
    assert validate_paths([tmp_path / "a.jsonl"]).valid
    report = validate_paths([tmp_path])
    assert not report.valid
    assert [(p.code, p.line) for p in report.errors] == [("ledger_bad_json", 2)]


def test_config_keys_naming_nothing_are_warned_with_a_suggestion(tmp_path: Path) -> None:
    import crewbook

    root = crewbook.example_project(dest=tmp_path / "tour")
    config = root / "_codev" / "config.yaml"
    config.write_text(config.read_text().replace("  editor:", "  edtor:").replace(
        "  tasks:\n", "  taks:\n"))
    report = validate_paths([root])
    found = {(p.code, p.key, p.line, p.severity) for p in report.problems
             if p.path == "_codev/config.yaml"}
    assert found == {("unknown_artifact", "rules.taks", 8, "warning"),
                     ("unknown_role", "roles.edtor", 11, "warning")}
    assert any("did you mean 'editor'" in p.message for p in report.problems)


def test_a_broken_schema_used_by_several_changes_is_reported_once(tmp_path: Path) -> None:
    import crewbook

    root = crewbook.example_project(dest=tmp_path / "tour")
    for name in ("one", "two"):
        folder = root / "_codev" / "changes" / name
        folder.mkdir()
        (folder / "change.yaml").write_text("schema: research\n")
    report = validate_paths([root])
    assert len(report.problems) == len(set(report.problems))
    assert sum(p.code == "dependency_cycle" for p in report.problems) == 1
