"""example-from-JSON-Schema: the smallest instance of a schema, for the happy-path
report of the Stepper and the artifacts of a simulated run (one maker for both)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["example_of", "plain_copy"]

#: How deep `example_of` follows nested schemas (a recursive schema stops there).
MAX_DEPTH = 12


def example_of(schema: Any, depth: int = 0) -> Any:
    """A small instance of a JSON Schema: ``const``, ``default`` or the first ``enum``
    value; the first branch of ``oneOf``/``anyOf``; ``allOf`` merged; required
    properties only; ``minItems`` distinct items; ``"example"`` padded to ``minLength``;
    ``minimum`` (else 0) for numbers; False for booleans."""
    if not isinstance(schema, Mapping) or depth > MAX_DEPTH:
        return {}
    for key in ("const", "default"):
        if key in schema:
            return plain_copy(schema[key])
    if schema.get("enum"):
        return plain_copy(next(iter(schema["enum"])))
    for key in ("oneOf", "anyOf"):
        if schema.get(key):
            return example_of(schema[key][0], depth + 1)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            value = example_of(part, depth + 1)
            if isinstance(value, dict):
                merged.update(value)
        return merged
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), kind[0] if kind else None)
    if kind == "object" or (kind is None and "properties" in schema):
        props = schema.get("properties", {})
        return {name: example_of(props.get(name, {}), depth + 1)
                for name in schema.get("required", [])}
    if kind == "array":
        count = int(schema.get("minItems", 0))
        item = schema.get("items", {})
        return [_distinct(example_of(item, depth + 1), i) for i in range(count)]
    if kind == "string":
        text = "example"
        length = int(schema.get("minLength", 1))
        return (text * (length // len(text) + 1))[:max(length, len(text))]
    if kind == "integer":
        return int(schema.get("minimum", 0))
    if kind == "number":
        return float(schema.get("minimum", 0))
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return {}


def plain_copy(value: Any) -> Any:
    """A deep copy of JSON-like data (dicts and lists copied, the rest shared)."""
    if isinstance(value, dict):
        return {k: plain_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_copy(v) for v in value]
    return value


def _distinct(value: Any, i: int) -> Any:
    """Item `i` of an array made distinct from the others (``uniqueItems`` holds)."""
    if isinstance(value, str) and i:
        return f"{value} {i + 1}"
    if isinstance(value, dict) and i:
        return {k: (v + i if type(v) is int else v) for k, v in value.items()}
    if type(value) is int and i:
        return value + i
    return value
