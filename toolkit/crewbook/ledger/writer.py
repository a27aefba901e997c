"""`Ledger`: the append-only, crash-safe, multi-process writer of one ledger file.

Each `append` takes an exclusive lock on the ledger file itself (``flock`` on POSIX;
a ``<ledger>.lock`` file via filelock elsewhere), catches up with
what other writers appended since (to continue each run's `seq`), writes the event
as one whole line with a single ``write`` on an ``O_APPEND`` descriptor, and lets the
lock go. So any number of processes can append to one file: lines never interleave,
none is lost, and `seq` stays gapless per run. The line reaches the OS at once
(flush per event); ``fsync`` happens on `close` or, with ``fsync="always"``, after
every event (slower, but survives a power cut, not just a crash).

A writer that dies mid-write can leave a line cut short at the end of the file. The
next writer seals it with a newline (so its own line stays whole) and warns; readers
leave the cut line out with a warning, wherever it is.

Three ways in. `append` / `append_many` take events from anyone (a user, an importer) and
validate each with the `LedgerEvent` model, returning the stored events. `append_batch`
is the engines' path (a loop's act, a simulation, a replay): plain dicts, checked by
exact, cheap rules (the same rules as the model: known keys, kinds, strict types, UTC
times, required fields, JSON and UTF-8 text) and written straight as JSON lines, with
no model built; any event those rules cannot settle takes the model's path, so what
lands in the file, and every refusal, is what `append_many` would give. `append_built` is
the loops' own path (`crewbook.core.append_events`): the events an engine built from a
report it already checked, trusted for what the engine formatted (times, payloads) and
still checked where a report's value could break the format; the same lines again, one
lock, one ``lseek`` and one ``write`` per act.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
import secrets
import threading
import warnings
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Literal, NamedTuple, cast

from filelock import FileLock

try:  # POSIX: lock the ledger file itself, a few syscalls per append
    import fcntl
except ImportError:  # pragma: no cover - Windows: a lock file beside the ledger
    fcntl = None  # type: ignore[assignment]
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError, to_json

from ..core.paths import file_or_absent
from ..errors import LedgerError, Problem, UsageError
from .events import FIELDS, KINDS, MAX_INT, REQUIRED_BY_KIND, LedgerEvent, validation_problems

if TYPE_CHECKING:
    import pandas as pd

if fcntl is not None:
    _LOCK_EX: Final = fcntl.LOCK_EX
    _LOCK_UN: Final = fcntl.LOCK_UN
#: Looked up once: `Ledger.append_built` calls it on every act.
lseek, SEEK_END = os.lseek, os.SEEK_END

FsyncPolicy = Literal["close", "always"]

#: Catching up on more than this many bytes uses Arrow instead of a Python loop.
_ARROW_SCAN_BYTES: Final = 1 << 20
#: Bytes read at the end of the file when a ledger is opened (its last events).
_TAIL_BYTES: Final = 1 << 20
#: Bytes read at once when a ledger is scanned: memory stays bounded on any file.
_STREAM_BYTES: Final = 16 << 20

#: The fields of a line after its `seq`, in the order the writer writes them.
_BODY: Final = FIELDS[FIELDS.index("seq") + 1:]
_BODY_TAIL: Final = _BODY[2:]  # after loop and kind
_KIND_SET: Final = frozenset(KINDS)
#: The rule each field follows in `Ledger._quick` (the model's types, checked exactly).
_TEXT, _COUNT, _NAME, _KIND, _ATTEMPT, _COST, _PAYLOAD, _TS, _V, _SKIP = range(10)
_RULES: Final[dict[str, int]] = {
    "v": _V, "ts": _TS, "run": _NAME, "seq": _SKIP, "loop": _NAME, "kind": _KIND,
    "role": _TEXT, "stage": _TEXT, "verdict": _TEXT, "attempt": _ATTEMPT, "version": _COUNT,
    "summary": _TEXT, "tokens_in": _COUNT, "tokens_out": _COUNT, "cost": _COST,
    "duration_ms": _COUNT, "payload": _PAYLOAD,
}
assert set(_RULES) == set(FIELDS), "a field of LedgerEvent has no rule here"
#: The ISO-8601 forms both `datetime.fromisoformat` and the model read the same way.
_TS_FORM: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|[+-]\d{2}:\d{2})?")
#: Compact JSON, text as UTF-8, no NaN (what the model writes); one encoder, made once.
_JSON: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
#: The fields each kind needs, as sets (`_quick` checks them with one subset test).
_NEEDS: Final[dict[str, frozenset[str]]] = {k: frozenset(v) for k, v in REQUIRED_BY_KIND.items()}
#: The type each rule wants (exactly: ``True`` is not a count, ``1`` is not a cost).
_TYPE_OF: Final[dict[int, type]] = {_TEXT: str, _COUNT: int, _NAME: str, _KIND: str,
                                    _ATTEMPT: int, _COST: float, _PAYLOAD: dict, _V: int}


class _ShapePlan(NamedTuple):
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
_PLANS: dict[tuple[tuple[Any, ...], tuple[type, ...]], _ShapePlan] = {}
_MAX_PLANS: Final = 1024
#: The last plan seen for each set of keys, with its value types (`Ledger.append_built`:
#: an engine builds each key set with the same types, so this finds the plan without
#: hashing the types).
_BUILT_PLANS: dict[tuple[Any, ...], tuple[tuple[type, ...], _ShapePlan]] = {}


def _shape_plan(keys: tuple[Any, ...], types: tuple[type, ...]) -> _ShapePlan | None:
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
    kinds = frozenset(kind for kind, needs in _NEEDS.items() if needs <= present)
    return _ShapePlan(order, tuple(counts), frozenset(present), "v" in present,
                      "run" in present, "loop" in present, "ts" in present,
                      "cost" in present, "payload" in present, kinds, "kind" in present,
                      bool(counts) or "v" in present or "cost" in present)


#: What a builder checks of each field's value (`_builder`): the model's type, exactly
#: (``True`` is not a count, ``1`` is not a cost), and its range.
_CHECK: Final[dict[int, str]] = {
    _TEXT: "type({v}) is str", _NAME: "type({v}) is str and {v}",
    _KIND: "{v} in kinds", _PAYLOAD: "type({v}) is dict",
    _COUNT: "type({v}) is int and 0 <= {v} <= MAX_INT",
    _ATTEMPT: "type({v}) is int and 1 <= {v} <= MAX_INT",
    _COST: "type({v}) is float and isfinite({v}) and {v} >= 0",
    _V: "type({v}) is int and {v} == 1", _TS: "type({v}) is str",
}
_Builder = Callable[[dict[str, Any], Any, Any], "dict[str, Any] | None"]
#: `_BUILDERS` has not seen the key set yet.
_UNKNOWN: Final[Any] = object()
#: Builders by key set (None: that key set has none, the plan path takes it); bounded.
_BUILDERS: dict[tuple[Any, ...], _Builder | None] = {}


def _builder(keys: tuple[Any, ...], event: dict[str, Any]) -> _Builder | None:
    """Straight-line code for events with exactly these keys (`Ledger.append_built`):
    ``build(event, run, loop)`` checks every value (see `_CHECK`: the same rules as
    `_shape_plan` and the plan's per-value checks, written out) and returns the stored
    body (the writer's field order, ``seq`` 0, ``ts`` as given; `run` and `loop` fill
    those the event lacks), or None when a check fails (the general path then decides,
    and explains). None for a key set it cannot serve: an unknown key, a key that is None
    in `event` (such a field is left out of the line, so its events take the plan path),
    or a ``ts`` that is not text.

    Engines build a few key sets over and over, so one lookup by the keys and one call
    replace the shape's tuple of types, the plan's loops and the copy into the body (as
    `dataclasses` writes ``__init__``, the code is made once with ``exec``; the keys are
    the model's own field names, checked against `_RULES` before they are written in)."""
    plan = _shape_plan(keys, tuple(map(type, event.values())))
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
    exec(compile(source, f"<ledger builder {len(_BUILDERS)}>", "exec"), space)
    return cast(_Builder, space["build"])


class _Line(NamedTuple):
    """An event checked and written out but for its `seq` (given under the lock)."""

    run: str
    head: bytes  # '{"v":1,"ts":...,"run":...'
    body: bytes  # ',"loop":...,"payload":{...}}'

    def line(self, seq: int) -> bytes:
        return b"%b,\"seq\":%d%b\n" % (self.head, seq, self.body)


def _numbered(bodies: list[dict[str, Any]], first: int) -> bytes | None:
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


class _FlockLock:
    """An exclusive `flock` on the ledger's own descriptor, shared by no other writer.

    `flock` locks belong to the open file description, so two `Ledger` objects (in one
    process or in several) exclude each other, while the descriptor stays open.
    """

    def __init__(self, descriptor: Callable[[], int]) -> None:
        self._descriptor = descriptor  # raises once the ledger is closed
        self._fd: int | None = None

    def __enter__(self) -> object:
        self._fd = self._descriptor()
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            self._fd = None


def new_run_id() -> str:
    """A fresh run id: UTC time plus a random suffix, e.g. ``20250301T090000Z-3fa2c1``."""
    return f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


class Ledger:
    """Append events to a JSON Lines ledger; safe across processes and crashes.

    ``Ledger(path, run=None, loop=None)``: `run` is the run events go to when they do
    not name one; by default the run of the file's last event, or a new id for an
    empty file. `loop` fills events that do not name their loop. Use it as a context
    manager, or call `close`.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        run: str | None = None,
        *,
        loop: str | None = None,
        fsync: FsyncPolicy = "close",
    ) -> None:
        if fsync not in ("close", "always"):
            raise UsageError(f"fsync must be 'close' or 'always', not {fsync!r}")
        self.path = Path(path)
        self.loop = loop
        self.fsync: FsyncPolicy = fsync
        self.path.parent.mkdir(parents=True, exist_ok=True)
        file_or_absent(self.path, "ledger")  # not a folder, a FIFO, a device
        self._thread_lock = threading.Lock()
        self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        self._finalizer = weakref.finalize(self, os.close, self._fd)
        self._lock: AbstractContextManager[object] = (
            _FlockLock(self._require_open) if fcntl is not None else FileLock(f"{self.path}.lock")
        )
        self._scanned = 0  # bytes of the file already accounted for
        self._next_seq: dict[str, int] = {}
        self._events = 0  # complete, parseable lines in the file
        self._last_run: str | None = None
        self._head = 0  # bytes before this were not scanned yet (opening reads the tail)
        self._ts_cache: tuple[str | None, str] = (None, "")
        self._head_cache: tuple[Any, str, bytes] = (None, "", b"")
        with self._lock:
            self._open_tail()
            self._catch_up()
        self.run: str = run or self._last_run or new_run_id()

    # -- writing -------------------------------------------------------------------------

    def append(self, event: Mapping[str, Any] | LedgerEvent) -> LedgerEvent:
        """Store one event and return it as stored (with `run`, `seq` and `ts` set).

        `event` is a dict or a `LedgerEvent`. The writer always assigns `seq` (the next
        number of the event's run); it stamps `ts` with the current UTC time when the
        event has none, and fills `run` and `loop` from the ledger when missing.
        Raises `LedgerError` (nothing written) when the event breaks the format.
        """
        return self.append_many([event])[0]

    def append_many(self, events: Iterable[Mapping[str, Any] | LedgerEvent]) -> list[LedgerEvent]:
        """Store several events together: one lock, one write; all of them or none.

        Each event is filled and numbered as by `append`, in order. If any is invalid,
        `LedgerError` lists the problems of every one (keys prefixed ``[i].``) and
        nothing is written. A loop hands it the events of one act.
        """
        drafts = cast(list[LedgerEvent], self._checked(list(events)))
        with self._thread_lock, self._lock:
            seqs = self._numbers([d.run for d in drafts])
            stored = [d.model_copy(update={"seq": seq}) for d, seq in zip(drafts, seqs,
                                                                          strict=True)]
            try:
                data = "".join(e.to_line() + "\n" for e in stored).encode("utf-8")
            except (PydanticSerializationError, UnicodeEncodeError) as exc:
                raise self._not_json(exc) from None
            self._write(data, [(e.run, e.seq) for e in stored])
        return stored

    def _checked(self, items: list[Any], settled: list[_Line | None] | None = None
                 ) -> list[_Line | LedgerEvent]:
        """Each event of `items` as the model's draft, or as `settled` already has it;
        every problem of every event in one `LedgerError` (keys prefixed ``[i].``)."""
        checked: list[_Line | LedgerEvent] = []
        problems: list[Problem] = []
        for index, event in enumerate(items):
            quick = settled[index] if settled is not None else None
            if quick is not None:
                checked.append(quick)
                continue
            try:  # what the quick rules cannot settle: the model decides (and explains)
                checked.append(self._draft(event))
            except ValidationError as exc:
                found = validation_problems(exc, path=str(self.path))
                if len(items) > 1:
                    found = [replace(p, key=f"[{index}].{p.key}" if p.key else f"[{index}]")
                             for p in found]
                problems.extend(found)
        if problems:
            what = "the event is" if len(items) == 1 else "events are"
            raise LedgerError(f"cannot append to {self.path}: {what} not valid", problems)
        return checked

    def append_batch(self, events: Iterable[Mapping[str, Any]]) -> int:
        """Store engine-built events (dicts) as whole lines under one lock and one write;
        all of them or none. Returns how many were stored.

        The path of loops (the events of one act), simulations and replays (thousands of
        events at once: hand them over in batches of a few thousand to bound memory).
        Each event is filled and numbered as by `append`, in order; it is checked by the
        model's rules without building a model (see the module docstring; the keys and
        value types of each shape of event checked once) and written by the model's own
        serialiser (`pydantic_core.to_json`), so the lines are the ones `append_many`
        would store and any `LedgerError` (keys prefixed ``[i].``) is the one it raises.
        One batch is one ``write`` on the ``O_APPEND`` descriptor, under the file lock:
        it lands whole before this returns (a ``kill -9`` afterwards loses nothing), and
        other writers' lines never interleave with it. ``fsync`` follows the ledger's
        policy (``fsync="always"``: once per batch).
        """
        items = events if type(events) is list else list(events)
        check = self._quick
        fast = [check(event) for event in items]
        if None not in fast:  # the usual batch: every event settled by the quick rules
            settled = cast("list[_Line]", fast)
            run = settled[0].run if settled else ""
            if settled and all(line.run == run for line in settled):  # the usual act
                self._write_run(run, [(line.head, line.body) for line in settled])
                return len(settled)
            with self._thread_lock, self._lock:
                seqs = self._numbers([line.run for line in settled])
                numbered = list(zip([line.run for line in settled], seqs, strict=True))
                data = b"".join([line.line(seq)
                                 for line, seq in zip(settled, seqs, strict=True)])
                self._write(data, numbered)
            return len(settled)
        lines = self._checked(items, fast)
        with self._thread_lock, self._lock:
            seqs = self._numbers([item.run for item in lines])
            parts: list[bytes] = []
            try:
                for item, seq in zip(lines, seqs, strict=True):
                    if isinstance(item, _Line):
                        parts.append(item.line(seq))
                    else:
                        parts.append(item.model_copy(update={"seq": seq}).to_line()
                                     .encode("utf-8") + b"\n")
            except (PydanticSerializationError, UnicodeEncodeError) as exc:
                raise self._not_json(exc) from None
            self._write(b"".join(parts), list(zip((i.run for i in lines), seqs, strict=True)))
        return len(lines)

    def append_built(self, events: Sequence[Mapping[str, Any]]) -> int:
        """Store the events of one act that a crewbook engine built itself; returns how
        many were stored. The trusted path of `Loop.report` (`crewbook.core.append_events`).

        Validation belongs at the boundary: an engine checks the report it is handed, then
        builds its events from checked values, in the shapes it always builds. So only what
        is cheap and could still carry a bad value from a report is checked here (each
        value's type, exactly; the kind and the fields it needs; counts, cost, run and
        loop), by straight-line code made once per key set (`_builder`; a key set with a
        None field takes the shape plans instead); a ``ts`` in the forms
        `datetime.isoformat` gives for a UTC time is taken as written (others are parsed as
        by `append_batch`), and payloads are not walked. The line is the one `append_batch`
        writes: same fields, same order, the model's serialiser. Anything outside these
        forms (an event of a new shape, several runs in one act, a value that is not JSON)
        goes through `append_batch`, whole, so its refusals stay the model's. Same
        guarantees as `append_batch`: one lock and one ``write`` of whole lines, landed
        before this returns. Outside callers use `append`, `append_many` or `append_batch`.

        The lines are numbered and written out before the lock is taken, from this
        writer's count of the run; under the lock one ``lseek`` says whether anybody else
        wrote since, and only then are they caught up with and numbered again.
        """
        items = events if type(events) is list else list(events)
        builders = _BUILDERS
        run: Any = None
        text: Any = None
        last_ts: Any = None
        bodies: list[dict[str, Any]] = []
        for event in items:
            if type(event) is not dict:
                return self.append_batch(items)
            keys = tuple(event)
            build = builders.get(keys, _UNKNOWN)
            if build is _UNKNOWN:  # a key set not seen yet
                build = _builder(keys, event)
                if len(builders) < _MAX_PLANS:
                    builders[keys] = build
            body = None if build is None else build(event, self.run, self.loop)
            if body is None:  # a key set or a value the builders leave to the plans
                return self._append_planned(items)
            if run is None:
                run = body["run"]
            elif body["run"] != run:
                return self.append_batch(items)  # several runs in one act: the general path
            ts = body["ts"]
            if ts is None or ts != last_ts:
                last_ts = ts
                if ts is not None and ts[-6:] == "+00:00" and "1678" <= ts <= "2262" and (
                        len(ts) == 25 or (len(ts) == 32 and ts[20:26] != "000000")):
                    text = ts[:-6] + "Z"  # as `datetime.isoformat` writes a UTC time
                else:
                    text = self._ts_text(ts)
                    if text is None:
                        return self.append_batch(items)
            body["ts"] = text
            bodies.append(body)
        if run is None:
            return self.append_batch(items)  # nothing to store: still refused when closed
        return self._land_built(items, run, bodies)

    def _append_planned(self, items: list[Any]) -> int:
        """`append_built` for events the builders leave out (a field set to None, a key set
        not seen yet): each event's shape (keys and value types) finds its plan."""
        by_keys = _BUILT_PLANS
        run: Any = None
        text: Any = None
        last_ts: Any = None
        bodies: list[dict[str, Any]] = []
        for event in items:
            if type(event) is not dict:
                return self.append_batch(items)
            types = tuple(map(type, event.values()))
            keys = tuple(event)
            known = by_keys.get(keys)
            if known is not None and known[0] == types:  # the usual: one shape per key set
                plan = known[1]
            else:
                found = _PLANS.get((keys, types))
                if found is None:  # a shape not seen yet: checked (and remembered) there
                    return self.append_batch(items)
                plan = found
                if len(by_keys) < _MAX_PLANS:
                    by_keys[keys] = (types, plan)
            kind = event["kind"] if plan.has_kind else None
            if kind not in plan.kinds:  # unknown, or a field it needs is missing
                return self.append_batch(items)
            if plan.values:  # counts, v and cost: the values a report could make wrong
                for key, low in plan.counts:
                    if not low <= event[key] <= MAX_INT:
                        return self.append_batch(items)
                if plan.has_v and event["v"] != 1:
                    return self.append_batch(items)
                if plan.has_cost:
                    cost = event["cost"]
                    if not math.isfinite(cost) or cost < 0:
                        return self.append_batch(items)
            this_run = event["run"] if plan.has_run else self.run
            if run is None:
                if not this_run:
                    return self.append_batch(items)
                run = this_run
            elif this_run != run:
                return self.append_batch(items)  # several runs in one act: the general path
            loop = event["loop"] if plan.has_loop else self.loop
            if not loop:
                return self.append_batch(items)
            ts = event["ts"] if plan.has_ts else None
            if ts is None or ts != last_ts:
                last_ts = ts
                if type(ts) is str and ts[-6:] == "+00:00" and "1678" <= ts <= "2262" and (
                        len(ts) == 25 or (len(ts) == 32 and ts[20:26] != "000000")):
                    text = ts[:-6] + "Z"  # as `datetime.isoformat` writes a UTC time
                else:
                    text = self._ts_text(ts)
                    if text is None:
                        return self.append_batch(items)
            body = {"v": 1, "ts": text, "run": run, "seq": 0, "loop": loop, "kind": kind}
            for key in plan.order:  # the writer's field order
                body[key] = event[key]
            if not plan.has_payload:
                body["payload"] = {}
            bodies.append(body)
        if run is None:
            return self.append_batch(items)  # nothing to store: still refused when closed
        return self._land_built(items, run, bodies)

    def _land_built(self, items: list[Any], run: str, bodies: list[dict[str, Any]]) -> int:
        """Number `bodies` (one run's) from this writer's count, write them out, and land
        them with one lock, one ``lseek`` and one ``write`` (`items`: the events, for the
        model's refusal when one is not JSON)."""
        count = len(bodies)
        first = self._next_seq.get(run, 0)
        data: bytes | None
        try:  # numbered and written out before the lock (the model's serialiser)
            if count == 1:
                body = bodies[0]
                body["seq"] = first
                data = to_json(body, inf_nan_mode="null") + b"\n"
            else:
                data = _numbered(bodies, first)
        except (PydanticSerializationError, ValueError, RecursionError):
            data = None
        if data is None:  # not JSON: the model's refusal
            return self.append_batch(items)
        with self._thread_lock:
            fd = self._fd
            if fd is None or fcntl is None:  # closed (refused there), or Windows: the lock file
                fd = self._require_open()
                with self._lock:
                    self._land(fd, run, bodies, first, data)
                return count
            fcntl.flock(fd, _LOCK_EX)
            try:
                if lseek(fd, 0, SEEK_END) == self._scanned and self._next_seq.get(run, 0) == first \
                        and (not self._head or run in self._next_seq):
                    # nobody else wrote since the lines were numbered: the usual act
                    self._write(data, [(run, first)] if count == 1 else
                                [(run, seq) for seq in range(first, first + count)])
                else:
                    self._land(fd, run, bodies, first, data)
            finally:
                fcntl.flock(fd, _LOCK_UN)
        return count

    def _land(self, fd: int, run: str, bodies: list[dict[str, Any]], first: int,
              data: bytes) -> None:
        """Write `data` (`bodies` numbered from `first`) under the locks: one ``lseek`` says
        whether anybody else wrote since they were numbered (then catch up and number them
        again), one ``write``."""
        try:
            end = os.lseek(fd, 0, os.SEEK_END)
        except OSError:  # cannot seek: catch up
            end = -1
        if end != self._scanned or first != self._next_seq.get(run, 0) or (
                self._head and run not in self._next_seq):  # somebody else wrote
            first = self._numbers([run])[0]
            data = cast(bytes, _numbered(bodies, first))
        self._write(data, [(run, first)] if len(bodies) == 1 else
                    [(run, seq) for seq in range(first, first + len(bodies))])

    def _write_run(self, run: str, lines: list[tuple[bytes, bytes]]) -> None:
        """Number one run's lines (each a head and a body around its `seq`) and write them
        at once, under the locks: one ``flock``, one ``lseek`` to see whether anybody else
        wrote since (then catch up first), one ``write``."""
        with self._thread_lock:
            fd = self._require_open()
            if fcntl is None:  # pragma: no cover - Windows: the lock file
                with self._lock:
                    self._numbered_write(fd, run, lines)
                return
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                self._numbered_write(fd, run, lines)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def _numbered_write(self, fd: int, run: str, lines: list[tuple[bytes, bytes]]) -> None:
        if _size(fd) == self._scanned and (not self._head or run in self._next_seq):
            first = self._next_seq.get(run, 0)  # nobody else wrote meanwhile
        else:
            first = self._numbers([run])[0]
        if len(lines) == 1:
            head, body = lines[0]
            data = b'%b,"seq":%d%b\n' % (head, first, body)
        else:
            data = b"".join([b'%b,"seq":%d%b\n' % (head, first + i, body)
                             for i, (head, body) in enumerate(lines)])
        self._write(data, [(run, seq) for seq in range(first, first + len(lines))])

    def _numbers(self, runs: list[str]) -> list[int]:
        """The next `seq` of each event's run, in order (call under the locks)."""
        self._catch_up()
        if self._head and any(run not in self._next_seq for run in runs):
            self._seek(runs)  # a run the tail did not show: its seq is further back
        numbers = self._next_seq
        if len(runs) == 1:
            return [numbers.get(runs[0], 0)]
        if len(set(runs)) == 1:  # the usual batch: one run's events, numbered in a row
            first = numbers.get(runs[0], 0)
            return list(range(first, first + len(runs)))
        taken: dict[str, int] = {}
        seqs: list[int] = []
        for run in runs:
            seq = taken.get(run)
            if seq is None:
                seq = numbers.get(run, 0)
            taken[run] = seq + 1
            seqs.append(seq)
        return seqs

    def _write(self, data: bytes, numbered: list[tuple[str, int]]) -> None:
        """One write of whole lines (call under the locks), then account for them: every
        path's lines reach the file here."""
        fd = self._require_open()
        if data:
            written = os.write(fd, data)
            if written != len(data):  # rare (a full disk, a signal): write the rest
                _write_all(fd, data[written:])
            if self.fsync == "always":
                os.fsync(fd)
        self._scanned += len(data)
        if numbered:
            next_seq = self._next_seq
            for run, seq in numbered:  # `_count`, inline: every act comes here
                if seq >= next_seq.get(run, 0):
                    next_seq[run] = seq + 1
            self._events += len(numbered)
            self._last_run = numbered[-1][0]

    def _not_json(self, exc: Exception) -> LedgerError:
        return LedgerError(f"cannot append to {self.path}: an event is not JSON", [
            Problem("ledger_bad_event", f"cannot write it as JSON: {exc}; keep "
                    "payload to JSON values (text, numbers, lists, dicts)",
                    str(self.path), key="payload")])

    def _quick(self, event: Any) -> _Line | None:
        """`event` checked by the model's rules and written out, or None when these
        rules cannot settle it (then the model does: same line, or its refusal).

        The keys of an event and the types of its values (its shape) are checked once per
        shape (`_shape_plan`, remembered): engines build the same few shapes over and
        over. What remains per event is what depends on the values themselves."""
        if type(event) is not dict:
            return None
        shape = (tuple(event), tuple(map(type, event.values())))
        plan = _PLANS.get(shape)
        if plan is None:
            plan = _shape_plan(*shape)
            if plan is None:
                return None  # an unknown key or a wrong type: the model names it
            if len(_PLANS) < _MAX_PLANS:
                _PLANS[shape] = plan
        kind = event.get("kind")
        if kind not in _KIND_SET or not _NEEDS[kind] <= plan.present:
            return None
        for key, low in plan.counts:
            if not low <= event[key] <= MAX_INT:
                return None
        if plan.has_v and event["v"] != 1:
            return None
        run = event["run"] if plan.has_run else self.run
        loop = event["loop"] if plan.has_loop else self.loop
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
        cached = self._head_cache  # the events of one act share their ts and run
        if ts is not None and cached[0] == ts and cached[1] == run:
            head = cached[2]
        else:
            stamp = self._ts_text(ts)
            if stamp is None:
                return None
            try:
                head = f'{{"v":1,"ts":"{stamp}","run":{_JSON.encode(run)}'.encode()
            except ValueError:  # lone surrogates
                return None
            if ts is not None:
                self._head_cache = (ts, run, head)
        body: dict[str, Any] = {"loop": loop, "kind": kind}
        for key in plan.order:  # the writer's field order
            body[key] = event[key]
        if not plan.has_payload:
            body["payload"] = {}
        try:  # the model's own serialiser (NaN in a payload: null), a few times faster
            tail = to_json(body, inf_nan_mode="null")
        except (PydanticSerializationError, ValueError, RecursionError):  # not JSON...
            return None
        return _Line(run, head, b"," + tail[1:])

    def _ts_text(self, value: Any) -> str | None:
        """The stored form of a `ts` (UTC, ``Z``), now when None; None when the model
        must judge it (other forms, out of range)."""
        if value is None:
            when = datetime.now(UTC)
        elif type(value) is str:
            cached = self._ts_cache
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
                self._ts_cache = (value, text)
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
            self._ts_cache = (value, text)  # the events of one act share their ts
        return text

    def _draft(self, event: Mapping[str, Any] | LedgerEvent) -> LedgerEvent:
        """The event validated, with run, loop and ts filled in (seq comes later)."""
        data = event.model_dump() if isinstance(event, LedgerEvent) else dict(event)
        if data.get("run") is None:
            data["run"] = self.run
        if data.get("loop") is None and self.loop is not None:
            data["loop"] = self.loop
        if data.get("ts") is None:
            data["ts"] = datetime.now(UTC)
        data["seq"] = 0  # placeholder: validated now, numbered under the lock
        return LedgerEvent.model_validate(data)

    def close(self) -> None:
        """fsync and close the file; appending afterwards raises ValueError."""
        with self._thread_lock:
            if self._fd is None:
                return
            try:
                os.fsync(self._fd)
            finally:
                self._finalizer()
                self._fd = None

    @property
    def closed(self) -> bool:
        """Whether `close` was called."""
        return self._fd is None

    def __enter__(self) -> Ledger:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- reading back ----------------------------------------------------------------------

    @property
    def events(self) -> int:
        """Complete events in the file (all runs) as last seen by this writer (counting
        them reads the part of the file opening skipped, streamed)."""
        if self._head:
            with self._thread_lock, self._lock:
                self._scan_head()
        return self._events

    @property
    def next_seq(self) -> int:
        """The `seq` the next event of this ledger's run will get."""
        if self._head and self.run not in self._next_seq:
            with self._thread_lock, self._lock:
                self._seek([self.run])
        return self._next_seq.get(self.run, 0)

    def read(self, **kwargs: Any) -> pd.DataFrame:
        """The whole file as a DataFrame (`read_ledger` on this path)."""
        from .reader import read_ledger

        return read_ledger(self.path, **kwargs)

    # -- display --------------------------------------------------------------------------

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        events = f"{self._events}+" if self._head else str(self._events)  # no scan here
        return (f"Ledger({str(self.path)!r}, run={self.run!r}, events={events}, "
                f"next_seq={self.next_seq}, {state})")

    def _repr_html_(self) -> str:
        rows = [
            ("file", str(self.path)), ("run", self.run), ("loop", self.loop or "(per event)"),
            ("events in file", f"{self._events:,}" + ("+" if self._head else "")),
            ("events in this run", f"{self.next_seq:,}"),
            ("fsync", self.fsync), ("state", "closed" if self.closed else "open"),
        ]
        body = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                       f"<td><code>{html.escape(v)}</code></td></tr>" for k, v in rows)
        return f"<table class='crewbook-ledger'><caption>Ledger</caption>{body}</table>"

    # -- internals -------------------------------------------------------------------------

    def _require_open(self) -> int:
        if self._fd is None:
            raise UsageError(f"the ledger {self.path} is closed; open a new Ledger to append")
        return self._fd

    def _count(self, run: str, seq: int) -> None:
        if seq >= self._next_seq.get(run, 0):
            self._next_seq[run] = seq + 1
        self._events += 1
        self._last_run = run

    def _open_tail(self) -> None:
        """Account for the file from its last events only (read backwards, at most
        `_TAIL_BYTES`): the run of the last event and its next `seq`. The rest of the file
        is scanned (streamed) only when a run it may hold is asked for (`_scan_head`)."""
        fd = self._require_open()
        size = os.fstat(fd).st_size
        if size <= _TAIL_BYTES:
            return  # small: `_catch_up` reads it all at once
        end = size
        start = end - _TAIL_BYTES
        data = _read_at(fd, start, end - start)
        complete = data.rfind(b"\n") + 1
        if not complete:
            return  # no whole line in the tail: scan everything, as before
        lines = data[:complete].splitlines()
        for raw in reversed(lines[1:]):  # the window's first line may be cut
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            run = obj.get("run") if isinstance(obj, dict) else None
            seq = obj.get("seq") if isinstance(obj, dict) else None
            if isinstance(run, str) and isinstance(seq, int) and not isinstance(seq, bool):
                self._next_seq[run] = seq + 1  # a run's seq only grows along the file
                self._last_run = run
                self._head = self._scanned = start + complete
                return

    def _seek(self, runs: list[str]) -> None:
        """Find the next `seq` of each of `runs` the tail did not show, reading the skipped
        part of the file backwards until its last event appears (a run absent from the
        whole file is new: `seq` 0). Call under the lock.

        Chunks are searched for the run's JSON text (``bytes.rfind``, no parsing) and only
        the lines holding it are parsed, so a run appended to lately costs a little read and
        a new run one pass of byte search, not a parse of the whole file. A line that could
        spell the run another way (an ASCII character written ``\\u00XX``) is parsed too;
        a run id with other characters falls back to the full scan (`_scan_head`)."""
        wanted = {run: _needles(run) for run in runs if run not in self._next_seq}
        if not all(wanted.values()):
            self._scan_head()
            return
        fd = self._require_open()
        end = self._head
        while wanted and end > 0:
            start = max(0, end - _STREAM_BYTES)
            chunk = _read_at(fd, start, end - start)
            cut = chunk.find(b"\n") + 1 if start else 0  # the first line may be cut
            if start and not cut:  # one line longer than a chunk: scan it all, as before
                self._scan_head()
                return
            escaped = chunk.find(b"\\", cut) >= 0 and chunk.find(b"\\u00", cut) >= 0
            for run, needles in list(wanted.items()):
                seq = _last_seq(chunk, cut, run, needles, escaped)
                if seq is not None:
                    self._next_seq[run] = seq + 1  # a run's seq only grows along the file
                    del wanted[run]
            end = start + cut
        for run in wanted:
            self._next_seq[run] = 0  # nowhere in the file: a new run

    def _scan_head(self) -> None:
        """Scan the part of the file opening skipped (streamed, bounded memory), so every
        run's next `seq` and the count of events are known. Call under the lock."""
        fd = self._require_open()
        known, last = dict(self._next_seq), self._last_run
        tail_events = self._events
        self._next_seq, self._events = {}, 0
        offset = 0
        while offset < self._head:
            chunk = _read_at(fd, offset, min(_STREAM_BYTES, self._head - offset))
            complete = chunk.rfind(b"\n") + 1
            if not complete:  # one line longer than a chunk: take it whole
                complete = len(chunk)
            self._scan(chunk[:complete])
            offset += complete
        self._events += tail_events
        for run, seq in known.items():
            self._next_seq[run] = max(self._next_seq.get(run, 0), seq)
        self._last_run = last
        self._head = 0

    def _catch_up(self) -> None:
        """Account for lines other writers appended; seal a line a dead writer cut short.

        Called with the file lock held, so no writer is mid-write: bytes after the last
        newline can only be a cut line.
        """
        fd = self._require_open()
        size = _size(fd)
        if size < self._scanned:  # the file was truncated or replaced: start over
            self._scanned, self._events, self._next_seq, self._head = 0, 0, {}, 0
        while size - self._scanned > _STREAM_BYTES:  # streamed: memory stays bounded
            chunk = _read_at(fd, self._scanned, _STREAM_BYTES)
            complete = chunk.rfind(b"\n") + 1 or len(chunk)
            self._scan(chunk[:complete])
            self._scanned += complete
        if size == self._scanned:
            return
        chunk = _read_at(fd, self._scanned, size - self._scanned)
        complete = chunk.rfind(b"\n") + 1
        if complete:
            self._scan(chunk[:complete])
        self._scanned += complete
        tail = chunk[complete:]
        if tail:
            _write_all(fd, b"\n")
            self._scanned += len(tail) + 1
            warnings.warn(
                f"{self.path}: the last line was cut short (a writer died mid-write); "
                "sealed it with a newline so new events stay whole; readers leave it out",
                stacklevel=3,
            )

    def _scan(self, data: bytes) -> None:
        if len(data) >= _ARROW_SCAN_BYTES and self._scan_arrow(data):
            return
        for raw in data.splitlines():
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(obj, dict):
                continue
            run, seq = obj.get("run"), obj.get("seq")
            if isinstance(run, str) and isinstance(seq, int) and not isinstance(seq, bool):
                self._count(run, seq)

    def _scan_arrow(self, data: bytes) -> bool:
        """Fast catch-up on a big file; False when Arrow refuses it (then go line by line)."""
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.json as pj

        schema = pa.schema([("run", pa.string()), ("seq", pa.int64())])
        try:
            table = pj.read_json(
                pa.BufferReader(pa.py_buffer(data)),
                parse_options=pj.ParseOptions(explicit_schema=schema,
                                              unexpected_field_behavior="ignore"),
            )
        except (pa.ArrowException, ValueError):
            return False
        table = table.filter(pc.and_(pc.is_valid(table["run"]), pc.is_valid(table["seq"])))
        if table.num_rows == 0:
            return True
        for row in table.group_by("run").aggregate([("seq", "max")]).to_pylist():
            self._next_seq[row["run"]] = max(self._next_seq.get(row["run"], 0),
                                             row["seq_max"] + 1)
        self._events += table.num_rows
        self._last_run = table["run"][-1].as_py()
        return True


def _needles(run: str) -> tuple[bytes, ...]:
    """The ways a JSON writer spells the string `run` (with its quotes), or () when it
    has characters other than printable ASCII (then no short list covers every spelling)."""
    if not all(" " <= char <= "~" for char in run):
        return ()
    plain = json.dumps(run).encode("ascii")
    return (plain, plain.replace(b"/", b"\\/")) if b"/" in plain else (plain,)


def _last_seq(body: bytes, lo: int, run: str, needles: tuple[bytes, ...],
              escaped: bool) -> int | None:
    """The `seq` of the last line of ``body[lo:]`` (whole lines) whose `run` is `run`,
    parsing only the lines that hold one of `needles` (or ``\\u00``, when `escaped`)."""
    marks = (*needles, b"\\u00") if escaped else needles
    hi = len(body)
    while hi > lo:
        pos = max(body.rfind(mark, lo, hi) for mark in marks)
        if pos < 0:
            return None
        first = body.rfind(b"\n", 0, pos) + 1
        last = body.find(b"\n", pos)
        try:
            obj = json.loads(body[first:last if last >= 0 else len(body)])
        except ValueError:
            obj = None
        if isinstance(obj, dict) and obj.get("run") == run:
            seq = obj.get("seq")
            if isinstance(seq, int) and not isinstance(seq, bool):
                return seq
        hi = first
    return None


def _size(fd: int) -> int:
    """The file's size: where its end is (``lseek``, a few times cheaper than ``fstat``;
    the descriptor appends, so moving its offset changes nothing), or ``fstat``'s size
    for a file that cannot seek."""
    try:
        return os.lseek(fd, 0, os.SEEK_END)
    except OSError:
        return os.fstat(fd).st_size


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_at(fd: int, offset: int, size: int) -> bytes:
    parts: list[bytes] = []
    while size > 0:
        if hasattr(os, "pread"):
            part = os.pread(fd, size, offset)
        else:  # pragma: no cover - Windows
            os.lseek(fd, offset, os.SEEK_SET)
            part = os.read(fd, size)
        if not part:
            break
        parts.append(part)
        offset += len(part)
        size -= len(part)
    return b"".join(parts)
