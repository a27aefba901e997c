"""Every MCP tool crewbook serves (seed 003), gathered from the families: each registry
line may name a module whose ``TOOLS`` lists that family's `crewbook.core.tools.Tool`s
(`crewbook.families.tool_modules`); they are imported when this module is (the MCP
server imports it at its first request), in registry order.

`TOOLS`, `BY_NAME` and `TITLES` are what ``tools/list`` shows; `call_tool` runs one (its
arguments checked, its semi-auto gate applied), `precheck` raises what a gated call would
hit whatever the user answers, `gate_refusal` and `output_schema` are the tool's own.
"""

from __future__ import annotations

from typing import Any

from ..errors import CrewError, LoopRefused, Problem, UsageError, did_you_mean
from ..families import tool_modules
from .family import resolve
from .tools import JSON, Tool, check_arguments, gate_refusal, output_schema


def gather() -> tuple[Tool, ...]:
    """Every registered family's tools, in registry order; `UsageError` when a tools
    module lists no `Tool`s or two tools share a name."""
    found: list[Tool] = []
    for dotted in tool_modules():
        tools = resolve(f"{dotted}:TOOLS")
        if not isinstance(tools, tuple) or not all(isinstance(t, Tool) for t in tools):
            raise UsageError(f"{dotted}.TOOLS is not a tuple of crewbook.core.tools.Tool; "
                             "a registry line names the module of its family's tools")
        found += tools
    names = [t.name for t in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"tools offered twice: {', '.join(twice)}; give each its own name")
    return tuple(found)


TOOLS: tuple[Tool, ...] = gather()
BY_NAME: dict[str, Tool] = {t.name: t for t in TOOLS}
#: A human title per tool (MCP `title`), shown by clients instead of the bare name.
TITLES: dict[str, str] = {t.name: t.title or t.name for t in TOOLS}


def precheck(tool: Tool, arguments: JSON | None, project: Any = None) -> None:
    """Raise the error a gated call would hit whatever the user answers: arguments the
    schema refuses, and the tool's own check (no loop to report to or step, a loop that
    exists without ``force``). Semi-auto asks for approval only for a call that would
    otherwise proceed."""
    args = check_arguments(tool, arguments)
    if tool.precheck is not None:
        tool.precheck(args, project)


def call_tool(name: str, arguments: JSON | None, project: Any = None, *,
              approved: bool = False) -> JSON:
    """Run tool `name` with JSON `arguments` on `project`; its JSON result. In semi-auto a
    gated tool runs only `approved` (by the user), and a ``disabled`` one never."""
    tool = BY_NAME.get(name)
    if tool is None:
        raise CrewError("unknown tool", [Problem(
            "unknown_tool", f"no tool {name!r}{did_you_mean(name, BY_NAME)}; tools: "
            f"{', '.join(BY_NAME)}", key="name")])
    args = check_arguments(tool, arguments)
    why = gate_refusal(tool, project)
    if why is not None and (tool.gate == "disabled" or not approved):
        raise LoopRefused(why, code="needs_approval" if tool.gate == "gated" else "disabled")
    return tool.run(args, project)


__all__ = [
    "BY_NAME",
    "TITLES",
    "TOOLS",
    "Tool",
    "call_tool",
    "check_arguments",
    "gate_refusal",
    "gather",
    "output_schema",
    "precheck",
]
