"""`crewbook mcp`: the seed's operations as MCP tools over stdio (seed 003).

Serves `crewbook.core.toolbox.TOOLS` (crew_init/report/status/step, loop_init/step,
provider_presets_list, provider_profile_init/show, task_classify, task_route_show) with
the official MCP Python SDK (the `mcp` package, 2.x, low-level `Server`), each tool with
the JSON Schema of its arguments. A refusal or any crewbook error comes back as a tool
result with ``isError: true`` and the message, so the agent can read why; the server
keeps running. Tools run in a worker thread (a bar can take minutes): read-only ones
at once, the others one at a time, with progress notifications while they run; a call
the client cancels (or leaves) stops the bar it measures at once; on the
project given by ``--project`` (default: found from the current folder at each call).
``--tool-prefix effortless_`` names them as seed 003 does. Each tool's description
gives its stability and scope, and its MCP annotations say read-only / idempotent.

The SDK is imported only here, when the command runs: ``import crewbook`` never loads it.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ._shared import common_options, project_arg

SERVER_NAME = "crewbook"


def build_server(project: Path | None, tool_prefix: str = "") -> Any:
    """The low-level MCP `Server` answering tools/list and tools/call.

    Tool names carry `tool_prefix` (``effortless_`` for clients written against the
    seed); bare names stay the default. Read-only tools (status, show, list) run at once,
    even while another call measures the bar; the others run one at a time. A long call
    sends progress notifications (every second) when the client gave a progress token.
    In semi-auto, a gated tool asks the user through MCP elicitation when the client
    supports it (else the refusal says how to approve).
    """
    import anyio
    from mcp import types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError
    from mcp_types.methods import SERVER_REQUESTS
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    from .. import __version__
    from ..errors import CrewbookError, CrewError, LoopRefused, Problem, did_you_mean

    lock = anyio.Lock()

    def annotations(t: Any) -> Any:
        return types.ToolAnnotations(read_only_hint=t.read_only,
                                     idempotent_hint=t.idempotent or None,
                                     destructive_hint=False if t.read_only else None)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        tools = _crew_tools()
        return types.ListToolsResult(tools=[
            types.Tool(name=tool_prefix + t.name, title=tools.TITLES[t.name],
                       description=t.full_description, input_schema=t.schema,
                       output_schema=tools.output_schema(t), annotations=annotations(t))
            for t in tools.TOOLS])

    def failure(exc: CrewbookError) -> types.CallToolResult:
        problems = list(getattr(exc, "problems", ()))
        code = (getattr(exc, "code", None) or (problems[0].code if problems else None)
                or _code_of(exc))
        message = _capped(exc.said_to("mcp"))  # "force": true, not force=True
        error = {"error": type(exc).__name__, "code": code, "message": message,
                 "problems": [{k: _capped(v) if isinstance(v, str) else v
                               for k, v in p.to_dict().items()} for p in problems[:50]]}
        return types.CallToolResult(content=[types.TextContent(type="text", text=message)],
                                    structured_content=error, is_error=True)

    async def approve(ctx: Any, params: Any, name: str,
                      args: dict[str, Any]) -> str | types.InputRequiredResult | None:
        """Ask the user through MCP elicitation: the answer (``accept``, ``decline``,
        ``cancel``), or None when this request cannot ask (a client without
        elicitation, a stateless HTTP request). Over a back-channel the question goes
        at once; on the 2026-07-28 protocol, which has none, the call answers an
        `InputRequiredResult` carrying the question, and the client's retry carries the
        answer (`input_responses`), matched to this very call by `request_state`."""
        import hashlib

        state = "approval:" + hashlib.sha256(json.dumps(
            [name, args], sort_keys=True, default=str).encode()).hexdigest()[:32]
        answer = (params.input_responses or {}).get(APPROVAL)
        if answer is not None and params.request_state == state:
            return str(getattr(answer, "action", "cancel"))
        caps = types.ClientCapabilities(elicitation=types.ElicitationCapability())
        if not ctx.session.check_client_capability(caps):
            return None
        question = (f"semi-auto: approve {name} with "
                    f"{json.dumps(args, ensure_ascii=False)[:500]}?")
        schema: dict[str, Any] = {"type": "object", "properties": {}}
        version = getattr(ctx, "protocol_version", "")
        if getattr(ctx.session, "can_send_request", True):
            if ("elicitation/create", version) not in SERVER_REQUESTS:
                return None  # a revision before elicitation (2024-11-05, 2025-03-26)
            try:
                elicited = await ctx.session.elicit(question, schema,
                                                    related_request_id=ctx.request_id)
            except MCPError:  # the client could not answer: as if it could not ask
                return None
            return str(elicited.action)
        if version in MODERN_PROTOCOL_VERSIONS:
            return types.InputRequiredResult(input_requests={APPROVAL: types.ElicitRequest(
                params=types.ElicitRequestFormParams(message=question,
                                                     requested_schema=schema))},
                request_state=state)
        return None

    async def call(ctx: Any, params: types.CallToolRequestParams,
                   ) -> types.CallToolResult | types.InputRequiredResult:
        tools = _crew_tools()
        name = params.name
        args = dict(params.arguments or {})
        tool = (tools.BY_NAME.get(name[len(tool_prefix):]) if name.startswith(tool_prefix)
                else None)
        if tool is None:  # a prefix is strict: bare names are unknown, and not listed
            names = [tool_prefix + t.name for t in tools.TOOLS]
            return failure(CrewError("unknown tool", [Problem(
                "unknown_tool", f"no tool {_capped(name, 80)!r}{did_you_mean(name[:80], names)}"
                "; tools: "
                f"{', '.join(names)}", key="name")]))
        name = tool.name
        approved = False
        try:
            if tool.gate == "gated":
                why = await anyio.to_thread.run_sync(tools.gate_refusal, tool, project)
                if why is not None:  # ask only for a call that would otherwise proceed
                    await anyio.to_thread.run_sync(tools.precheck, tool, args, project)
                    answer = await approve(ctx, params, name, args)
                    if isinstance(answer, types.InputRequiredResult):
                        return answer  # the client asks the user, then calls again
                    if answer in ("decline", "cancel"):
                        said = "declined" if answer == "decline" else "dismissed"
                        raise LoopRefused(f"the user {said} {name} (semi-auto: approval "
                                          "asked through MCP elicitation); nothing was done",
                                          code="declined")
                    approved = answer == "accept"
            work = functools.partial(tools.call_tool, name, args, project,
                                     approved=approved)
            run = _stoppable  # cancelled (or the client left): its bar stops at once
            RUNNING.append(name)
            try:
                if tool.read_only:
                    result = await run(work)
                else:
                    async with lock:
                        result = await _with_progress(ctx, run, work)
            finally:
                RUNNING.remove(name)
        except CrewbookError as exc:
            return failure(exc)
        text = json.dumps(result, ensure_ascii=False, default=str)
        if len(text) > MAX_ANSWER:
            return failure(CrewError("answer too large", [Problem(
                "too_large", f"the answer is {len(text)} characters, over the {MAX_ANSWER} "
                "limit; ask for less (crew_status without full)", key="result")]))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    structured_content=json.loads(text), is_error=False)

    return Server(SERVER_NAME, version=__version__,
                  instructions="crewbook: the crew loop, the autonomous loop and model "
                  "routing of a codev project (SPEC D1-D9).",
                  on_list_tools=list_tools, on_call_tool=call)


#: The longest error message (characters) an answer carries; the rest is cut, so a
#: huge argument echoed by an error never travels back whole.
MAX_MESSAGE = 4000
#: The largest successful answer (characters of JSON).
MAX_ANSWER = 4 * 1024 * 1024


#: The key of the approval question in an `InputRequiredResult` (2026-07-28).
APPROVAL = "approval"

#: The tool calls running now; those left when the client disconnects end with it.
RUNNING: list[str] = []


def _crew_tools() -> Any:
    """`crewbook.core.toolbox` (every family's tools, through the registry), imported at
    the first request rather than before the server answers ``initialize``: the loops'
    modules (about 0.1 s) then load while the client reads that answer, not before it
    (the SDK's own import is most of start-up)."""
    from ..core import toolbox

    return toolbox


def _code_of(exc: BaseException) -> str:
    """A code for an error that carries none, from its class (``AlreadyExistsError`` →
    ``already_exists``): every refusal has a top-level code a client can branch on."""
    name = type(exc).__name__.removesuffix("Error") or type(exc).__name__
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _capped(text: str, limit: int = MAX_MESSAGE) -> str:
    """`text` cut to `limit` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters cut)"


#: Seconds a cancelled call waits for its worker thread to end once told to stop (a bar
#: is killed within a second; a keeper that does not answer is given up on at 10 s).
STOP_WAIT = 15.0


async def _stoppable(work: Any) -> Any:
    """`work()` in a worker thread. When this call is cancelled (the client sent
    ``notifications/cancelled`` or left), a bar it runs is stopped (`core.bar.stopping`:
    its whole tree killed, nothing recorded for it) and the thread is waited for (at most
    `STOP_WAIT` s), so the loop's lock and state are settled before the next call runs;
    then the cancellation goes on."""
    import threading

    import anyio

    from ..core.bar import stopping

    stop = threading.Event()
    ended = threading.Event()

    def in_thread() -> Any:
        try:
            with stopping(stop):
                return work()
        finally:
            ended.set()

    try:
        return await anyio.to_thread.run_sync(in_thread, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        stop.set()
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(ended.wait, STOP_WAIT)
        raise


async def _with_progress(ctx: Any, run: Any, work: Any) -> Any:
    """`await run(work)`, sending a progress notification every second meanwhile when the
    request carries a progress token (a bar may take minutes)."""
    import anyio

    meta = getattr(ctx, "meta", None) or {}
    token = (meta.get("progress_token", meta.get("progressToken")) if isinstance(meta, dict)
             else getattr(meta, "progress_token", None))
    if token is None:
        return await run(work)
    result: list[Any] = []
    failed: list[BaseException] = []

    async def main() -> None:
        try:
            result.append(await run(work))
        except Exception as exc:  # re-raised below, unwrapped from the task group's group
            failed.append(exc)
        scope.cancel()

    async with anyio.create_task_group() as group:
        scope = group.cancel_scope
        group.start_soon(main)
        elapsed = 0
        while True:
            await anyio.sleep(1)
            elapsed += 1
            await ctx.session.send_progress_notification(
                token, elapsed, message=f"working for {elapsed} s (measuring the bar may "
                "take minutes)", related_request_id=ctx.request_id)
    if failed:
        raise failed[0]
    return result[0]


def import_sdk() -> None:
    """Import the `mcp` SDK's server with pydantic's deferred model builds.

    Most of the SDK's import time is pydantic building a validator for each of the
    protocol's models (two revisions of them), most of which a session never uses.
    pydantic's `defer_build` setting builds a model's validator at its first use instead;
    it is set on `BaseModel`'s configuration (which models inherit when they are
    defined) for the import only, so crewbook's own models are not affected."""
    if "mcp.server.lowlevel" in sys.modules:
        return
    from pydantic import BaseModel

    config = BaseModel.model_config
    before = config.get("defer_build")
    config["defer_build"] = True
    try:
        import mcp.server.lowlevel
        import mcp.server.stdio  # noqa: F401
    finally:
        if before is None:
            config.pop("defer_build", None)
        else:
            config["defer_build"] = before


def serve(project: Path | None, tool_prefix: str = "") -> None:
    """Serve over stdin/stdout until the client closes the connection."""
    import_sdk()
    import anyio
    from mcp.server.stdio import stdio_server

    server = build_server(project, tool_prefix)
    left_mid_call: list[bool] = []

    async def main() -> None:
        async with stdio_server() as (read, write), anyio.create_task_group() as group:
            send, receive = anyio.create_memory_object_stream[Any](16)

            async def pump() -> None:
                """Pass the client's messages on; at end of input (the client left),
                cancel what still runs instead of waiting for it (a bar may take
                minutes)."""
                async with send:
                    async for message in read:
                        await send.send(message)
                if RUNNING:
                    left_mid_call.append(True)
                    group.cancel_scope.cancel()

            group.start_soon(pump)
            await server.run(receive, write, server.create_initialization_options())
            group.cancel_scope.cancel()

    anyio.run(main)
    if left_mid_call:  # the cancelled call stopped its bar (`_stoppable`); a thread that
        sys.stdout.flush()  # did not end in time ends with the process, and the keepers,
        sys.stderr.flush()  # seeing crewbook gone, kill whatever it still ran
        os._exit(0)


def cmd_mcp(args: argparse.Namespace) -> int:
    """`crewbook mcp`: serve the tools over stdio."""
    project = project_arg(args)
    prefix = args.tool_prefix or ""
    if prefix and not re.fullmatch(r"[A-Za-z0-9_-]{1,40}", prefix):
        raise UsageError(f"--tool-prefix {prefix!r}: letters, digits, _ and - only (at "
                         "most 40), e.g. effortless_")
    serve(project.resolve() if project else None, prefix)
    return 0


def register(subparsers: Any, common: argparse.ArgumentParser | None = None) -> None:
    """Add `mcp` to the `crewbook` subparsers."""
    common = common or common_options()
    p = subparsers.add_parser(
        "mcp", parents=[common], help="serve the crew and routing tools over MCP (stdio)",
        description="An MCP server (stdio) exposing crew_init/report/status/step, "
        "loop_init/step, provider_presets_list, provider_profile_init/show, task_classify "
        "and task_route_show, with JSON schemas for their arguments.")
    p.add_argument("--tool-prefix", metavar="PREFIX", default="",
                   help="prefix every tool name (e.g. effortless_ for clients written "
                   "against seed 003: effortless_crew_init...); default: bare names")
    p.set_defaults(func=cmd_mcp)
