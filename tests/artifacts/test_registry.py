"""Which schemas exist (SPEC A1, A2, A5): built-in, project, warnings, the OpenSpec fixture."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

import crewbook
from crewbook.artifacts.registry import builtin_folder, builtin_names
from crewbook.errors import SchemaError, SchemaNotFoundError

FIXTURES = (Path(__file__).parents[2] / ".." / "shared" / "fixtures").resolve()
OPENSPEC = FIXTURES / "openspec-spec-driven"
CYCLE = {
    "name": "loop",
    "artifacts": [
        {"id": "a", "generates": "a.md", "requires": ["c"]},
        {"id": "b", "generates": "b.md", "requires": ["a"]},
        {"id": "c", "generates": "c.md", "requires": ["b"]},
    ],
    "apply": {"requires": ["c"], "tracks": "c.md"},
}


@pytest.fixture
def mixed(make_project):
    """A project with a good schema, one whose `name:` differs, and one with a cycle."""
    project = make_project()
    project.chain_schema("good", "brief", "specs", "tasks")
    project.chain_schema("renamed", "notes", "tasks", name="old-name")
    project.schema("loop", CYCLE)
    return project


def test_schemas_json_lists_the_good_and_warns_about_the_others(mixed, cli) -> None:
    result = cli("--project", mixed.root, "schemas", "--json")
    assert result.code == 0
    data = result.json
    assert set(data) == {"schemas", "warnings"}
    assert data["schemas"] == [
        {
            "name": "good",
            "source": "project",
            "path": "_codev/schemas/good",
            "artifacts": ["brief", "specs", "tasks"],
        },
        {
            "name": "renamed",
            "source": "project",
            "path": "_codev/schemas/renamed",
            "artifacts": ["notes", "tasks"],
        },
        {
            "name": "spec-driven",
            "source": "built-in",
            "path": "<built-in>/spec-driven",
            "artifacts": ["proposal", "specs", "design", "tasks"],
        },
    ]
    warnings = {w["code"]: w for w in data["warnings"]}
    assert len(data["warnings"]) == 2
    assert set(warnings["schema_name_mismatch"]) == {"code", "schema", "message"}
    assert warnings["schema_name_mismatch"]["schema"] == "renamed"
    assert (
        "'old-name' differs from the folder name 'renamed'"
        in (warnings["schema_name_mismatch"]["message"])
    )
    unusable = warnings["schema_unusable"]
    assert unusable["schema"] == "loop"
    assert "a → c → b → a" in unusable["message"]
    assert "[dependency_cycle]" in unusable["message"]
    assert "_codev/schemas/loop/schema.yaml:6:5: artifacts[0].requires[0]" in unusable["message"]


def test_schemas_text_shows_source_and_chain(tour, cli) -> None:
    result = cli("schemas", "--project", tour)
    assert result.code == 0
    assert result.out.splitlines()[:5] == [
        "Available schemas:",
        "  lite (project)",
        "    brief → specs → tasks",
        "  spec-driven (built-in)",
        "    proposal → specs → design → tasks",
    ]
    assert "warning [schema_unusable] research:" in result.out
    assert "did you mean 'requires'?" in result.out


def test_a_project_spec_driven_replaces_the_builtin(make_project) -> None:
    project = make_project()
    project.chain_schema("spec-driven", "idea", "tasks")
    listing = crewbook.list_schemas(project.root)
    assert listing.names == ["spec-driven"]
    assert listing["spec-driven"].source == "project"
    assert listing["spec-driven"].order == ["idea", "tasks"]
    schema = crewbook.get_schema("spec-driven", project.root)
    assert (schema.source, schema.ids) == ("project", ["idea", "tasks"])


def test_a_broken_project_spec_driven_does_not_fall_back_to_the_builtin(make_project) -> None:
    project = make_project()
    project.schema("spec-driven", {**CYCLE, "name": "spec-driven"})
    listing = crewbook.list_schemas(project.root)
    assert "spec-driven" not in listing
    assert [(w.code, w.schema) for w in listing.warnings] == [("schema_unusable", "spec-driven")]
    with pytest.raises(SchemaError):
        listing["spec-driven"]
    with pytest.raises(SchemaError) as info:
        crewbook.get_schema("spec-driven", project.root)
    assert info.value.codes == ["dependency_cycle"]


def test_outside_any_project_only_the_builtin_is_listed(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    listing = crewbook.list_schemas()
    assert listing.names == builtin_names() == ["spec-driven"]
    assert listing.warnings == ()
    assert listing.project is None
    assert (builtin_folder() / "spec-driven" / "templates" / "tasks.md").is_file()


def test_the_builtin_is_valid_and_has_its_templates(cli) -> None:
    result = cli("validate", builtin_folder() / "spec-driven", "--json")
    assert result.json == {"valid": True, "problems": []}
    schema = crewbook.get_schema("spec-driven", None)
    assert schema.chain == "proposal → specs → design → tasks"
    assert all(schema.template_text(a) for a in schema.ids)


def test_folders_that_cannot_be_schemas_are_warned_about(make_project) -> None:
    project = make_project()
    project.chain_schema("Bad_Name", "a", name="bad-name")
    (project.codev / "schemas" / "no-file").mkdir()
    (project.codev / "schemas" / ".hidden").mkdir()
    (project.codev / "schemas" / "README.md").write_text("not a schema")
    listing = crewbook.list_schemas(project.root)
    assert listing.names == ["spec-driven"]
    assert [(w.code, w.schema) for w in listing.warnings] == [
        ("schema_unusable", "Bad_Name"),
        ("schema_unusable", "no-file"),
    ]
    assert "not kebab-case" in listing.warnings[0].message
    assert "holds no schema.yaml" in listing.warnings[1].message


def test_listing_api(tour) -> None:
    listing = crewbook.list_schemas(tour)
    assert len(listing) == 2
    assert "lite" in listing
    assert "research" not in listing
    assert [s.name for s in listing] == ["lite", "spec-driven"]
    with pytest.raises(SchemaNotFoundError, match="did you mean 'lite'"):
        listing["lyte"]
    with pytest.raises(SchemaError, match="requries"):
        listing["research"]
    frame = listing.frame()
    assert list(frame.columns) == ["name", "source", "path", "artifacts", "chain"]
    assert isinstance(frame["source"].dtype, pd.CategoricalDtype)
    assert frame["artifacts"].dtype == "Int64"
    assert frame["chain"].tolist() == ["brief → specs → tasks", "proposal → specs → design → tasks"]
    assert repr(listing) == "<SchemaListing 2 schemas (lite, spec-driven), 1 warnings>"
    assert "brief → specs → tasks" in listing._repr_html_()


def test_get_schema_errors(tour) -> None:
    with pytest.raises(SchemaNotFoundError, match="did you mean 'lite'"):
        crewbook.get_schema("lit", tour)
    with pytest.raises(SchemaError) as info:
        crewbook.get_schema("research", tour)
    assert info.value.codes == ["unknown_key", "dependency_cycle", "unknown_artifact"]
    assert crewbook.get_schema("lite", tour).source == "project"


# --------------------------------------------------- OpenSpec's own schema


@pytest.fixture
def openspec(make_project):
    if not (OPENSPEC / "schema.yaml").is_file():
        pytest.skip(f"OpenSpec fixture not found at {OPENSPEC} (needs the shared/ checkout)")
    project = make_project()
    shutil.copytree(OPENSPEC, project.codev / "schemas" / "spec-driven")
    return project


def test_openspec_schema_lists_and_validates_clean(openspec, cli) -> None:
    listed = cli("--project", openspec.root, "schemas", "--json").json
    assert listed == {
        "schemas": [
            {
                "name": "spec-driven",
                "source": "project",
                "path": "_codev/schemas/spec-driven",
                "artifacts": ["proposal", "specs", "design", "tasks"],
            }
        ],
        "warnings": [],
    }
    result = cli("validate", openspec.codev / "schemas" / "spec-driven", "--json")
    assert (result.code, result.json) == (0, {"valid": True, "problems": []})
    whole = cli("validate", openspec.root, "--json")
    assert (whole.code, whole.json) == (0, {"valid": True, "problems": []})


def test_openspec_schema_drives_a_change(openspec) -> None:
    change = crewbook.new_change("add-export", project=openspec.root)
    (change.folder / "proposal.md").write_text("## Why\n")
    status = change.status()
    assert status.schema.source == "project"
    assert [(a.id, a.status) for a in status.artifacts] == [
        ("proposal", "done"),
        ("specs", "ready"),
        ("design", "ready"),
        ("tasks", "blocked"),
    ]
    text = crewbook.instructions("specs", change, openspec.root).text()
    assert "Delta operations" in text
    assert "## ADDED Requirements" in text  # from its template
