"""`crewbook mcp`: the seed's operations as MCP tools over stdio (seed 003).

Serves `crewbook.crew.tools.TOOLS` (crew_init/report/status/step, loop_init/step,
provider_presets_list, provider_profile_init/show, task_classify, task_route_show) with
the official MCP Python SDK (the `mcp` package, 2.x, low-level `Server`), each tool with
the JSON Schema of its arguments. A refusal or any crewbook error comes back as a tool
result with ``isError: true`` and the message, so the agent can read why; the server
keeps running. Tools run in a worker thread (a bar can take minutes), one call at a
time, on the project given by ``--project`` (default: found from the current folder at
each call).

The SDK is imported only here, when the command runs: ``import crewbook`` never loads it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ._shared import common_options, project_arg

SERVER_NAME = "crewbook"


def build_server(project: Path | None) -> Any:
    """The low-level MCP `Server` answering tools/list and tools/call."""
    import anyio
    from mcp import types
    from mcp.server.lowlevel import Server

    from .. import __version__
    from ..crew.tools import TOOLS, call_tool
    from ..errors import CrewbookError

    lock = anyio.Lock()

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[
            types.Tool(name=t.name, description=t.description, input_schema=t.schema)
            for t in TOOLS])

    async def call(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            async with lock:
                result = await anyio.to_thread.run_sync(
                    call_tool, params.name, dict(params.arguments or {}), project)
        except CrewbookError as exc:
            error = {"error": type(exc).__name__, "code": getattr(exc, "code", None),
                     "message": str(exc),
                     "problems": [p.to_dict() for p in getattr(exc, "problems", ())]}
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=str(exc))],
                structured_content=error, is_error=True)
        text = json.dumps(result, ensure_ascii=False, default=str)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    structured_content=json.loads(text), is_error=False)

    return Server(SERVER_NAME, version=__version__,
                  instructions="crewbook: the crew loop, the autonomous loop and model "
                  "routing of a codev project (SPEC D1-D9).",
                  on_list_tools=list_tools, on_call_tool=call)


def serve(project: Path | None) -> None:
    """Serve over stdin/stdout until the client closes the connection."""
    import anyio
    from mcp.server.stdio import stdio_server

    server = build_server(project)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


def cmd_mcp(args: argparse.Namespace) -> int:
    """`crewbook mcp`: serve the tools over stdio."""
    project = project_arg(args)
    serve(project.resolve() if project else None)
    return 0


def register(subparsers: Any, common: argparse.ArgumentParser | None = None) -> None:
    """Add `mcp` to the `crewbook` subparsers."""
    common = common or common_options()
    p = subparsers.add_parser(
        "mcp", parents=[common], help="serve the crew and routing tools over MCP (stdio)",
        description="An MCP server (stdio) exposing crew_init/report/status/step, "
        "loop_init/step, provider_presets_list, provider_profile_init/show, task_classify "
        "and task_route_show, with JSON schemas for their arguments.")
    p.set_defaults(func=cmd_mcp)
