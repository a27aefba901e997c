"""The JSON Schema of each MCP tool's result (its `outputSchema`).

A client that reads `structuredContent` (fastmcp, the MCP Inspector, an SDK client
with validation) checks it against the tool's declared `outputSchema`, so each schema
says exactly which keys a result has and their JSON types. The loop tools answer a
`Status` or an `Act` (`crewbook.core.loop`), whose schema is derived from the dataclass
(`crewbook.core.tools.loop_schema`, as the refusal's `ERROR`);
the routing tools answer the JSON of their `to_dict()`, described here by hand, each
object closed (``additionalProperties: false``) so a key added to a result without its
schema fails `tests/commands/test_mcp_clients.py`.
"""

from __future__ import annotations

from typing import Any

from ..core.tools import ERROR, loop_schema, record

JSON = dict[str, Any]

_STR: JSON = {"type": "string"}
_STR_OR_NULL: JSON = {"type": ["string", "null"]}
_BOOL: JSON = {"type": "boolean"}
_STRINGS: JSON = {"type": "array", "items": _STR}
#: A native effort setting: an effort name, a thinking budget in tokens, or none.
_NATIVE: JSON = {"type": ["string", "integer", "null"]}
_TIER: JSON = {"type": "string", "enum": ["deep", "standard", "light"]}
_EFFORT: JSON = {"type": "string", "enum": ["low", "medium", "high"]}
_SOURCE: JSON = {"type": "string", "enum": ["project", "global", "preset", "built-in", "none"]}


def _array(items: JSON) -> JSON:
    return {"type": "array", "items": items}


_CANDIDATE = record({"source": _SOURCE, "where": _STR, "value": _STR_OR_NULL,
                      "used": _BOOL, "reason": _STR})
#: One tier × effort cell of a profile; without a model only ``model: null`` is given.
_CELL = record({"tier": _TIER, "effort": _EFFORT, "model": _STR_OR_NULL,
                 "setting": _STR, "native": _NATIVE, "native_text": _STR,
                 "note": _STR_OR_NULL, "source": _SOURCE, "source_path": _STR_OR_NULL,
                 "candidates": _array(_CANDIDATE)},
                optional=("setting", "native", "native_text", "note"))
_MATRIX: JSON = {"type": "object", "propertyNames": _TIER,
                 "additionalProperties": {"type": "object", "propertyNames": _EFFORT,
                                          "additionalProperties": _CELL}}
_ROUTE = record({
    "task": _STR, "change": _STR_OR_NULL, "text": _STR_OR_NULL,
    "class": {"type": "object", "additionalProperties": _STR},
    "tier": _TIER, "effort": _EFFORT, "family": _STR_OR_NULL, "model": _STR_OR_NULL,
    "setting": _STR_OR_NULL, "native": _NATIVE, "native_text": _STR_OR_NULL,
    "note": _STR_OR_NULL, "source": _SOURCE, "source_path": _STR_OR_NULL,
    "path": _array(record({"step": _STR, "value": _STR, "source": _STR,
                            "where": _STR_OR_NULL, "used": _BOOL})),
    "suggestion": {"const": True}, "hint": _STR_OR_NULL})

#: The routing tools' results, by tool name.
ROUTING: dict[str, JSON] = {
    "provider_presets_list": record({
        "presets": _array(record({
            "family": _STR, "source": {"type": "string", "enum": ["built-in", "custom"]},
            "path": _STR, "overrides_builtin": _BOOL, "setting": _STR,
            "description": _STR_OR_NULL, "models": _STRINGS})),
        "warnings": _array(record({"code": _STR, "family": _STR, "message": _STR})),
        "custom_folder": _STR}),
    "provider_profile_init": record({
        "family": _STR, "scope": {"type": "string", "enum": ["global", "project"]},
        "path": _STR, "preset": _STR, "overwritten": _BOOL, "advice": _STR}),
    "provider_profile_show": record({
        "family": _STR_OR_NULL, "exists": _BOOL,
        "layers": _array(record({"scope": _STR, "path": _STR, "family": _STR_OR_NULL})),
        "preset": _STR_OR_NULL, "matrix": _MATRIX,
        "roles": _array(record({"loop": _STR, "role": _STR, "tier": _TIER,
                                 "effort": _EFFORT, "source": _STR,
                                 "source_path": _STR_OR_NULL, "cell": _CELL})),
        "task_defaults": {"type": "object", "additionalProperties": record({
            "tier": _TIER, "effort": _EFFORT, "source": _STR,
            "source_path": _STR_OR_NULL})},
        "hint": _STR_OR_NULL}),
    "task_classify": _ROUTE,
    "task_route_show": _ROUTE,
}

#: Which crew tools answer a `Status` and which an `Act`.
LOOP: dict[str, str] = {"crew_init": "Status", "crew_status": "Status", "crew_report": "Act",
                        "crew_step": "Act"}


def result_schema(name: str) -> JSON:
    """The JSON Schema of crew or routing tool `name`'s successful result; KeyError for no
    such tool."""
    if name in LOOP:
        return loop_schema(LOOP[name])
    return ROUTING[name]


__all__ = ["ERROR", "LOOP", "ROUTING", "loop_schema", "result_schema"]
