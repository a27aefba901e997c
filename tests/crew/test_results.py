"""The MCP tools' output schemas say exactly what a result holds: they refuse a result
with a key too many, a key missing or a value of the wrong kind (the drives of
tests/commands/test_mcp_clients.py check that real results pass)."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from crewbook.core.toolbox import BY_NAME, TOOLS, output_schema
from crewbook.core.tools import ERROR
from crewbook.crew.results import result_schema

ROUTE: dict[str, Any] = {
    "task": "1.2", "change": "add-csv-export", "text": "Write the serializer", "class": {},
    "tier": "light", "effort": "low", "family": None, "model": None, "setting": None,
    "native": None, "native_text": None, "note": None, "source": "none",
    "source_path": None, "path": [], "suggestion": True, "hint": "no routing profile"}


def _valid(schema: dict[str, Any], value: Any) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(value)


def test_every_tool_has_an_object_schema_with_its_refusal() -> None:
    for tool in TOOLS:
        schema = output_schema(tool)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object"
        assert schema["anyOf"][1] == ERROR


@pytest.mark.parametrize(("change", "valid"), [
    ({}, True),
    ({"extra": 1}, False),
    ({"tier": "huge"}, False),
    ({"native": 4096}, True),
    ({"native": 1.5}, False),
    ({"suggestion": False}, False),
])
def test_a_route_schema_is_exact(change: dict[str, Any], valid: bool) -> None:
    assert _valid(result_schema("task_route_show"), {**ROUTE, **change}) is valid


def test_a_loop_result_needs_every_field() -> None:
    schema = output_schema(BY_NAME["crew_step"])
    act = {"loop": "crew", "act": 1, "role": "analyst", "stage": "frame", "receives": [],
           "expects": None, "prompt_path": None, "budget": {}, "attempt": 1, "moves": [],
           "feedback": [], "journal": [], "route": None, "finished": False,
           "finished_reason": None, "details": {}}
    assert _valid(schema, act)
    assert not _valid(schema, {k: v for k, v in act.items() if k != "act"})
    assert not _valid(schema, {**act, "act": "one"})
    refusal = {"error": "LoopRefused", "code": "stale", "message": "m", "problems": []}
    assert _valid(schema, refusal)
    assert not _valid(schema, {**refusal, "code": None})
