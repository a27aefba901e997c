"""The tools' JSON Schemas and dispatch, without a server (`crewbook mcp` serves them)."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest

from crewbook.core.toolbox import BY_NAME, TOOLS, call_tool
from crewbook.errors import CrewError, LoopRefused

from .conftest import GREEN


def test_every_schema_is_a_valid_json_schema() -> None:
    for tool in TOOLS:
        jsonschema.Draft202012Validator.check_schema(tool.schema)
        assert tool.schema["type"] == "object"
        assert tool.description
    assert len(BY_NAME) == 11


def test_arguments_are_checked_against_the_schema(project: Path) -> None:
    with pytest.raises(CrewError) as exc:
        call_tool("crew_init", {"goal": "", "scope": "galaxy", "bar": {"tset": "x"}},
                  project)
    keys = {p.key for p in exc.value.problems}
    assert {"goal", "scope", "bar"} <= keys
    assert set(exc.value.codes) == {"invalid_argument"}
    with pytest.raises(CrewError, match="did you mean 'crew_step'"):
        call_tool("crew_stpe", {}, project)


def test_tools_run_the_crew_and_routing(project: Path) -> None:
    status = call_tool("crew_init", {"goal": "Deliver", "bar": {"test": GREEN}}, project)
    assert status["current"] == "analyst"
    act = call_tool("crew_step", {}, project)
    assert act["role"] == "analyst"
    assert act["prompt_path"].startswith("_codev/crew/prompts/")
    with pytest.raises(LoopRefused):
        call_tool("crew_report", {"role": "qa", "verdict": "go", "summary": "x"}, project)
    nxt = call_tool("crew_report", {"role": "analyst", "verdict": "done", "summary": "ok",
                                    "payload": {"criteria": ["a"]}}, project)
    assert nxt["role"] == "developer"
    assert call_tool("crew_status", {"full": True}, project)["acts"] == 1
    presets = call_tool("provider_presets_list", {}, project)
    assert "claude" in str(presets)
    call_tool("provider_profile_init", {"family": "claude", "scope": "project"}, project)
    shown = call_tool("provider_profile_show", {}, project)
    assert shown["family"] == "claude"
    route = call_tool("task_classify", {"task_id": "1.1", "change": "add-csv-export",
                                        "complexity": "complex"}, project)
    assert route["tier"] == "deep"
    assert call_tool("task_route_show", {"task_id": "1.2"}, project)["task"] == "1.2"
    with pytest.raises(CrewError, match="no task 'TSK-01' in the active story"):
        call_tool("task_route_show", {"task_id": "TSK-01"}, project)  # while a loop runs
    assert call_tool("loop_init", {"goal": "Ship"}, project)["current"] == "plan"
    assert call_tool("loop_step", {}, project)["stage"] == "implementation"


@pytest.mark.parametrize("kind", ["loop", "dangling"])
def test_an_unreadable_crew_yaml_fails_closed(project: Path, kind: str) -> None:
    """A `_codev/crew.yaml` that cannot be read is an error, not "no policy" (auto)."""
    crew = project / "_codev" / "crew.yaml"
    crew.unlink(missing_ok=True)
    if kind == "loop":
        crew.symlink_to(crew)
    else:
        crew.symlink_to(project / "nowhere.yaml")
    with pytest.raises(CrewError, match=r"_codev/crew.yaml cannot be read") as caught:
        call_tool("crew_init", {"goal": "g", "bar": {"test": GREEN}}, project)
    assert caught.value.problems[0].path == "_codev/crew.yaml"
    assert not (project / "_codev" / "crew" / "state.json").exists()


def test_argument_errors_are_in_json_terms() -> None:
    with pytest.raises(CrewError) as caught:
        call_tool("crew_init", {"goal": None, "max_rounds": "abc", "scope": "x", "bar": {}})
    messages = {p.key: p.message for p in caught.value.problems}
    assert messages["goal"] == "null is not a string"
    assert messages["max_rounds"] == '"abc" is not an integer'
    assert messages["scope"] == '"x" is not one of "story", "epic", "all", "workshop"'
    assert "None" not in str(caught.value)
