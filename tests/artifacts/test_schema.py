"""A loaded schema: load_schema, validate_schema, its views, frames() and ValidationReport."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import crewbook
from crewbook.artifacts.schema import ValidationReport, sorted_problems
from crewbook.errors import ArtifactNotFoundError, Problem, SchemaError

DATA = Path(__file__).parents[1] / "data"
FULL = DATA / "valid_schemas" / "full-featured"


@pytest.fixture
def full() -> crewbook.Schema:
    return crewbook.load_schema(FULL)


def test_load_a_folder_or_its_schema_yaml(full: crewbook.Schema) -> None:
    same = crewbook.load_schema(FULL / "schema.yaml")
    assert (full.name, same.name) == ("full-featured", "full-featured")
    assert full.source == "file"
    assert full.folder == FULL
    assert full.model == same.model
    assert full.model.version == 2
    assert full.warnings == ()


def test_the_name_is_the_folder_even_from_dot(tmp_path: Path, monkeypatch) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "schema.yaml").write_text(
        "name: mine\nartifacts: [{id: a, generates: a.md}]\napply: {requires: [a], tracks: a.md}\n"
    )
    monkeypatch.chdir(folder)
    schema = crewbook.load_schema(".")
    assert schema.name == "mine"
    assert schema.warnings == ()
    assert crewbook.validate_schema(".").problems == ()
    assert crewbook.load_schema(folder, name="given").name == "given"


def test_load_raises_schema_error_with_every_problem() -> None:
    with pytest.raises(SchemaError) as info:
        crewbook.load_schema(DATA / "broken_schemas" / "many-problems")
    assert info.value.codes == [
        "missing_key",
        "unknown_key",
        "unknown_artifact",
        "reserved_role",
        "unsafe_path",
    ]
    assert str(info.value).startswith("schema 'many-problems' is invalid (5 problems):")


def test_validate_schema_never_raises(tmp_path: Path) -> None:
    report = crewbook.validate_schema(tmp_path / "missing")
    assert not report.valid
    assert [p.code for p in report.problems] == ["file_not_found"]
    report = crewbook.validate_schema(DATA / "broken_schemas" / "malformed-yaml")
    assert [(p.code, p.line) for p in report.problems] == [("yaml_syntax", 6)]


def test_views(full: crewbook.Schema) -> None:
    assert full.ids == ["proposal", "specs", "design", "checks", "tasks"]
    assert full.order == ["proposal", "specs", "design", "checks", "tasks"]
    assert full.chain == "proposal → specs → design → checks → tasks"
    assert full.depth == {"proposal": 0, "specs": 1, "design": 1, "checks": 0, "tasks": 2}
    assert full.artifact("design").role.id == "designer"
    assert set(full.roles()) == {"author", "designer"}
    assert full.roles()["author"].id == "proposal"
    assert full.template_folder == FULL / "templates"
    assert full.template_text("proposal") == "## Why\n\n## What changes\n"
    assert full.template_text("design") is None


def test_an_unknown_artifact_suggests_the_nearest(full: crewbook.Schema) -> None:
    with pytest.raises(ArtifactNotFoundError, match="did you mean 'design'"):
        full.artifact("desing")
    with pytest.raises(KeyError, match="artifacts: proposal, specs"):
        full.artifact("zzz")


def test_frames_columns_and_dtypes(full: crewbook.Schema) -> None:
    arts, edges = full.frames()
    assert list(arts.columns) == [
        "id",
        "generates",
        "is_glob",
        "requires",
        "depth",
        "role_id",
        "has_template",
        "order",
    ]
    assert arts["is_glob"].dtype == bool
    assert arts["has_template"].dtype == bool
    assert arts["depth"].dtype == "Int64"
    assert arts["order"].dtype == "Int64"
    assert isinstance(arts["role_id"].dtype, pd.CategoricalDtype)
    assert set(arts["role_id"].cat.categories) == {"author", "designer"}
    assert arts["id"].tolist() == full.ids
    assert arts["is_glob"].tolist() == [False, True, False, True, False]
    assert arts["has_template"].tolist() == [True, True, False, False, True]
    assert arts["requires"].tolist() == [[], ["proposal"], ["proposal"], [], ["specs", "design"]]
    assert arts["depth"].tolist() == [0, 1, 1, 0, 2]
    assert arts["order"].tolist() == [0, 1, 2, 3, 4]
    assert arts["role_id"].isna().tolist() == [False, True, False, True, True]

    assert list(edges.columns) == ["source", "target", "kind"]
    assert isinstance(edges["kind"].dtype, pd.CategoricalDtype)
    assert list(edges.itertuples(index=False, name=None)) == [
        ("proposal", "specs", "requires"),
        ("proposal", "design", "requires"),
        ("specs", "tasks", "requires"),
        ("design", "tasks", "requires"),
        ("tasks", "apply", "apply"),
        ("checks", "apply", "apply"),
    ]
    assert arts.groupby("is_glob").size().to_dict() == {False: 3, True: 2}


def test_order_column_differs_from_declaration_when_needed(make_project) -> None:
    project = make_project()
    folder = project.schema(
        "late",
        {
            "name": "late",
            "artifacts": [
                {"id": "tasks", "generates": "tasks.md", "requires": ["brief"]},
                {"id": "brief", "generates": "brief.md"},
            ],
            "apply": {"requires": ["tasks"], "tracks": "tasks.md"},
        },
    )
    schema = crewbook.load_schema(folder)
    arts, _ = schema.frames()
    assert schema.order == ["brief", "tasks"]
    assert arts.set_index("id")["order"].to_dict() == {"tasks": 1, "brief": 0}
    assert arts["role_id"].isna().all()


def test_display(full: crewbook.Schema) -> None:
    assert repr(full) == (
        "<Schema 'full-featured' (file), 5 artifacts: proposal → specs → design → checks → tasks>"
    )
    html = full._repr_html_()
    assert "proposal → specs → design → checks → tasks" in html
    assert "Author (author)" in html
    assert "<code>specs/**/*.md</code>" in html


def test_validation_report() -> None:
    problems = (
        Problem("b", "second", "f", 3),
        Problem("w", "warn <x>", "f", 1, severity="warning"),
    )
    report = ValidationReport(problems, subject="s.yaml")
    assert not report.valid
    assert [p.code for p in report.errors] == ["b"]
    assert [p.code for p in report.warnings] == ["w"]
    assert report.to_dict()["valid"] is False
    assert [p["code"] for p in report.to_dict()["problems"]] == ["b", "w"]
    # severity on every line, errors before the warnings they may cause (issue 12)
    assert str(report) == ("s.yaml: invalid (1 error, 1 warning)\n  error:   f:3: second [b]\n"
                           "  warning: f:1: warn <x> [w]")
    assert repr(report) == "<ValidationReport s.yaml valid=False errors=1 warnings=1>"
    assert "warn &lt;x&gt;" in report._repr_html_()
    frame = report.frame()
    assert list(frame.columns) == ["severity", "code", "path", "line", "column", "key", "message"]
    assert isinstance(frame["code"].dtype, pd.CategoricalDtype)
    assert frame["line"].dtype == "Int64"
    assert frame["column"].isna().all()

    only_warnings = ValidationReport(problems[1:], subject="s")
    assert only_warnings.valid
    assert str(only_warnings).startswith("s: valid, with 1 warning\n  warning: ")
    assert str(ValidationReport((), subject="s")) == "s: valid"
    assert ValidationReport(()).frame().empty
    assert [p.line for p in sorted_problems(problems)] == [1, 3]
