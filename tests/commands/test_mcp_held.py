"""`crewbook mcp` held (D1–D9) through the official MCP client: prefixed names, tool
annotations, read-only calls served while a bar runs, progress notifications, and the
semi-auto gate asked through MCP elicitation."""

from __future__ import annotations

import functools
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from procs import alive

TASKS_MD = "# Tasks\n\n## Export\n\n- [ ] 1.1 Add the button\n- [ ] 1.2 Write the serializer\n"
GREEN = f"{shlex.quote(sys.executable)} -c \"print('ok')\""


@pytest.fixture
def project(tour: Path) -> Path:
    (tour / "_codev" / "changes" / "add-csv-export" / "tasks.md").write_text(TASKS_MD)
    return tour


def _server(project: Path, home: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-c", "import sys; from crewbook.commands import main; sys.exit(main())", "mcp",
              "--project", str(project), *extra],
        env={**os.environ, "CREWBOOK_HOME": str(home)}, cwd=str(project))


def _text(result: Any) -> str:
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


async def _run(params: StdioServerParameters, body: Any, **session: Any) -> Any:
    async with stdio_client(params) as (read, write), \
            ClientSession(read, write, **session) as client:
        await client.initialize()
        return await body(client)


def test_tool_prefix_and_annotations(project: Path, tmp_path: Path) -> None:
    async def body(client: ClientSession) -> Any:
        tools = (await client.list_tools()).tools
        init = await client.call_tool("effortless_crew_init", {
            "goal": "g", "bar": {"test": GREEN}})
        status = await client.call_tool("effortless_crew_status", {})
        return tools, init, status

    tools, init, status = anyio.run(
        _run, _server(project, tmp_path / "home", "--tool-prefix", "effortless_"), body)
    by_name = {t.name: t for t in tools}
    assert set(by_name) >= {"effortless_crew_init", "effortless_task_route_show"}
    assert all(name.startswith("effortless_") for name in by_name)
    assert by_name["effortless_crew_status"].annotations.read_only_hint is True
    assert by_name["effortless_crew_step"].annotations.idempotent_hint is True
    assert by_name["effortless_crew_report"].annotations.read_only_hint is False
    assert "Stability: beta · scope: project" in by_name["effortless_crew_init"].description
    assert not init.is_error, init.content
    assert json.loads(_text(status))["details"]["expected_role"] == "analyst"
    assert by_name["effortless_crew_init"].title == "Start the crew loop"
    assert all(t.title and t.output_schema for t in tools)


def test_status_is_served_while_a_bar_runs_with_progress(project: Path,
                                                         tmp_path: Path) -> None:
    gate = tmp_path / "release"
    waits = (f"{shlex.quote(sys.executable)} -c \"import os, time\n"
             f"while not os.path.exists({str(gate)!r}): time.sleep(0.05)\"")
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    async def body(client: ClientSession) -> Any:
        init = await client.call_tool("crew_init", {"goal": "g", "bar": {"test": waits}})
        assert not init.is_error, init.content
        await client.call_tool("crew_report", {"role": "analyst", "verdict": "done",
                                               "summary": "framed"})
        done: dict[str, Any] = {}

        async def report() -> None:  # measures the bar, which waits for the gate file
            done["report"] = await client.call_tool(
                "crew_report", {"role": "developer", "verdict": "done", "summary": "built"},
                progress_callback=on_progress)

        async with anyio.create_task_group() as group:
            group.start_soon(report)
            with anyio.fail_after(60):
                while not seen:  # the long call reports progress while it runs
                    await anyio.sleep(0.1)
            status = await client.call_tool("crew_status", {})  # served meanwhile
            done["status_before_report"] = "report" not in done
            done["status"] = json.loads(_text(status))
            gate.write_text("go")
        return done

    done = anyio.run(_run, _server(project, tmp_path / "home"), body)
    assert done["status_before_report"]
    # the developer's report is accepted and saved; its bar is still being measured
    assert done["status"]["details"]["expected_role"] == "qa"
    assert done["status"]["details"]["bar"] is None
    assert not done["report"].is_error, done["report"].content
    assert json.loads(_text(done["report"]))["role"] == "qa"
    assert seen


def test_semi_auto_asks_only_for_a_call_that_would_proceed(project: Path,
                                                          tmp_path: Path) -> None:
    (project / "_codev" / "crew.yaml").write_text("autonomy: semi-auto\n")
    asked: list[str] = []

    async def accept(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={})

    async def body(client: ClientSession) -> Any:
        no_loop = await client.call_tool("crew_report", {"role": "analyst", "verdict": "done",
                                                         "summary": "framed"})
        bad = await client.call_tool("crew_init", {"goal": "g", "max_rounds": "abc"})
        return no_loop, bad

    no_loop, bad = anyio.run(functools.partial(_run, elicitation_callback=accept),
                             _server(project, tmp_path / "home"), body)
    assert asked == []
    assert no_loop.is_error
    assert "no crew loop" in _text(no_loop)
    assert bad.is_error
    assert bad.structured_content["code"] == "invalid_argument"
    by_key = {p["key"]: p["message"] for p in bad.structured_content["problems"]}
    assert by_key["max_rounds"] == '"abc" is not an integer', by_key


def test_a_tool_prefix_is_strict(project: Path, tmp_path: Path) -> None:
    async def body(client: ClientSession) -> Any:
        return await client.call_tool("crew_status", {})

    bare = anyio.run(_run, _server(project, tmp_path / "home", "--tool-prefix", "effortless_"),
                     body)
    assert bare.is_error
    assert bare.structured_content["code"] == "unknown_tool"
    listed = _text(bare).split("tools:")[-1]
    names = [n.strip() for n in listed.split(",")]
    assert "effortless_crew_status" in names
    assert all(n.startswith("effortless_") for n in names), names


def test_huge_arguments_are_refused_without_being_echoed(project: Path,
                                                         tmp_path: Path) -> None:
    big = "x" * (2 * 1024 * 1024)

    async def body(client: ClientSession) -> Any:
        init = await client.call_tool("crew_init", {"goal": "g", "bar": {"test": GREEN}})
        return init, [
            await client.call_tool("crew_report", {"role": "analyst", "verdict": "done",
                                                   "summary": big}),
            await client.call_tool("crew_init", {"goal": "y" * (3 * 1024 * 1024),
                                                 "bar": {"test": GREEN}, "force": True}),
            await client.call_tool("task_route_show", {"task_id": "z" * (1024 * 1024)}),
            await client.call_tool("w" * (1024 * 1024), {})]

    init, answers = anyio.run(_run, _server(project, tmp_path / "home"), body)
    assert not init.is_error, init.content
    for answer in answers:
        assert answer.is_error
        size = len(json.dumps(answer.structured_content)) + len(_text(answer))
        assert size < 20_000, (size, _text(answer)[:200])
    assert answers[0].structured_content["code"] == "too_large"
    assert answers[1].structured_content["code"] == "too_large"


def test_a_client_that_disconnects_mid_bar_ends_the_bar(project: Path,
                                                        tmp_path: Path) -> None:
    """A client that closes the connection (stdin) without killing the server: the
    server ends at once, and with it the bar it was measuring (not at the bar's timeout).
    Raw JSON-RPC lines, since the SDK client kills the server it started anyway."""
    import subprocess
    import time

    pid_file = tmp_path / "bar.pid"
    waits = (f"{shlex.quote(sys.executable)} -c \"import os, time\n"
             f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
             "time.sleep(300)\"")
    params = _server(project, tmp_path / "home")
    server = subprocess.Popen([params.command, *params.args], cwd=params.cwd, env=params.env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    assert server.stdin is not None
    assert server.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert server.stdin is not None
        server.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
        server.stdin.flush()

    def answer() -> dict[str, Any]:
        assert server.stdout is not None
        reply: dict[str, Any] = json.loads(server.stdout.readline())
        return reply

    try:
        send({"id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}})
        assert "result" in answer()
        send({"method": "notifications/initialized"})
        for n, args in enumerate([
                {"name": "crew_init", "arguments": {"goal": "g", "bar": {"test": waits}}},
                {"name": "crew_report", "arguments": {"role": "analyst", "verdict": "done",
                                                      "summary": "framed"}}], start=2):
            send({"id": n, "method": "tools/call", "params": args})
            assert answer()["result"]["isError"] is False
        send({"id": 9, "method": "tools/call", "params": {"name": "crew_report", "arguments": {
            "role": "developer", "verdict": "done", "summary": "built"}}})
        deadline = time.monotonic() + 30
        while not (pid_file.exists() and pid_file.read_text()):
            assert time.monotonic() < deadline, "the bar never started"
            time.sleep(0.05)
        server.stdin.close()  # the client leaves mid-bar
        assert server.wait(timeout=20) == 0
        pid = int(pid_file.read_text())
        deadline = time.monotonic() + 20
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            assert time.monotonic() < deadline, "the bar still runs after the client left"
            time.sleep(0.1)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


class _Raw:
    """A bare JSON-RPC client on the server's stdio: speaks any protocol revision, the
    2026-07-28 one with its per-request `_meta` envelope (capabilities per request)."""

    def __init__(self, params: StdioServerParameters, version: str) -> None:
        import subprocess

        self.version = version
        self.modern = version >= "2026"
        self.next_id = 0
        self.proc = subprocess.Popen([params.command, *params.args], cwd=params.cwd,
                                     env=params.env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        if self.modern:
            params = {**params, "_meta": {
                "io.modelcontextprotocol/protocolVersion": self.version,
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}}
        self.next_id += 1
        line = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write((json.dumps(line) + "\n").encode())
        self.proc.stdin.flush()
        reply: dict[str, Any] = json.loads(self.proc.stdout.readline())
        return reply

    def call(self, name: str, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
        reply = self.request("tools/call", {"name": name, "arguments": arguments, **extra})
        assert "result" in reply, reply  # never a JSON-RPC error: a result, isError or not
        result: dict[str, Any] = reply["result"]
        return result

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=20)


@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25", "2026-07-28"])
def test_every_protocol_version_gets_results_and_refusals(project: Path, tmp_path: Path,
                                                          version: str) -> None:
    (project / "_codev" / "crew.yaml").write_text("autonomy: semi-auto\n")
    raw = _Raw(_server(project, tmp_path / "home"), version)
    try:
        if not raw.modern:
            init = raw.request("initialize", {
                "protocolVersion": version, "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"}})
            assert init["result"]["protocolVersion"] == version
            assert raw.proc.stdin is not None
            raw.proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        gated = raw.call("crew_init", {"goal": "g", "bar": {"test": GREEN}})
        declined = None
        if raw.modern:  # no back-channel: the question comes back as the result, and the
            # client's retry carries the user's answer
            answer = {"action": "decline"}
            declined = raw.call("crew_init", {"goal": "g", "bar": {"test": GREEN}},
                                inputResponses={"approval": answer},
                                requestState=gated.get("requestState"))
        status = raw.call("crew_status", {})
        bad = raw.call("crew_init", {"goal": "g", "bar": {"test": GREEN}, "scope": "x"})
        unknown = raw.call("crew_stats", {})
    finally:
        raw.close()
    if version < "2026":  # semi-auto: an elicitation cannot reach this client, so the
        assert gated["isError"] is True  # documented refusal
        assert gated["structuredContent"]["code"] == "needs_approval"
    else:  # it declared elicitation in the request: asked, then declined
        assert gated["resultType"] == "input_required", gated
        question = gated["inputRequests"]["approval"]
        assert question["method"] == "elicitation/create"
        assert "approve crew_init" in question["params"]["message"]
        assert declined is not None
        assert declined["isError"] is True
        assert declined["structuredContent"]["code"] == "declined"
    assert status["isError"] is True  # read-only, not gated: "no crew loop" at once
    assert "no crew loop" in status["content"][0]["text"]
    assert bad["structuredContent"]["code"] == "invalid_argument"
    assert unknown["structuredContent"]["code"] == "unknown_tool"
    assert "did you mean 'crew_status'" in unknown["content"][0]["text"]


def test_status_answers_while_an_approval_is_pending(project: Path, tmp_path: Path) -> None:
    (project / "_codev" / "crew.yaml").write_text("autonomy: semi-auto\n")
    asked = anyio.Event()
    answered = anyio.Event()
    order: list[str] = []

    async def slow_user(context: Any, params: Any) -> types.ElicitResult:
        asked.set()
        await answered.wait()  # the user is thinking
        order.append("approved")
        return types.ElicitResult(action="accept", content={})

    async def body(client: ClientSession) -> Any:
        done: dict[str, Any] = {}

        async def init() -> None:
            done["init"] = await client.call_tool("crew_init", {"goal": "g",
                                                                "bar": {"test": GREEN}})

        async with anyio.create_task_group() as group:
            group.start_soon(init)
            with anyio.fail_after(30):
                await asked.wait()
                done["status"] = await client.call_tool("crew_status", {})
            order.append("status")
            answered.set()
        return done

    done = anyio.run(functools.partial(_run, elicitation_callback=slow_user),
                     _server(project, tmp_path / "home"), body)
    assert order == ["status", "approved"]
    assert done["status"].is_error  # no crew loop yet: the approval is still pending
    assert not done["init"].is_error, done["init"].content


def _slow_bar(tmp_path: Path) -> tuple[str, Path, Path]:
    """A bar command that, while the file `slow` exists, writes its pid and its child's
    (a grandchild of the keeper) to `pids` and sleeps; else it passes at once. Returns
    (command, slow, pids)."""
    slow, pids = tmp_path / "slow", tmp_path / "bar.pids"
    script = tmp_path / "bar.py"
    script.write_text(
        "import os, subprocess, sys, time\n"
        f"if os.path.exists({str(slow)!r}):\n"
        "    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
        f"    with open({str(pids)!r} + '.tmp', 'w') as out:\n"
        "        out.write(f'{os.getpid()} {child.pid}')\n"
        f"    os.replace({str(pids)!r} + '.tmp', {str(pids)!r})\n"
        "    time.sleep(300)\n")
    slow.write_text("")
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}", slow, pids


async def _bar_started(pids: Path) -> list[int]:
    """The bar's pids, once it has written them (at most 60 s)."""
    with anyio.fail_after(60):
        while not pids.exists():
            await anyio.sleep(0.05)
    return [int(p) for p in pids.read_text().split()]


async def _ended(pids: list[int], within: float = 15) -> list[int]:
    """The pids of `pids` still running after `within` seconds (empty once all ended)."""
    deadline = anyio.current_time() + within
    while any(alive(p) for p in pids) and anyio.current_time() < deadline:
        await anyio.sleep(0.05)
    return [p for p in pids if alive(p)]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_cancelled_call_ends_its_bar_and_the_server_serves_on(project: Path,
                                                                tmp_path: Path) -> None:
    """The client cancels the developer's report mid-bar (the SDK sends
    notifications/cancelled): the bar's whole tree ends at once, not at its timeout; the
    report stands and the bar is not recorded (unmeasured: the next crew_step measures
    it); the server serves the next calls."""
    command, slow, pids_file = _slow_bar(tmp_path)
    ledger = project / "_codev" / "crew" / "crew.jsonl"

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        pass

    async def body(client: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        init = await client.call_tool("crew_init", {"goal": "g", "bar": {"test": command}})
        assert not init.is_error, init.content
        await client.call_tool("crew_report", {"role": "analyst", "verdict": "done",
                                               "summary": "framed"})
        async with anyio.create_task_group() as group:
            async def report() -> None:  # with a progress token, as fastmcp sends
                out["report"] = await client.call_tool("crew_report", {
                    "role": "developer", "verdict": "done", "summary": "built"},
                    progress_callback=on_progress)

            group.start_soon(report)
            pids = await _bar_started(pids_file)
            group.cancel_scope.cancel()  # the caller gives up: notifications/cancelled
        out["left"] = await _ended(pids)
        out["pids"] = pids
        with anyio.fail_after(30):
            out["status"] = await client.call_tool("crew_status", {})
            slow.unlink()  # the bar passes at once now
            out["step"] = await client.call_tool("crew_step", {})
        return out

    out = anyio.run(_run, _server(project, tmp_path / "home"), body)
    assert "report" not in out  # cancelled: never answered
    assert out["left"] == [], f"still running after the cancel: {out['left']} of {out['pids']}"
    assert not out["status"].is_error, out["status"].content
    status = json.loads(_text(out["status"]))
    assert status["details"]["expected_role"] == "qa"  # the report stands
    assert status["details"]["bar"] is None  # the cancelled bar is not recorded
    assert not out["step"].is_error, out["step"].content
    assert json.loads(_text(out["step"]))["role"] == "qa"
    events = [json.loads(line) for line in ledger.read_text().splitlines()]
    bars = [e for e in events if e["kind"] == "bar"]
    assert [b["verdict"] for b in bars] == ["pass"]  # only the bar crew_step measured


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_an_sdk_client_that_leaves_mid_bar_ends_the_bar(project: Path,
                                                        tmp_path: Path) -> None:
    """The SDK client leaves (its stdio_client closes the server's stdin) while a
    report's bar runs: the bar's whole tree is gone, not left running to its timeout."""
    command, _, pids_file = _slow_bar(tmp_path)
    seen: list[list[int]] = []

    async def body(client: ClientSession) -> None:
        init = await client.call_tool("crew_init", {"goal": "g", "bar": {"test": command}})
        assert not init.is_error, init.content
        await client.call_tool("crew_report", {"role": "analyst", "verdict": "done",
                                               "summary": "framed"})
        async with anyio.create_task_group() as group:
            async def report() -> None:
                await client.call_tool("crew_report", {"role": "developer",
                                                       "verdict": "done", "summary": "b"})

            group.start_soon(report)
            seen.append(await _bar_started(pids_file))
            group.cancel_scope.cancel()

    async def leave_then_look() -> list[int]:
        with anyio.CancelScope() as scope:  # leaving the session mid-call
            await _run(_server(project, tmp_path / "home"), body)
            scope.cancel()
        return await _ended(seen[0])

    assert anyio.run(leave_then_look) == []
