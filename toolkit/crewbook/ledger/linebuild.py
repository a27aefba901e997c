"""The writer's line builders: a ledger event checked by the model's rules and written
out as its JSON line, without building the model (`crewbook.ledger.writer.Ledger`).

This is the writer's one fast path, behind one seam, `LineBuilder`:

- `LineBuilder.quick(event, run, loop)` (`Ledger.append_batch`): the event's shape (its
  keys and the types of its values) is checked once per shape (`shapes.shape_plan`,
  remembered); what remains per event depends on the values themselves. The result is a
  `Line`, numbered under the lock.
- `LineBuilder.built(events, run, loop, seqs)` (`Ledger.append_built`, the engines' own
  events): straight-line code made once per key set (`shapes.builder`), or the shape
  plans for a key set with a None field; the lines come back numbered from the writer's
  count (`Built`), checked again under the lock.

What is worked out once per shape or key set is in `crewbook.ledger.shapes`.

Both answer None for anything their exact rules cannot settle: the writer then takes the
model's path, so what lands in the file, and every refusal, is what
`Ledger.append_many` would give.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from typing import Any, Final, NamedTuple

from pydantic_core import PydanticSerializationError, to_json

from .events import MAX_INT
from .shapes import (
    BUILDERS,
    BUILT_PLANS,
    KIND_SET,
    MAX_PLANS,
    NEEDS,
    PLANS,
    UNKNOWN,
    builder,
    shape_plan,
    values_ok,
)

#: The ISO-8601 forms both `datetime.fromisoformat` and the model read the same way.
_TS_FORM: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|[+-]\d{2}:\d{2})?")
#: Compact JSON, text as UTF-8, no NaN (what the model writes); one encoder, made once.
_JSON: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class Line(NamedTuple):
    """An event checked and written out but for its `seq` (given under the lock)."""

    run: str
    head: bytes  # '{"v":1,"ts":...,"run":...'
    body: bytes  # ',"loop":...,"payload":{...}}'

    def line(self, seq: int) -> bytes:
        return b"%b,\"seq\":%d%b\n" % (self.head, seq, self.body)


def numbered(bodies: list[dict[str, Any]], first: int) -> bytes | None:
    """The lines of `bodies` numbered from `first` (the model's serialiser: NaN as null),
    or None when one is not JSON."""
    try:
        if len(bodies) == 1:
            body = bodies[0]
            body["seq"] = first
            return to_json(body, inf_nan_mode="null") + b"\n"
        parts = []
        for seq, body in enumerate(bodies, first):
            body["seq"] = seq
            parts.append(to_json(body, inf_nan_mode="null"))
    except (PydanticSerializationError, ValueError, RecursionError):
        return None
    parts.append(b"")
    return b"\n".join(parts)



#: The lines of one act (`LineBuilder.built`): its run, its bodies, the `seq` they are
#: numbered from and the whole lines written out (a plain tuple: a `NamedTuple` costs
#: more to make than the rest of the step it stands for).
Built = tuple[str, list[dict[str, Any]], int, bytes]


def _numbered_act(run: str, bodies: list[dict[str, Any]], seqs: dict[str, int]
                  ) -> Built | None:
    first = seqs.get(run, 0)
    data = numbered(bodies, first)
    return None if data is None else (run, bodies, first, data)


class LineBuilder:
    """The line builders of one writer, with its caches (the events of one act share
    their ``ts`` and run, so their stored forms are remembered from one event to the next).
    """

    def __init__(self) -> None:
        self.ts_cache: tuple[str | None, str] = (None, "")
        self.head_cache: tuple[Any, str, bytes] = (None, "", b"")

    def built(self, items: list[Any], run: str, loop: str | None, seqs: dict[str, int]
              ) -> Built | None:
        """The lines of the events of one act an engine built (`Ledger.append_built`),
        numbered from the run's next `seq` in `seqs` (the writer's count, before the
        lock), or None when the writer's general path must take them, whole: an event
        that is not a dict, several runs, a value or a ``ts`` these rules leave to the
        model, a value that is not JSON, no event at all. `run` and `loop` fill the events
        that name none."""
        builders = BUILDERS
        if len(items) == 1:  # the usual act, one event of a known key set: the loop below
            event = items[0]  # written out for it (no list of bodies, no ts to remember)
            build = builders.get(tuple(event)) if type(event) is dict else None
            body = None if build is None else build(event, run, loop)
            if body is not None:
                ts = body["ts"]
                if ts is not None and ts[-6:] == "+00:00" and "1678" <= ts <= "2262" and (
                        len(ts) == 25 or (len(ts) == 32 and ts[20:26] != "000000")):
                    body["ts"] = ts[:-6] + "Z"
                    its_run = body["run"]
                    first = body["seq"] = seqs.get(its_run, 0)
                    try:
                        line = to_json(body, inf_nan_mode="null") + b"\n"
                    except (PydanticSerializationError, ValueError, RecursionError):
                        return None
                    return (its_run, [body], first, line)
        found: Any = None
        text: Any = None
        last_ts: Any = None
        bodies: list[dict[str, Any]] = []
        for event in items:
            if type(event) is not dict:
                return None
            keys = tuple(event)
            build = builders.get(keys, UNKNOWN)
            if build is UNKNOWN:  # a key set not seen yet
                build = builder(keys, event)
                if len(builders) < MAX_PLANS:
                    builders[keys] = build
            body = None if build is None else build(event, run, loop)
            if body is None:  # a key set or a value the builders leave to the plans
                return self._planned(items, run, loop, seqs)
            if found is None:
                found = body["run"]
            elif body["run"] != found:
                return None  # several runs in one act: the general path
            ts = body["ts"]
            if ts is None or ts != last_ts:
                last_ts = ts
                if ts is not None and ts[-6:] == "+00:00" and "1678" <= ts <= "2262" and (
                        len(ts) == 25 or (len(ts) == 32 and ts[20:26] != "000000")):
                    text = ts[:-6] + "Z"  # as `datetime.isoformat` writes a UTC time
                else:
                    text = self.ts_text(ts)
                    if text is None:
                        return None
            body["ts"] = text
            bodies.append(body)
        if found is None:
            return None
        first = seqs.get(found, 0)
        if len(bodies) == 1:  # the usual act: `numbered`, inline
            only = bodies[0]
            only["seq"] = first
            try:
                data: bytes | None = to_json(only, inf_nan_mode="null") + b"\n"
            except (PydanticSerializationError, ValueError, RecursionError):
                return None
        else:
            data = numbered(bodies, first)
        return None if data is None else (found, bodies, first, data)

    def _planned(self, items: list[Any], run: str, loop: str | None, seqs: dict[str, int]
                 ) -> Built | None:
        """`built` for events the builders leave out (a field set to None, a key set not
        seen yet): each event's shape (keys and value types) finds its plan."""
        by_keys = BUILT_PLANS
        found: Any = None
        text: Any = None
        last_ts: Any = None
        bodies: list[dict[str, Any]] = []
        for event in items:
            if type(event) is not dict:
                return None
            types = tuple(map(type, event.values()))
            keys = tuple(event)
            known = by_keys.get(keys)
            if known is not None and known[0] == types:  # the usual: one shape per key set
                plan = known[1]
            else:
                plan_of = PLANS.get((keys, types))
                if plan_of is None:  # a shape not seen yet: checked (and remembered) there
                    return None
                plan = plan_of
                if len(by_keys) < MAX_PLANS:
                    by_keys[keys] = (types, plan)
            kind = event["kind"] if plan.has_kind else None
            if kind not in plan.kinds:  # unknown, or a field it needs is missing
                return None
            if plan.values and not values_ok(event, plan):
                return None
            this_run = event["run"] if plan.has_run else run
            if found is None:
                if not this_run:
                    return None
                found = this_run
            elif this_run != found:
                return None  # several runs in one act: the general path
            this_loop = event["loop"] if plan.has_loop else loop
            if not this_loop:
                return None
            ts = event["ts"] if plan.has_ts else None
            if ts is None or ts != last_ts:
                last_ts = ts
                if type(ts) is str and ts[-6:] == "+00:00" and "1678" <= ts <= "2262" and (
                        len(ts) == 25 or (len(ts) == 32 and ts[20:26] != "000000")):
                    text = ts[:-6] + "Z"  # as `datetime.isoformat` writes a UTC time
                else:
                    text = self.ts_text(ts)
                    if text is None:
                        return None
            body = {"v": 1, "ts": text, "run": found, "seq": 0, "loop": this_loop,
                    "kind": kind}
            for key in plan.order:  # the writer's field order
                body[key] = event[key]
            if not plan.has_payload:
                body["payload"] = {}
            bodies.append(body)
        return None if found is None else _numbered_act(found, bodies, seqs)

    def quick(self, event: Any, run: str, loop: str | None) -> Line | None:
        """`event` checked by the model's rules and written out, or None when these
        rules cannot settle it (then the model does: same line, or its refusal).

        The keys of an event and the types of its values (its shape) are checked once per
        shape (`shape_plan`, remembered): engines build the same few shapes over and
        over. What remains per event is what depends on the values themselves."""
        if type(event) is not dict:
            return None
        shape = (tuple(event), tuple(map(type, event.values())))
        plan = PLANS.get(shape)
        if plan is None:
            plan = shape_plan(*shape)
            if plan is None:
                return None  # an unknown key or a wrong type: the model names it
            if len(PLANS) < MAX_PLANS:
                PLANS[shape] = plan
        kind = event.get("kind")
        if kind not in KIND_SET or not NEEDS[kind] <= plan.present:
            return None
        for key, low in plan.counts:  # `values_ok`, inline: every event of a batch
            if not low <= event[key] <= MAX_INT:
                return None
        if plan.has_v and event["v"] != 1:
            return None
        if plan.has_run:
            run = event["run"]
        if plan.has_loop:
            loop = event["loop"]
        if not run or loop is None or loop == "":
            return None
        if plan.has_cost:
            cost = event["cost"]
            if not math.isfinite(cost) or cost < 0:
                return None
        if plan.has_payload:
            for name in event["payload"]:
                if type(name) is not str:
                    return None
        ts = event["ts"] if plan.has_ts else None
        cached = self.head_cache  # the events of one act share their ts and run
        if ts is not None and cached[0] == ts and cached[1] == run:
            head = cached[2]
        else:
            stamp = self.ts_text(ts)
            if stamp is None:
                return None
            try:
                head = f'{{"v":1,"ts":"{stamp}","run":{_JSON.encode(run)}'.encode()
            except ValueError:  # lone surrogates
                return None
            if ts is not None:
                self.head_cache = (ts, run, head)
        body: dict[str, Any] = {"loop": loop, "kind": kind}
        for key in plan.order:  # the writer's field order
            body[key] = event[key]
        if not plan.has_payload:
            body["payload"] = {}
        try:  # the model's own serialiser (NaN in a payload: null), a few times faster
            tail = to_json(body, inf_nan_mode="null")
        except (PydanticSerializationError, ValueError, RecursionError):  # not JSON...
            return None
        return Line(run, head, b"," + tail[1:])

    def ts_text(self, value: Any) -> str | None:
        """The stored form of a `ts` (UTC, ``Z``), now when None; None when the model
        must judge it (other forms, out of range)."""
        if value is None:
            when = datetime.now(UTC)
        elif type(value) is str:
            cached = self.ts_cache
            if cached[0] == value:
                return cached[1]
            if not _TS_FORM.fullmatch(value):
                return None
            try:
                when = datetime.fromisoformat(value)
            except ValueError:
                return None
            if value.endswith("+00:00") and (len(value) == 25 or (
                    len(value) == 32 and when.microsecond)):  # already the stored form
                if not 1678 <= when.year <= 2261:
                    return None
                text = value[:-6] + "Z"
                self.ts_cache = (value, text)
                return text
        elif type(value) is datetime:
            when = value
        else:
            return None
        when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
        if not 1678 <= when.year <= 2261:
            return None
        text = when.replace(tzinfo=None).isoformat() + "Z"
        if type(value) is str:
            self.ts_cache = (value, text)  # the events of one act share their ts
        return text
