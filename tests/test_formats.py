"""The JSON Schemas in schemas/ are generated from the models and agree with them."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

import crewbook
from crewbook.formats import json_schemas, render, write_json_schemas

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = Path(crewbook.__file__).parent / "examples" / "tour" / "_codev"
BUILTIN = Path(crewbook.__file__).parent / "artifacts" / "builtin"


@pytest.mark.parametrize("name", sorted(json_schemas()))
def test_committed_json_schema_is_current(name: str) -> None:
    committed = REPO / "schemas" / name
    assert committed.is_file(), (
        f"schemas/{name} is missing: run python -m crewbook.formats schemas/"
    )
    assert committed.read_text("utf-8") == render(json_schemas()[name]), (
        f"schemas/{name} is stale: run `python -m crewbook.formats schemas/` and commit it"
    )


def test_write_json_schemas_round_trips(tmp_path: Path) -> None:
    written = write_json_schemas(tmp_path)
    assert {p.name for p in written} == set(json_schemas())
    for path in written:
        jsonschema.Draft202012Validator.check_schema(json.loads(path.read_text("utf-8")))


def _validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json_schemas()[name])


@pytest.mark.parametrize(
    "file",
    [BUILTIN / "spec-driven" / "schema.yaml", EXAMPLE / "schemas" / "lite" / "schema.yaml"],
    ids=lambda p: p.parent.name,
)
def test_valid_schemas_pass_the_json_schema(file: Path) -> None:
    errors = list(
        _validator("codev-schema.json").iter_errors(yaml.safe_load(file.read_text("utf-8")))
    )
    assert errors == []


def test_editor_schema_catches_a_typo_and_a_bad_id() -> None:
    data = yaml.safe_load((EXAMPLE / "schemas" / "lite" / "schema.yaml").read_text("utf-8"))
    data["artifacts"][0]["requries"] = ["x"]
    data["artifacts"][1]["id"] = "Specs"
    messages = [e.message for e in _validator("codev-schema.json").iter_errors(data)]
    assert any("requries" in m for m in messages)
    assert any("Specs" in m for m in messages)


def test_config_and_change_pass_their_json_schemas() -> None:
    config = yaml.safe_load((EXAMPLE / "config.yaml").read_text("utf-8"))
    assert list(_validator("codev-config.json").iter_errors(config)) == []
    change = yaml.safe_load(
        (EXAMPLE / "changes" / "add-csv-export" / "change.yaml").read_text("utf-8")
    )
    assert list(_validator("codev-change.json").iter_errors(change)) == []
    assert list(_validator("codev-change.json").iter_errors({"schema": "lite", "skip": 1}))
