"""The file models, their JSON Schemas in schemas/, and the light import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

import crewbook.formats
from crewbook.formats import render
from crewbook.routing import provider_profile_init, task_classify
from crewbook.routing.home import builtin_presets_folder
from crewbook.routing.model import Capability, format_models

REPO = Path(__file__).resolve().parents[2]


def generated(name: str) -> str:
    model = format_models()[name]
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **model.model_json_schema(by_alias=True),
    }
    return render(schema)


@pytest.mark.parametrize("name", sorted(format_models()))
def test_committed_json_schema_is_current(name: str) -> None:
    committed = REPO / "schemas" / name
    assert committed.is_file(), f"schemas/{name} is missing"
    assert committed.read_text("utf-8") == generated(name), (
        f"schemas/{name} is stale: run `python -m crewbook.formats schemas/`"
    )
    if name in crewbook.formats.json_schemas():  # once formats.py lists the routing models
        assert render(crewbook.formats.json_schemas()[name]) == generated(name)


def validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(generated(name)))


@pytest.mark.parametrize("file", sorted(builtin_presets_folder().glob("*.yaml")), ids=str)
def test_builtin_presets_pass_the_json_schema(file: Path) -> None:
    data = yaml.safe_load(file.read_text("utf-8"))
    assert list(validator("routing-preset.json").iter_errors(data)) == []


def test_generated_profile_and_tasks_pass_their_json_schemas(home: Path, project: Path) -> None:
    provider_profile_init("mistral")
    profile = yaml.safe_load((home / "profile.yaml").read_text("utf-8"))
    assert list(validator("routing-profile.json").iter_errors(profile)) == []
    task_classify("1.1", complexity="simple", change="add-csv-export", project=project)
    task_classify("TSK-1", effort_level="high", project=project)
    tasks = yaml.safe_load((project / "_codev" / "routing" / "tasks.yaml").read_text("utf-8"))
    assert list(validator("routing-tasks.json").iter_errors(tasks)) == []


def test_editor_schema_catches_typos() -> None:
    bad = {"family": "x", "matrix": {"deep": {"hihg": {"model": "m"}}}, "role": {}}
    messages = [e.message for e in validator("routing-profile.json").iter_errors(bad)]
    assert any("hihg" in m for m in messages)
    assert any("role" in m for m in messages)


def test_capability_text() -> None:
    assert Capability(model="m", thinking_budget=0).native_text == "thinking off"
    assert Capability(model="m", thinking_budget=-1).native_text == "thinking: model decides"
    assert Capability(model="m", thinking_budget=16000).native_text == "thinking 16,000 tok"
    assert Capability(model="m", reasoning_effort="high").label == "m · reasoning high"
    assert Capability(model="m").setting == "none"


def test_importing_routing_stays_light() -> None:
    code = (
        "import sys, crewbook.routing\n"
        "heavy = [m for m in ('pandas', 'graphviz', 'ipywidgets', 'matplotlib', 'IPython') "
        "if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
