"""The JSON Schemas of the delivery file formats are current and accept real files."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

import crewbook.delivery
from crewbook.delivery import format_models
from crewbook.formats import render

REPO = Path(__file__).resolve().parents[2]
BUILTIN = Path(crewbook.delivery.__file__).parent / "builtin" / "roles.yaml"


def _schema(name: str) -> dict[str, object]:
    model = format_models()[name]
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            **model.model_json_schema(by_alias=True)}


@pytest.mark.parametrize("name", sorted(format_models()))
def test_committed_schema_is_current(name: str) -> None:
    committed = REPO / "schemas" / name
    assert committed.read_text("utf-8") == render(_schema(name)), (
        f"schemas/{name} is stale: regenerate it with `python -m crewbook.formats schemas/`")


def test_builtin_catalogue_validates() -> None:
    data = yaml.safe_load(BUILTIN.read_text("utf-8"))
    validator = jsonschema.Draft202012Validator(_schema("delivery-roles.json"))
    assert [e.message for e in validator.iter_errors(data)] == []
    assert not validator.is_valid({**data, "extra": 1})  # the schema is strict


def test_task_and_policy_files_validate() -> None:
    task = {"id": "csv-export", "description": "Export as CSV", "mode": "standard",
            "review": {"policy": "risk-based", "max_lines": 120},
            "limits": {"steps": 30, "launches": {"qa": 2}, "duration_minutes": None}}
    jsonschema.Draft202012Validator(_schema("delivery-task.json")).validate(task)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(_schema("delivery-task.json")).validate(
            {"description": "x", "limits": {"wait_minutes": None}})
    policy = yaml.safe_load((REPO / "tests/data/review_policy/billing-rule.yaml").read_text())
    jsonschema.Draft202012Validator(_schema("delivery-review-policy.json")).validate(policy)
    overrides = {"roles": {"qa": {"add": ["browser"]}}}
    jsonschema.Draft202012Validator(_schema("delivery-overrides.json")).validate(overrides)
    json.dumps(_schema("delivery-task.json"))
