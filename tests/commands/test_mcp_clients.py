"""`crewbook mcp` driven by three clients nobody here wrote, each through one server.

The same drive for each: a whole crew epic (init → step → analyst → developer with the
bar → qa ``go`` → ``scope_covered``), every other tool once (routing, the autonomous
loop), the wrong calls (unknown tool, blank bar, bad enum, a refusal carrying a progress
token, wrong role, stale act) and semi-auto approval. Every wrong call must come back
as an ``isError`` result with its code, never a JSON-RPC error, and every successful
result's ``structuredContent`` must validate against the tool's declared
``outputSchema``. The clients:

- the official ``mcp`` SDK client, once per protocol revision it speaks (the
  ``initialize`` handshake revisions, and 2026-07-28's per-request envelope, where
  approval travels as an ``InputRequiredResult``);
- a ``fastmcp`` client with progress and elicitation handlers (its default: a progress
  token on every call, the newest protocol);
- the MCP Inspector (npm, pinned in ``tests/mcp_inspector/``, installed by ``.ci/run``):
  its connection CLI ``mcpdo`` for the drive (one server, each command a call on it, an
  approval answered with ``elicitation/respond``), and ``inspector --cli`` (one server
  per command) for the listing and a refusal with a progress token. Skipped when it is
  not installed, except under CI (``CI`` set), where its absence fails.

One server process per drive keeps the file at about 40 s of CPU.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.session import ClientRequestContext, ElicitationFnT
from mcp.client.stdio import stdio_client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

TASKS_MD = "# Tasks\n\n## Export\n\n- [ ] 1.1 Add the button\n- [ ] 1.2 Write the serializer\n"
GREEN = f"{shlex.quote(sys.executable)} -c \"print('ok')\""
GOAL = "Deliver the CSV export"
SERVE = "import sys; from crewbook.commands import main; sys.exit(main())"
#: The pinned MCP Inspector (`npm ci` in tests/mcp_inspector/): `inspector`, `mcpdo`.
BIN = Path(__file__).parents[1] / "mcp_inspector" / "node_modules" / ".bin"
ALL_TOOLS = {"crew_init", "crew_report", "crew_status", "crew_step", "loop_init",
             "loop_step", "provider_presets_list", "provider_profile_init",
             "provider_profile_show", "task_classify", "task_route_show"}


@dataclass(frozen=True)
class Answer:
    """A tool result as any client reports it."""

    is_error: bool
    text: str
    structured: Any


class Client:
    """What the drive needs of a client: its tool listing and a call."""

    async def tools(self) -> dict[str, dict[str, Any]]:
        """Tool name → {"title", "outputSchema"}."""
        raise NotImplementedError

    async def call(self, name: str, args: dict[str, Any], *, progress: bool = False) -> Answer:
        """Call `name`; with `progress`, the request carries a progress token."""
        raise NotImplementedError


@dataclass
class User:
    """The user behind a client that can ask: answers in turn, the questions kept."""

    answers: list[str]
    asked: list[str] = field(default_factory=list)

    def answer(self, question: str) -> str:
        self.asked.append(question)
        return self.answers.pop(0)


@pytest.fixture
def project(tour: Path) -> Path:
    (tour / "_codev" / "changes" / "add-csv-export" / "tasks.md").write_text(TASKS_MD)
    return tour


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "CREWBOOK_HOME": str(home)}


def _server(project: Path, home: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=["-c", SERVE, "mcp", "--project", str(project)],
                                 env=_env(home), cwd=str(project))


async def drive(client: Client, project: Path) -> dict[str, tuple[str, Answer]]:
    """The whole drive; each answer under its step's name, with the tool called."""
    out: dict[str, tuple[str, Answer]] = {}

    async def call(key: str, name: str, args: dict[str, Any],
                   progress: bool = False) -> Answer:
        answer = await client.call(name, args, progress=progress)
        out[key] = (name, answer)
        return answer

    await call("unknown", "crew_stats", {})
    await call("blank_bar", "crew_init", {"goal": GOAL, "bar": {"test": "   "}})
    await call("bad_enum", "crew_init", {"goal": GOAL, "bar": {"test": GREEN},
                                         "scope": "everything"})
    await call("init", "crew_init", {"goal": GOAL, "bar": {"test": GREEN}})
    await call("again", "crew_init", {"goal": GOAL, "bar": {"test": GREEN}}, progress=True)
    step = await call("step", "crew_step", {})
    act = step.structured["act"] if not step.is_error else 1
    ledger = project / "_codev" / "crew" / "crew.jsonl"
    before = ledger.read_bytes()
    await call("wrong_role", "crew_report", {"role": "qa", "verdict": "go",
                                             "summary": "not my turn"})
    await call("stale", "crew_report", {"role": "analyst", "verdict": "done",
                                        "summary": "framed", "act": act + 5})
    assert ledger.read_bytes() == before  # a refused report logs nothing
    await call("analyst", "crew_report", {"role": "analyst", "verdict": "done",
                                          "summary": "framed", "act": act})
    await call("developer", "crew_report", {"role": "developer", "verdict": "done",
                                            "summary": "built"}, progress=True)
    await call("qa", "crew_report", {"role": "qa", "verdict": "go", "summary": "green"})
    await call("status", "crew_status", {"full": True})
    await call("presets", "provider_presets_list", {})
    await call("profile_init", "provider_profile_init", {"family": "claude"})
    await call("profile_show", "provider_profile_show", {})
    await call("classify", "task_classify", {"task_id": "1.2", "change": "add-csv-export",
                                             "complexity": "simple"})
    await call("route", "task_route_show", {"task_id": "1.2", "change": "add-csv-export"})
    await call("loop_init", "loop_init", {"goal": GOAL})
    await call("loop_step", "loop_step", {"test_command": GREEN, "summary": "planned"})
    (project / "_codev" / "crew.yaml").write_text("autonomy: semi-auto\n")
    await call("gated", "crew_init", {"goal": GOAL, "bar": {"test": GREEN}, "force": True})
    await call("gated_again", "crew_step", {})
    await call("gated_third", "crew_report", {"role": "analyst", "verdict": "done",
                                              "summary": "framed"})
    await call("disabled", "loop_init", {"goal": GOAL, "force": True})
    return out


def check(out: dict[str, tuple[str, Answer]], schemas: dict[str, dict[str, Any]],
          user: User | None) -> None:
    """What every client must see. `user`: the client asks the user (answers accept,
    decline, cancel), or None when it cannot ask."""
    def ok(key: str) -> Any:
        answer = out[key][1]
        assert not answer.is_error, (key, answer.text)
        return answer.structured

    def refused(key: str, code: str, words: str) -> None:
        answer = out[key][1]
        assert answer.is_error, (key, answer)
        assert answer.structured["code"] == code, (key, answer.structured)
        assert words in answer.text, (key, answer.text)

    if out["unknown"][1].structured is None:  # a client that checks names itself
        assert out["unknown"][1].is_error
        assert "crew_stats" in out["unknown"][1].text
    else:
        refused("unknown", "unknown_tool", "did you mean 'crew_status'")
    refused("blank_bar", "invalid_value", "the command is blank")
    refused("bad_enum", "invalid_argument", '"everything" is not one of "story"')
    refused("again", "already_exists", 'pass "force": true to start a new one')
    assert "force=True" not in out["again"][1].text  # MCP's words, not Python's
    assert "--force" not in out["again"][1].text
    refused("wrong_role", "wrong_role", "expects a report from 'analyst'")
    refused("stale", "stale", "ask for the current contract")
    assert ok("step")["role"] == "analyst"
    assert ok("analyst")["role"] == "developer"
    assert ok("developer")["role"] == "qa"
    assert ok("qa")["finished_reason"] == "scope_covered"
    status = ok("status")
    assert status["finished_reason"] == "scope_covered"
    assert [r["role"] for r in status["details"]["ledger"]] == ["analyst", "developer", "qa"]
    assert ok("route")["task"] == "1.2"
    assert ok("profile_show")["family"] == "claude"
    assert ok("loop_step")["stage"] == "implementation"
    refused("disabled", "disabled", "disabled in semi-auto")
    if user is None:
        refused("gated", "needs_approval", "crewbook crew init")
        refused("gated_again", "needs_approval", "crewbook crew step")
        refused("gated_third", "needs_approval", "crewbook crew report")
    else:  # asked for each gated call: accepted, declined, dismissed
        assert ok("gated")["current"] == "analyst"
        refused("gated_again", "declined", "the user declined crew_step")
        refused("gated_third", "declined", "the user dismissed crew_report")
        assert len(user.asked) == 3, user.asked
        assert "approve crew_init" in user.asked[0]
    # every tool answered once at least, each result as its outputSchema's first branch
    # says, each refusal as its second
    checked = set()
    for name, answer in out.values():
        if answer.structured is None or name not in schemas:  # the unknown tool
            continue
        schema = schemas[name]["outputSchema"]
        result, error = schema["anyOf"]
        branch = {**schema, "anyOf": [error if answer.is_error else result]}
        jsonschema.Draft202012Validator(branch).validate(answer.structured)
        checked.add(name)
    assert checked == ALL_TOOLS
    assert set(schemas) == ALL_TOOLS
    assert all(s["title"] for s in schemas.values())
    for s in schemas.values():
        jsonschema.Draft202012Validator.check_schema(s["outputSchema"])
        assert s["outputSchema"]["type"] == "object"  # as MCP requires of an outputSchema


# --- the official MCP SDK client ---------------------------------------------------


class SdkClient(Client):
    """The `mcp` SDK's ClientSession (or its `Client`, which answers the 2026-07-28
    `InputRequiredResult` rounds)."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.progress: list[float] = []

    async def tools(self) -> dict[str, dict[str, Any]]:
        listed = (await self.session.list_tools()).tools
        return {t.name: {"title": t.title, "outputSchema": t.output_schema} for t in listed}

    async def call(self, name: str, args: dict[str, Any], *, progress: bool = False) -> Answer:
        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            self.progress.append(done)

        result = await self.session.call_tool(name, args,
                                              progress_callback=on_progress if progress
                                              else None)
        content = result.content[0]
        assert isinstance(content, types.TextContent)
        return Answer(bool(result.is_error), content.text, result.structured_content)


def _sdk_elicitation(user: User) -> ElicitationFnT:
    async def elicit(context: ClientRequestContext,
                     params: types.ElicitRequestParams) -> types.ElicitResult:
        action = user.answer(params.message)
        assert action in ("accept", "decline", "cancel")
        return types.ElicitResult(action=action, content={} if action == "accept" else None)
    return elicit


async def _sdk_drive(params: StdioServerParameters, version: str, project: Path,
                     user: User) -> tuple[dict[str, tuple[str, Answer]],
                                          dict[str, dict[str, Any]], str | None]:
    elicit = _sdk_elicitation(user)
    if version in MODERN_PROTOCOL_VERSIONS:
        from mcp.client.client import Client as SdkHighLevel

        async with SdkHighLevel(params, mode=version, elicitation_callback=elicit) as high:
            client = SdkClient(high)
            schemas = await client.tools()
            return await drive(client, project), schemas, high.session.protocol_version
    async with stdio_client(params) as (read, write), \
            ClientSession(read, write, elicitation_callback=elicit) as session:
        # the SDK offers its newest handshake revision; an older one is asked for the
        # same way, then adopted
        result = await session.send_request(types.InitializeRequest(
            params=types.InitializeRequestParams(
                protocol_version=version,
                capabilities=types.ClientCapabilities(
                    elicitation=types.ElicitationCapability()),
                client_info=types.Implementation(name="crewbook-tests", version="0"))),
            types.InitializeResult)
        session.adopt(result)
        await session.send_notification(types.InitializedNotification())
        client = SdkClient(session)
        schemas = await client.tools()
        return await drive(client, project), schemas, session.protocol_version


@pytest.mark.parametrize("version", [*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS])
def test_the_sdk_client_drives_an_epic(project: Path, tmp_path: Path, version: str) -> None:
    user = User(["accept", "decline", "cancel"])
    out, schemas, spoken = anyio.run(_sdk_drive, _server(project, tmp_path / "home"),
                                     version, project, user)
    assert spoken == version
    if version in ("2024-11-05", "2025-03-26"):  # elicitation came with 2025-06-18
        assert user.asked == []
        check(out, schemas, None)
    else:
        check(out, schemas, user)


# --- fastmcp -----------------------------------------------------------------------


def test_a_fastmcp_client_drives_an_epic(project: Path, tmp_path: Path) -> None:
    """fastmcp sends a progress token on every call and speaks the newest protocol:
    semi-auto asks it for approval, proceeds on accept, refuses on decline."""
    pytest.importorskip("fastmcp")
    from fastmcp import Client as FastClient
    from fastmcp.client.elicitation import ElicitResult
    from fastmcp.client.transports import StdioTransport

    user = User(["accept", "decline", "cancel"])
    progress: list[float] = []

    async def on_elicit(message: str, response_type: Any, params: Any,
                        context: Any) -> ElicitResult[Any]:
        action = user.answer(message)
        assert action in ("accept", "decline", "cancel")
        return ElicitResult(action=action, content={} if action == "accept" else None)

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(done)

    class Fast(Client):
        def __init__(self, client: Any) -> None:
            self.client = client

        async def tools(self) -> dict[str, dict[str, Any]]:
            return {t.name: {"title": t.title, "outputSchema": t.output_schema}
                    for t in await self.client.list_tools()}

        async def call(self, name: str, args: dict[str, Any], *,
                       progress: bool = False) -> Answer:
            result = await self.client.call_tool(name, args, raise_on_error=False)
            return Answer(bool(result.is_error), result.content[0].text,
                          result.structured_content)

    params = _server(project, tmp_path / "home")
    transport = StdioTransport(command=params.command, args=list(params.args),
                               env=dict(params.env or {}), cwd=str(project),
                               keep_alive=False)

    async def main() -> Any:
        async with FastClient(transport, elicitation_handler=on_elicit,
                              progress_handler=on_progress) as client:
            fast = Fast(client)
            schemas = await fast.tools()
            return await drive(fast, project), schemas, client.protocol_version

    out, schemas, spoken = anyio.run(main)
    assert spoken == MODERN_PROTOCOL_VERSIONS[-1]  # its default: the newest revision
    check(out, schemas, user)


# --- the MCP Inspector ------------------------------------------------------------


def _inspector_or_skip() -> Path:
    """The pinned Inspector's bin folder; a skip without it, a failure under CI."""
    if shutil.which("node") is not None and (BIN / "inspector").exists():
        return BIN
    if os.environ.get("CI"):
        pytest.fail("the MCP Inspector is not installed (cd tests/mcp_inspector && npm ci); "
                    ".ci/run installs it")
    pytest.skip("the MCP Inspector is not installed (cd tests/mcp_inspector && npm ci)")


def _first_json(text: str) -> dict[str, Any]:
    """The first JSON document of `text` (the Inspector may print a summary after it)."""
    reply, _ = json.JSONDecoder().raw_decode(text.strip())
    assert isinstance(reply, dict), text
    return reply


def _inspector_env(tmp_path: Path) -> dict[str, str]:
    """The Inspector's own environment: a home of its own (its catalog and daemon
    files), secrets kept in memory, no colour."""
    home = tmp_path / "inspector-home"
    home.mkdir(exist_ok=True)
    return {**os.environ, "HOME": str(home), "MCP_INSPECTOR_SECRET_STORE": "memory",
            "NO_COLOR": "1"}


def _server_entry(project: Path, home: Path) -> dict[str, Any]:
    """`crewbook mcp` as an `mcpServers` entry (what a user writes in a client's config)."""
    env = {"CREWBOOK_HOME": str(home)}
    if os.environ.get("PYTHONPATH"):  # a test run from a source tree
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return {"command": sys.executable, "args": ["-c", SERVE, "mcp", "--project", str(project)],
            "env": env, "cwd": str(project)}


class InspectorClient(Client):
    """The Inspector's connection CLI (`mcpdo`): it connects once (one server for the
    whole drive), then each command is one call on that connection; an elicitation
    comes back as `elicitationPending`, answered with `elicitation/respond`."""

    def __init__(self, bin_dir: Path, env: dict[str, str], config: Path,
                 user: User) -> None:
        self.mcpdo = str(bin_dir / "mcpdo")
        self.env = env
        self.config = config
        self.user = user

    async def run(self, *args: str) -> dict[str, Any]:
        done = await anyio.run_process([self.mcpdo, "--format", "json", *args],
                                       env=self.env, check=False)
        return _first_json(done.stdout.decode() or done.stderr.decode())

    async def start(self) -> None:
        """A private daemon (its own socket and token), then the connection."""
        done = await anyio.run_process([self.mcpdo, "private"], env=self.env)
        for line in done.stdout.decode().splitlines():
            key, _, value = line.removeprefix("export ").partition("=")
            self.env[key] = shlex.split(value)[0]
        connected = await self.run("--config", str(self.config), "connect", "crewbook")
        assert connected.get("name") == "crewbook", connected

    async def stop(self) -> None:
        """Stop the daemon (and with it the server), and remove its folder."""
        if "MCP_INSPECTOR_DAEMON_DIR" in self.env:
            await anyio.run_process([self.mcpdo, "daemon", "stop"], env=self.env,
                                    check=False)
            shutil.rmtree(self.env["MCP_INSPECTOR_DAEMON_DIR"], ignore_errors=True)

    async def tools(self) -> dict[str, dict[str, Any]]:
        listed = (await self.run("--connection", "crewbook", "tools/list"))["tools"]
        return {t["name"]: {"title": t.get("title"), "outputSchema": t.get("outputSchema")}
                for t in listed}

    async def call(self, name: str, args: dict[str, Any], *, progress: bool = False) -> Answer:
        token = ["--tool-metadata", "progressToken=crewbook-tests"] if progress else []
        reply = await self.run("--connection", "crewbook", "tools/call", name,
                               "--tool-args-json", json.dumps(args), *token)
        pending = reply.get("elicitationPending")
        if pending is not None:  # the user answers; the reply is the call's result
            answer = self.user.answer(pending["message"])
            reply = await self.run("--connection", "crewbook", "elicitation/respond",
                                   pending["elicitationId"],
                                   *(["{}"] if answer == "accept" else [f"--{answer}"]))
        if reply.get("error", {}).get("code") == "tool_not_found":  # its own check
            return Answer(True, reply["error"]["message"], None)  # against tools/list
        assert "content" in reply, (name, reply)  # a result, never a protocol error
        return Answer(bool(reply.get("isError")), reply["content"][0]["text"],
                      reply.get("structuredContent"))


def test_the_inspector_drives_an_epic(project: Path, tmp_path: Path) -> None:
    bin_dir = _inspector_or_skip()
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {
        "crewbook": _server_entry(project, tmp_path / "home")}}))
    user = User(["accept", "decline", "cancel"])
    client = InspectorClient(bin_dir, _inspector_env(tmp_path), config, user)

    async def main() -> Any:
        try:
            await client.start()
            schemas = await client.tools()
            return await drive(client, project), schemas
        finally:
            await client.stop()

    out, schemas = anyio.run(main)
    check(out, schemas, user)


def test_the_inspector_cli_lists_and_gets_a_refusal(project: Path, tmp_path: Path) -> None:
    """`inspector --cli`, one server per command as a user runs it: the tools with their
    titles and schemas, and a refusal carrying a progress token as an `isError` result
    whose structured content the Inspector accepts (it checks it against the schema)."""
    bin_dir = _inspector_or_skip()
    entry = _server_entry(project, tmp_path / "home")
    server = [*(x for k, v in entry["env"].items() for x in ("-e", f"{k}={v}")),
              "--cwd", entry["cwd"], entry["command"], *entry["args"]]

    def cli(*args: str) -> dict[str, Any]:
        import subprocess

        done = subprocess.run([str(bin_dir / "inspector"), "--cli", "--format", "json",
                               "-q", *server, *args], env=_inspector_env(tmp_path),
                              capture_output=True, text=True, timeout=120, check=False)
        return _first_json(done.stdout or done.stderr)

    listed = cli("--method", "tools/list")["result"]["tools"]
    assert {t["name"] for t in listed} == ALL_TOOLS
    assert all(t["title"] and t["outputSchema"]["anyOf"] for t in listed)
    refused = cli("--method", "tools/call", "--tool-name", "crew_step",
                  "--tool-metadata", "progressToken=crewbook-tests")
    assert refused["result"]["isError"] is True, refused
    assert refused["result"]["structuredContent"]["code"] == "not_found"
    assert "no crew loop" in refused["result"]["content"][0]["text"]
