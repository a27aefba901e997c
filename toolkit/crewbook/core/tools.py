"""The machinery of the MCP tools (seed 003), shared by every family that offers some:
`Tool` (name, description, JSON Schema of the arguments, a function from JSON arguments to
a JSON result, and what the server shows and checks about it), `check_arguments`, the
output schemas of a loop result (`loop_schema`) or a refusal (`ERROR`), and the gate of
the semi-auto mode (`gate_refusal`).

A family lists its tools in its own ``tools.py`` (``TOOLS``), named by its registry line;
`crewbook.core.toolbox` gathers them for the server. Nothing here imports the MCP SDK, a
family or a concept: what a tool needs of the project (its autonomy mode, a check before
asking for approval) it declares as a function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from ..errors import CrewError, Problem

JSON = dict[str, Any]
Gate = Literal["none", "gated", "disabled"]

#: The most JSON a call's arguments other than an inline `payload` (at most 4 MiB, checked
#: by the report) may weigh, in bytes: more is refused unread.
MAX_ARGUMENTS = 512 * 1024

#: The optional act id of a report or step: a retry of an accepted act is not logged twice.
ACT_ID: JSON = {"type": "integer", "minimum": 1, "description": "the act number of the "
                "contract answered (its `act`): a retry of an act already accepted returns the "
                "next contract and logs nothing; a report for another act is refused"}


def obj(properties: JSON, required: tuple[str, ...] = ()) -> JSON:
    """The schema of a tool's arguments: an object of `properties`, no other key."""
    return {"type": "object", "properties": properties, "required": list(required),
            "additionalProperties": False}


@dataclass(frozen=True)
class Tool:
    """One operation: its name, what it does, its argument schema, how to run it (`run`,
    arguments and project → JSON), and the schema of its result (`result`); its human
    title; its stability (beta|stable), scope (project, no project, story), whether it
    only reads, is idempotent, and is gated in semi-auto (``disabled``: refused there).

    A gated tool declares `autonomy` (the project's mode, ``auto`` | ``semi-auto``) and
    `cli`, the command a user runs to do it themselves; `precheck` raises the error a
    call would hit whatever the user answers (asked before asking the user)."""

    name: str
    description: str
    schema: JSON
    run: Callable[[JSON, Any], JSON]
    result: Callable[[], JSON]
    title: str = ""
    stability: str = "stable"
    scope: str = "project"
    read_only: bool = False
    idempotent: bool = False
    gate: Gate = "none"
    cli: str = ""
    autonomy: Callable[[Any], str] | None = None
    precheck: Callable[[JSON, Any], None] | None = None

    @property
    def full_description(self) -> str:
        """The description with stability, scope and gating, as tools/list shows it."""
        gate = {"gated": " Gated (semi-auto): acts once the user approves.",
                "disabled": " Execution tool: disabled in semi-auto."}.get(self.gate, "")
        return (f"{self.description} [Stability: {self.stability} · scope: {self.scope}]"
                + (" Read-only." if self.read_only else "") + gate)


def gate_refusal(tool: Tool, project: Any) -> str | None:
    """Why `tool` may not act now without the user's approval, or None.

    In semi-auto, a ``disabled`` tool is refused outright and a gated tool needs approval:
    the MCP server asks the user (elicitation) when the client supports it; elsewhere the
    refusal says how to approve."""
    if tool.gate == "none" or tool.autonomy is None or tool.autonomy(project) != "semi-auto":
        return None
    if tool.gate == "disabled":
        return (f"{tool.name} is an execution tool, disabled in semi-auto (_codev/crew.yaml "
                "autonomy: semi-auto); the user can set `autonomy: auto` to enable it")
    return (f"{tool.name} needs the user's approval in semi-auto (_codev/crew.yaml autonomy: "
            "semi-auto) and this client cannot ask for it (no MCP elicitation). To approve, "
            f"ask the user to run it themselves (`{tool.cli} ...`), or to set `autonomy: auto`")


def _json_message(error: Any) -> str:
    """A schema error in JSON terms (``"abc" is not an integer``, ``null``, ``true``),
    not Python's (``None``, ``'abc'``), which the client never wrote."""
    import json

    def shown(value: Any) -> str:
        text = json.dumps(value, ensure_ascii=False, default=str)
        return text if len(text) <= 80 else text[:77] + "..."

    if error.validator in ("maxLength", "minLength") and isinstance(error.instance, str):
        limit = "at most" if error.validator == "maxLength" else "at least"
        return (f"a string of {len(error.instance)} characters; {limit} "
                f"{error.validator_value} allowed")
    if error.validator == "type":
        kinds = error.validator_value if isinstance(error.validator_value, list) \
            else [error.validator_value]
        article = " or ".join(("an " if k[0] in "aeiou" else "a ") + k for k in kinds)
        return f"{shown(error.instance)} is not {article}"
    if error.validator == "enum":
        return (f"{shown(error.instance)} is not one of "
                f"{', '.join(shown(v) for v in error.validator_value)}")
    if error.validator == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        return f"missing required argument {shown(missing[0]) if missing else ''}".strip()
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        return f"unknown argument(s) {', '.join(shown(k) for k in extra)}"
    return str(error.message)


def check_arguments(tool: Tool, arguments: JSON | None) -> JSON:
    """`arguments` checked against the tool's schema; `CrewError` with every problem."""
    import json

    from .lazy import import_jsonschema

    jsonschema = import_jsonschema()  # not `import jsonschema`: see import_jsonschema
    args = dict(arguments or {})
    rest = {k: v for k, v in args.items() if k != "payload"}  # a payload has its own cap
    size = len(json.dumps(rest, ensure_ascii=False, default=str).encode())
    if size > MAX_ARGUMENTS:  # refused without echoing: a huge value stays out of the answer
        raise CrewError(f"invalid arguments for {tool.name}", [Problem(
            "too_large", f"the arguments are {size} bytes, over the {MAX_ARGUMENTS} limit; "
            "pass long documents as a file (payload_path) instead", key="arguments")])
    validator = jsonschema.Draft202012Validator(tool.schema)
    errors = sorted(validator.iter_errors(args), key=lambda e: list(e.absolute_path))
    if errors:
        problems = [Problem("invalid_argument", _json_message(e),
                            key=".".join(str(p) for p in e.absolute_path) or None)
                    for e in errors]
        raise CrewError(f"invalid arguments for {tool.name}", problems)
    return args


@cache
def loop_schema(kind: str) -> JSON:
    """The schema of a `Status` or `Act` as `to_dict()` gives it: every field required
    (``asdict`` writes them all), typed from the dataclass by pydantic; built once (the
    server lists its tools many times). Not to be mutated."""
    from dataclasses import fields

    import pydantic

    from . import loop

    cls = getattr(loop, kind)
    schema: JSON = pydantic.TypeAdapter(cls).json_schema(mode="serialization")
    schema["required"] = [f.name for f in fields(cls)]
    schema["additionalProperties"] = False
    return schema


_STR: JSON = {"type": "string"}
_STR_OR_NULL: JSON = {"type": ["string", "null"]}
_INT_OR_NULL: JSON = {"type": ["integer", "null"]}


def record(properties: JSON, optional: tuple[str, ...] = ()) -> JSON:
    """A closed object: every key of `properties` required except `optional`."""
    return {"type": "object", "properties": properties,
            "required": [k for k in properties if k not in optional],
            "additionalProperties": False}


#: The structured content of a refusal (`isError`): clients that validate every
#: structured content against the declared schema (the TypeScript SDK, so the MCP
#: Inspector) accept it only when the schema allows it too.
ERROR: JSON = record({
    "error": _STR, "code": _STR, "message": _STR,
    "problems": {"type": "array", "items": record({
        "code": _STR, "path": _STR_OR_NULL, "line": _INT_OR_NULL, "column": _INT_OR_NULL,
        "key": _STR_OR_NULL, "message": _STR,
        "severity": {"type": "string", "enum": ["error", "warning"]}})}})


def output_schema(tool: Tool) -> JSON:
    """`tool`'s MCP `outputSchema`: its result (first branch of ``anyOf``) or a refusal
    (`ERROR`, second), the pydantic ``$defs`` of a loop result lifted to the top so their
    references still resolve."""
    result = dict(tool.result())
    defs = result.pop("$defs", None)
    return {"type": "object", **({"$defs": defs} if defs else {}),
            "anyOf": [result, ERROR]}


__all__ = ["ACT_ID", "ERROR", "JSON", "MAX_ARGUMENTS", "Gate", "Tool", "check_arguments",
           "gate_refusal", "loop_schema", "obj", "output_schema", "record"]
