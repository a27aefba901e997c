"""The checks of the writer's line builders (`crewbook.ledger.linebuild`) per event shape,
made once: the rule each field follows, the plan of an event's shape (its keys and value
types: what is still checked per event and the writer's field order), and, per key set,
straight-line code that checks and lays out an engine's event (`builder`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final, NamedTuple, cast

from .events import FIELDS, KINDS, MAX_INT, REQUIRED_BY_KIND

__all__ = ["BUILDERS", "BUILT_PLANS", "KIND_SET", "MAX_PLANS", "NEEDS", "PLANS", "UNKNOWN",
           "ShapePlan", "builder", "shape_plan", "values_ok"]

#: The fields of a line after its `seq`, in the order the writer writes them.
_BODY: Final = FIELDS[FIELDS.index("seq") + 1:]
_BODY_TAIL: Final = _BODY[2:]  # after loop and kind
KIND_SET: Final = frozenset(KINDS)
#: The rule each field follows in `LineBuilder.quick` (the model's types, checked exactly).
_TEXT, _COUNT, _NAME, _KIND, _ATTEMPT, _COST, _PAYLOAD, _TS, _V, _SKIP = range(10)
_RULES: Final[dict[str, int]] = {
    "v": _V, "ts": _TS, "run": _NAME, "seq": _SKIP, "loop": _NAME, "kind": _KIND,
    "role": _TEXT, "stage": _TEXT, "verdict": _TEXT, "attempt": _ATTEMPT, "version": _COUNT,
    "summary": _TEXT, "tokens_in": _COUNT, "tokens_out": _COUNT, "cost": _COST,
    "duration_ms": _COUNT, "payload": _PAYLOAD,
}
assert set(_RULES) == set(FIELDS), "a field of LedgerEvent has no rule here"
#: The fields each kind needs, as sets (`_quick` checks them with one subset test).
NEEDS: Final[dict[str, frozenset[str]]] = {k: frozenset(v) for k, v in REQUIRED_BY_KIND.items()}
#: The type each rule wants (exactly: ``True`` is not a count, ``1`` is not a cost).
_TYPE_OF: Final[dict[int, type]] = {_TEXT: str, _COUNT: int, _NAME: str, _KIND: str,
                                    _ATTEMPT: int, _COST: float, _PAYLOAD: dict, _V: int}


class ShapePlan(NamedTuple):
    """What `_quick` still checks and writes for events of one shape (keys and types)."""

    order: tuple[str, ...]  # body fields present (not None), in the writer's order
    counts: tuple[tuple[str, int], ...]  # integer fields present, with their minimum
    present: frozenset[str]  # fields present (not None)
    has_v: bool
    has_run: bool
    has_loop: bool
    has_ts: bool
    has_cost: bool
    has_payload: bool
    kinds: frozenset[str]  # the kinds whose required fields this shape has
    has_kind: bool
    values: bool  # whether a value needs a look (a count, v or cost is present)


#: Plans by shape; bounded (a caller inventing shapes endlessly just misses the cache).
PLANS: dict[tuple[tuple[Any, ...], tuple[type, ...]], ShapePlan] = {}
MAX_PLANS: Final = 1024
#: The last plan seen for each set of keys, with its value types (`Ledger.append_built`:
#: an engine builds each key set with the same types, so this finds the plan without
#: hashing the types).
BUILT_PLANS: dict[tuple[Any, ...], tuple[tuple[type, ...], ShapePlan]] = {}


def shape_plan(keys: tuple[Any, ...], types: tuple[type, ...]) -> ShapePlan | None:
    """The plan for events with these keys and value types, or None when a key is unknown
    or a value's type is not the one its field takes (the model then explains)."""
    present: set[str] = set()
    counts: list[tuple[str, int]] = []
    for key, kind in zip(keys, types, strict=True):
        rule = _RULES.get(key) if type(key) is str else None
        if rule is None:
            return None
        if kind is type(None) or rule == _SKIP:
            continue
        if rule != _TS and kind is not _TYPE_OF[rule]:
            return None
        present.add(key)
        if rule in (_COUNT, _ATTEMPT):
            counts.append((key, 1 if rule == _ATTEMPT else 0))
    order = tuple(key for key in _BODY_TAIL if key in present)
    kinds = frozenset(kind for kind, needs in NEEDS.items() if needs <= present)
    return ShapePlan(order, tuple(counts), frozenset(present), "v" in present,
                      "run" in present, "loop" in present, "ts" in present,
                      "cost" in present, "payload" in present, kinds, "kind" in present,
                      bool(counts) or "v" in present or "cost" in present)


#: What a builder checks of each field's value (`builder`): the model's type, exactly
#: (``True`` is not a count, ``1`` is not a cost), and its range.
_CHECK: Final[dict[int, str]] = {
    _TEXT: "type({v}) is str", _NAME: "type({v}) is str and {v}",
    _KIND: "{v} in kinds", _PAYLOAD: "type({v}) is dict",
    _COUNT: "type({v}) is int and 0 <= {v} <= MAX_INT",
    _ATTEMPT: "type({v}) is int and 1 <= {v} <= MAX_INT",
    _COST: "type({v}) is float and isfinite({v}) and {v} >= 0",
    _V: "type({v}) is int and {v} == 1", _TS: "type({v}) is str",
}
Builder = Callable[[dict[str, Any], Any, Any], "dict[str, Any] | None"]
#: `BUILDERS` has not seen the key set yet.
UNKNOWN: Final[Any] = object()
#: Builders by key set (None: that key set has none, the plan path takes it); bounded.
BUILDERS: dict[tuple[Any, ...], Builder | None] = {}


def builder(keys: tuple[Any, ...], event: dict[str, Any]) -> Builder | None:
    """Straight-line code for events with exactly these keys (`Ledger.append_built`):
    ``build(event, run, loop)`` checks every value (see `_CHECK`: the same rules as
    `shape_plan` and the plan's per-value checks, written out) and returns the stored
    body (the writer's field order, ``seq`` 0, ``ts`` as given; `run` and `loop` fill
    those the event lacks), or None when a check fails (the general path then decides,
    and explains). None for a key set it cannot serve: an unknown key, a key that is None
    in `event` (such a field is left out of the line, so its events take the plan path),
    or a ``ts`` that is not text.

    Engines build a few key sets over and over, so one lookup by the keys and one call
    replace the shape's tuple of types, the plan's loops and the copy into the body (as
    `dataclasses` writes ``__init__``, the code is made once with ``exec``; the keys are
    the model's own field names, checked against `_RULES` before they are written in)."""
    plan = shape_plan(keys, tuple(map(type, event.values())))
    if plan is None or len(plan.present) != len([k for k in keys if k != "seq"]) \
            or "kind" not in keys or (plan.has_ts and type(event["ts"]) is not str):
        return None
    names = {key: f"x{i}" for i, key in enumerate(keys)}
    lines = [f"    {names[key]} = e[{key!r}]" for key in keys]
    tests = [_CHECK[_RULES[key]].format(v=names[key]) for key in keys
             if _RULES[key] != _SKIP]
    run, loop = names.get("run", "run"), names.get("loop", "loop")
    if "run" not in names:
        tests.append("run")
    if "loop" not in names:
        tests.append("loop")
    body = [f'"v": 1, "ts": {names.get("ts")}, "run": {run}, '
            f'"seq": 0, "loop": {loop}, "kind": {names["kind"]}']
    body += [f"{key!r}: {names[key]}" for key in plan.order]
    if not plan.has_payload:
        body.append('"payload": {}')
    source = ("def build(e, run, loop):\n" + "\n".join(lines) + "\n"
              f"    if not ({' and '.join(f'({t})' for t in tests)}):\n        return None\n"
              f"    return {{{', '.join(body)}}}\n")
    space: dict[str, Any] = {"MAX_INT": MAX_INT, "isfinite": math.isfinite,
                             "kinds": plan.kinds}
    exec(compile(source, f"<ledger builder {len(BUILDERS)}>", "exec"), space)
    return cast(Builder, space["build"])


def values_ok(event: dict[str, Any], plan: ShapePlan) -> bool:
    """Whether the values a report could make wrong are in range: counts, ``v``, cost."""
    for key, low in plan.counts:
        if not low <= event[key] <= MAX_INT:
            return False
    if plan.has_v and event["v"] != 1:
        return False
    if plan.has_cost:
        cost = event["cost"]
        if not math.isfinite(cost) or cost < 0:
            return False
    return True
