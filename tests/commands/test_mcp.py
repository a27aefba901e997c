"""`crewbook mcp` through the MCP SDK's own stdio client: a real server subprocess."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TASKS_MD = "# Tasks\n\n## Export\n\n- [ ] 1.1 Add the button\n- [ ] 1.2 Write the serializer\n"
GREEN = f"{shlex.quote(sys.executable)} -c \"print('ok')\""


@pytest.fixture
def project(tour: Path, tmp_path: Path) -> Path:
    (tour / "_codev" / "changes" / "add-csv-export" / "tasks.md").write_text(TASKS_MD)
    return tour


def _server(project: Path, home: Path) -> StdioServerParameters:
    env = {**os.environ, "CREWBOOK_HOME": str(home)}
    return StdioServerParameters(
        command=sys.executable,
        args=["-c", "import sys; from crewbook.commands import main; sys.exit(main())", "mcp",
              "--project", str(project)],
        env=env, cwd=str(project))


async def _session_run(project: Path, home: Path, body: Any) -> Any:
    async with stdio_client(_server(project, home)) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        return await body(session)


def _data(result: Any) -> Any:
    assert result.content, result
    return json.loads(result.content[0].text)


def test_lists_every_tool_with_a_schema(project: Path, tmp_path: Path) -> None:
    async def body(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    tools = anyio.run(_session_run, project, tmp_path / "home", body)
    names = {t.name for t in tools}
    assert names == {"crew_init", "crew_report", "crew_status", "crew_step", "loop_init",
                     "loop_step", "provider_presets_list", "provider_profile_init",
                     "provider_profile_show", "task_classify", "task_route_show"}
    by_name = {t.name: t for t in tools}
    assert by_name["crew_report"].input_schema["required"] == ["role", "verdict", "summary"]
    assert by_name["crew_init"].input_schema["properties"]["scope"]["enum"] == [
        "story", "epic", "all", "workshop"]


def test_a_whole_epic_to_scope_covered_and_a_refusal(project: Path, tmp_path: Path) -> None:
    ledger = project / "_codev" / "crew" / "crew.jsonl"

    async def body(session: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        init = await session.call_tool("crew_init", {"goal": "Deliver the CSV export",
                                                     "bar": {"test": GREEN}})
        assert not init.is_error, init.content
        step = await session.call_tool("crew_step", {})
        out["step"] = _data(step)
        before = ledger.read_bytes()
        refused = await session.call_tool("crew_report", {
            "role": "qa", "verdict": "go", "summary": "not my turn"})
        out["refused"] = refused
        out["unchanged"] = ledger.read_bytes() == before
        for role, verdict in (("analyst", "done"), ("developer", "done"), ("qa", "go")):
            result = await session.call_tool("crew_report", {
                "role": role, "verdict": verdict, "summary": f"{role} says {verdict}"})
            assert not result.is_error, result.content
            out["last"] = _data(result)
        out["status"] = _data(await session.call_tool("crew_status", {"full": True}))
        bad = await session.call_tool("crew_init", {"goal": "x", "bar": {}})
        out["bad_args"] = bad
        route = await session.call_tool("task_route_show", {"task_id": "1.2",
                                                            "change": "add-csv-export"})
        out["route"] = _data(route)
        return out

    out = anyio.run(_session_run, project, tmp_path / "home", body)
    assert out["step"]["role"] == "analyst"
    prompt = json.loads((project / out["step"]["prompt_path"]).read_text())["prompt"]
    assert "Deliver the CSV export" in prompt
    assert out["refused"].is_error
    assert "expects a report from 'analyst'" in out["refused"].content[0].text
    assert out["unchanged"]
    assert out["last"]["finished"]
    assert out["last"]["finished_reason"] == "scope_covered"
    assert out["status"]["finished_reason"] == "scope_covered"
    assert [r["role"] for r in out["status"]["details"]["ledger"]] == [
        "analyst", "developer", "qa"]
    assert out["bad_args"].is_error
    assert out["route"]["task"] == "1.2"


def test_the_sdk_is_imported_with_deferred_model_builds_and_nothing_else_is() -> None:
    # in a fresh process: the SDK's protocol models are built at their first use, and
    # pydantic's setting is back as it was for every model defined after the import
    code = """
import sys
from pydantic import BaseModel
from crewbook.commands.mcp import import_sdk
import_sdk()
from mcp import types
assert "defer_build" not in BaseModel.model_config, BaseModel.model_config
assert types.InitializeRequest.model_config.get("defer_build") is True
class Later(BaseModel):
    n: int
assert Later.model_config.get("defer_build") is None
assert Later(n=1).n == 1
request = types.InitializeRequest.model_validate({"method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"}}})
assert request.params.client_info.name == "t"
print("ok")
"""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.stdout.strip() == "ok", done.stderr
