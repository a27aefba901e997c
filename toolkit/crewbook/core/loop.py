"""The Loop protocol: the one shape every crewbook engine has (DESIGN rule 2).

An engine is a *pure state machine* wrapped by `Loop`:

- ``contract() -> Act``: who acts next, on what, with which budget and attempt, which
  moves are open, and the decision journal. Pure and idempotent: calling it twice
  returns equal Acts and writes nothing.
- ``report(report) -> Act``: the actor's result. The engine's ``transition(state,
  report)`` computes the *next* state and the ledger events from the current one
  without touching it; a report the rules refuse raises `LoopRefused` with the reason
  before anything is written, so a refusal changes nothing and logs nothing. When it
  is accepted the events are appended to the ledger, then the new state is committed.
  The returned contract is built when first read (`Loop.next_contract`): stepping a loop
  without reading contracts (a simulation, a replay, a benchmark) builds none, and an
  act kept unread is built before the state changes, so it shows its own moment.
- ``status() -> Status``: read-only: where the loop is, counters and caps, whether it
  finished and why (``finished_reason``), and the decision journal.
- ``ledger``: where accepted acts go (a `crewbook.Ledger`, or an in-memory list).
- ``snapshot()`` / ``restore(snapshot)``: rewind a notebook to any earlier act and try
  another branch. The ledger is append-only, so a restore is itself logged (kind
  ``rewind``) and the acts after it carry on from the restored ``seq`` of acts.

The rules that every engine shares are helpers here, so that the pipeline, standard,
coordinator, crew and autonomous loops say them the same way:

- caps (`Cap`, `check_caps`): a counter with a limit (``None`` is unlimited); engines
  decide what is still allowed at a cap (a coordinator at a cap may only finalise or
  fail);
- who may give a verdict (`require_role`): only the named roles, else a refusal;
- the exact-version rule (`Verdict.covers`): a verdict counts only for the version it
  was given on; a new version voids it.

Time comes from an injectable ``clock`` (reports may carry their own duration), so a
notebook or a simulation runs hours of work in milliseconds and tests are exact.

Writing an engine (the pipeline loop in `crewbook.pipeline.engine` is the worked
example): subclass `Loop`, give it a ``kind`` (the ledger's ``loop`` field) and implement
``transition``, ``contract`` and ``status``. Refuse a report by raising `LoopRefused`
*inside* ``transition`` (before anything is returned). Engines whose state is immutable
by construction (frozen dataclasses, new mappings on every change) set
``copy_state = False``, so ``report`` and ``snapshot`` skip the defensive deep copy
(it is the largest cost of a step); their snapshots share state with the loop, so
treat ``snapshot.state`` as read-only (``loop.state`` is always a copy). Frozen
dataclasses an engine builds on every act can take `quick_init` (their fields filled
at once, the same objects). An engine
that persists its state between processes (a CLI) rebuilds the loop with
``Loop(state, acts=n)``. Engine-specific facts of a contract go in ``Act.details``
(the pipeline puts its input versions and round there), of a status in
``Status.details``.

Acts and events: the events of one act are stamped with one ``ts`` and handed to
the sink through one seam, `appender`: a `Ledger`'s ``append_built`` (the engine's own
events, trusted), else the sink's ``append_many`` when it has one (one lock and one write
per act: they land together or not at all), else one ``append`` each. ``is_finished()`` is a
cheap check engines may override (``report`` asks it instead of building a `Status`).
The first event of a run can be emitted by ``transition`` itself (the pipeline logs
``init`` with its first accepted report, so building a loop writes nothing). An event
that carries its own ``ts`` keeps it: the delivery loops stamp their events with the
task's own time (a `ManualClock` moved on by the durations reports carry), so a
notebook on a fixed clock still logs hours of work with their real spacing. Engines whose
``transition`` returns a list of new dicts that nothing else holds set ``fresh_events =
True`` (the delivery loops): ``report`` then adds ``loop``, ``ts`` and ``run`` to those
dicts where missing instead of copying each (the same keys and values; only their order
differs).

Every loop is drawable (`Drawable`: one ``graph_model()`` gives ``dot()``, ``mermaid()``,
``graph()`` and a display that never raises) and routed: ``router`` resolves the route
(model and native effort) that ``Act.route`` carries, through `crewbook.routing.Router`.
The in-memory ledger (`MemoryLedger`) fills events as the file writer does, and its
``frame()`` is the `read_ledger` frame, so every analysis works on both.
"""

from __future__ import annotations

import copy
import html
import threading
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import MISSING, asdict, dataclass, field, fields, is_dataclass
from datetime import datetime
from typing import (
    TYPE_CHECKING,
    Any,
    Final,
    Generic,
    Protocol,
    TypeVar,
    cast,
)

from ..draw.display import Drawable
from ..errors import LoopRefused, Problem, UsageError
from .clock import EPOCH, ManualClock, utc_now, utc_now_text
from .sinks import EventSink, MemoryLedger

if TYPE_CHECKING:
    import pandas as pd

    from ..draw.model import GraphModel

#: Where `Loop.stepper()` finds the notebook front end: a dotted path, resolved when
#: called, so the bottom layer never imports the widgets.
STEPPER: Final = "crewbook.widgets.stepper:Stepper"

State = TypeVar("State")
Report = TypeVar("Report")


#: A reached cap, as a CSS badge (the ⛔ emoji is an empty box in Debian's default fonts).
_REACHED = ("<span style='background:#c62828;color:#fff;border-radius:3px;padding:0 4px;"
            "font-size:85%'>reached</span>")


class RouteSource(Protocol):
    """Role → the route its contract carries (`crewbook.routing.router.Router` is the one
    crewbook gives every loop)."""

    def __call__(self, role: str | None) -> Mapping[str, Any] | None:
        """The route of `role` (model, native effort, tier, effort...), or None."""


class LazyRoute(Mapping[str, Any]):
    """A contract's route, resolved by the loop's router the first time it is read.

    Routing reads profile files; a loop that is stepped without anyone reading
    ``Act.route`` (a benchmark, a simulation) never pays for it. It reads and compares
    like the mapping the router returns (an empty one when the router has no route).
    """

    __slots__ = ("_resolved", "_role", "_router")

    def __init__(self, router: RouteSource, role: str) -> None:
        self._router, self._role = router, role
        self._resolved: Mapping[str, Any] | None = None

    def _route(self) -> Mapping[str, Any]:
        if self._resolved is None:
            self._resolved = self._router(self._role) or {}
        return self._resolved

    def __getitem__(self, key: str) -> Any:
        return self._route()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._route())

    def __len__(self) -> int:
        return len(self._route())

    def __repr__(self) -> str:
        return repr(dict(self._route()))


@dataclass(frozen=True)
class JournalEntry:
    """One decision pinned into every later contract (B8): steering, approval, verdict…"""

    kind: str
    text: str
    by: str | None = None
    act: int | None = None


@dataclass(frozen=True)
class Cap:
    """A counter and its limit; ``limit=None`` means unlimited (a spec's ``0``)."""

    name: str
    used: int
    limit: int | None

    @property
    def reached(self) -> bool:
        """True when no more is allowed."""
        return self.limit is not None and self.used >= self.limit

    @property
    def left(self) -> int | None:
        """How many remain, or None when unlimited."""
        return None if self.limit is None else max(0, self.limit - self.used)

    def __str__(self) -> str:
        return f"{self.name} {self.used}/{'∞' if self.limit is None else self.limit}"


@dataclass(frozen=True)
class Verdict:
    """A verdict given by a role on one exact version of the work."""

    role: str
    verdict: str
    version: str | int | None = None
    act: int | None = None

    def covers(self, version: str | int | None) -> bool:
        """Whether this verdict speaks for `version` (the exact-version rule, C4.2)."""
        return self.version == version


@dataclass(frozen=True)
class Act:
    """The contract of the next act: who acts, on what, and within which limits."""

    loop: str
    act: int
    role: str | None
    stage: str | None = None
    receives: tuple[str, ...] = ()
    expects: str | None = None
    prompt_path: str | None = None
    budget: Mapping[str, int | None] = field(default_factory=dict)
    attempt: int = 1
    moves: tuple[str, ...] = ()
    feedback: tuple[str, ...] = ()
    journal: tuple[JournalEntry, ...] = ()
    route: Mapping[str, Any] | None = None
    finished: bool = False
    finished_reason: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data."""
        plain: dict[str, Any] = _plain(self)
        return plain

    def __repr__(self) -> str:
        if self.finished:
            return f"<Act {self.loop} finished: {self.finished_reason}>"
        who = self.stage or self.role
        return (f"<Act {self.loop} #{self.act}: {who} (attempt {self.attempt}), "
                f"receives {list(self.receives)}, expects {self.expects}>")

    def _repr_html_(self) -> str:
        if self.finished:
            return (f"<div class='crewbook-act'><b>{html.escape(self.loop)}</b> finished: "
                    f"<code>{html.escape(str(self.finished_reason))}</code></div>")
        rows = [
            ("role", self.role), ("stage", self.stage), ("attempt", self.attempt),
            ("receives", ", ".join(self.receives)), ("expects", self.expects),
            ("prompt", self.prompt_path),
            ("route", _route_text(self.route)),
            ("budget", ", ".join(f"{k}={v}" for k, v in self.budget.items())),
            ("moves", ", ".join(self.moves)),
        ]
        body = "".join(
            f"<tr><th style='text-align:left'>{k}</th><td>{html.escape(str(v))}</td></tr>"
            for k, v in rows if v not in (None, "", ())
        )
        feedback = "".join(f"<li>{html.escape(f)}</li>" for f in self.feedback)
        journal = "".join(
            f"<li><b>{html.escape(j.kind)}</b> {html.escape(j.text)}</li>" for j in self.journal
        )
        return (
            f"<div class='crewbook-act'><b>{html.escape(self.loop)}</b> act #{self.act}"
            f"<table>{body}</table>"
            + (f"<p>feedback:</p><ul>{feedback}</ul>" if feedback else "")
            + (f"<p>journal:</p><ul>{journal}</ul>" if journal else "") + "</div>"
        )


def quick_init(cls: type[Any]) -> None:
    """Give frozen dataclass `cls` an ``__init__`` that fills its ``__dict__`` in one go.

    A frozen dataclass's generated ``__init__`` sets each field through
    ``object.__setattr__``; engines build several of these per act (a trail step, a
    wait, a verdict, the transition), so that is a fair share of a step. The new
    ``__init__`` takes the same arguments with the same defaults, and the objects are
    the same (fields, equality, hash, repr, copies): only the filling is faster. For
    classes whose fields all take plain defaults (no ``default_factory``, no
    ``__post_init__``, every field in ``__init__``), else it leaves `cls` as it is.
    """
    params = fields(cls)
    if (hasattr(cls, "__post_init__") or "__slots__" in cls.__dict__
            or any(f.default_factory is not MISSING or not f.init or f.kw_only
                   for f in params)):
        return
    names = [f.name for f in params]
    space: dict[str, Any] = {f"_d_{f.name}": f.default for f in params
                             if f.default is not MISSING}
    args = ", ".join(n if f"_d_{n}" not in space else f"{n}=_d_{n}" for n in names)
    body = ", ".join(f"{n!r}: {n}" for n in names)
    exec(f"def __init__(self, {args}):\n    self.__dict__.update({{{body}}})\n", space)
    init = space["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init


_RESOLVING: Final = threading.RLock()
_new_object: Final = object.__new__
_set_attribute: Final = object.__setattr__


class _PendingAct(Act):
    """The contract `Loop.report` returns, built the first time anything reads it.

    Building a contract reads files and routes (the backlog, routing profiles) and makes
    texts; a caller that steps a loop without reading the contract (a benchmark, a
    simulation, a replay) never pays for it. On the first read (a field, ``==``,
    ``repr``, ``hash``, a copy...) the loop's `contract()` is built, its fields are
    copied in, and the object becomes a plain `Act` for good. The loop settles a pending
    act before its state changes again (`Loop._settle`), so it always shows the act it
    was returned for.
    """

    def __init__(self, loop: Loop[Any, Any]) -> None:
        object.__setattr__(self, "_loop", loop)

    def _resolve(self) -> None:
        with _RESOLVING:  # two threads reading one pending act build it once
            data = object.__getattribute__(self, "__dict__")
            loop = data.get("_loop")
            if loop is None:
                return
            built = loop.contract()  # raises? still pending: the next read tries again
            del data["_loop"]
            if loop._pending is not None and loop._pending() is self:
                loop._pending = None
            data.update(built.__dict__)
            object.__setattr__(self, "__class__", type(built))

    def __getattribute__(self, name: str) -> Any:
        _PendingAct._resolve(self)
        return object.__getattribute__(self, name)

    def __eq__(self, other: object) -> bool:
        _PendingAct._resolve(self)
        return bool(self == other)

    def __hash__(self) -> int:
        _PendingAct._resolve(self)
        return hash(self)

    def __repr__(self) -> str:
        _PendingAct._resolve(self)
        return repr(self)


@dataclass(frozen=True)
class Status:
    """A read-only view of a loop: where it is, its counters and caps, how it ended."""

    loop: str
    acts: int
    current: str | None
    previous: str | None
    finished: bool
    finished_reason: str | None
    counters: Mapping[str, int] = field(default_factory=dict)
    caps: tuple[Cap, ...] = ()
    journal: tuple[JournalEntry, ...] = ()
    path: tuple[str, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data."""
        plain: dict[str, Any] = _plain(self)
        return plain

    def __repr__(self) -> str:
        state = f"finished ({self.finished_reason})" if self.finished else f"at {self.current}"
        caps = ", ".join(str(c) for c in self.caps)
        return f"<Status {self.loop} {state} after {self.acts} acts; caps: {caps or 'none'}>"

    def _repr_html_(self) -> str:
        state = (f"finished: <code>{html.escape(str(self.finished_reason))}</code>"
                 if self.finished else f"at <b>{html.escape(str(self.current))}</b>")
        caps = "".join(
            f"<tr><td>{html.escape(c.name)}</td><td>{c.used}</td>"
            f"<td>{'∞' if c.limit is None else c.limit}</td>"
            f"<td>{_REACHED if c.reached else ''}</td></tr>" for c in self.caps
        )
        path = " → ".join(html.escape(p) for p in self.path)
        return (
            f"<div class='crewbook-status'><b>{html.escape(self.loop)}</b> {state} after "
            f"{self.acts} acts<br><small>{path}</small>"
            + (f"<table><tr><th>cap</th><th>used</th><th>limit</th><th></th></tr>{caps}</table>"
               if caps else "") + "</div>"
        )


@dataclass(frozen=True)
class Transition(Generic[State]):
    """What an accepted report does: the next state and the events to log."""

    state: State
    events: Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class Snapshot(Generic[State]):
    """A loop's state at one act, to `restore` later."""

    loop: str
    act: int
    state: State
    #: The events of the loop's run up to this act (None: the loop does not know its
    #: whole run, e.g. it was reopened); a restore copies them into the forked run.
    events: tuple[Mapping[str, Any], ...] | None = field(default=None, repr=False,
                                                         compare=False)


for _fast in (JournalEntry, Cap, Verdict, Transition, Snapshot):
    quick_init(_fast)


class Loop(Drawable, ABC, Generic[State, Report]):
    """Base of every engine; see the module docstring for the protocol.

    Every loop is drawable the same way: an engine implements `graph_model()` (its state
    diagram with the current node highlighted) and gets `dot()`, `mermaid()`, `graph()`,
    `svg()`, `save()` and a notebook display that never raises.
    """

    kind: str = "loop"
    #: What a caller can do once the loop has finished (said in the refusal).
    finished_hint: str = "restore() an earlier snapshot to try again"
    #: False when the engine never mutates a state (then no defensive deep copies).
    copy_state: bool = True
    #: True when ``transition`` returns a list of new event dicts that nothing else holds
    #: (the delivery engines): `report` then stamps them in place (``loop``, ``ts``,
    #: ``run`` where missing) instead of copying each.
    fresh_events: bool = False

    def __init__(
        self, state: State, *, ledger: EventSink | None = None, run: str | None = None,
        clock: Callable[[], datetime] = utc_now, acts: int = 0, router: RouteSource | None = None,
    ) -> None:
        self._state = state
        self._acts = acts
        self.router = router
        self._routes: dict[str, LazyRoute] = {}  # one lazy route per role (see route_for)
        self.ledger: EventSink = (
            ledger if ledger is not None else MemoryLedger(run or "memory", loop=self.kind))
        self.run = run
        self.clock = clock
        #: The events this loop wrote to its current run (None: it did not write them
        #: all, having started at act `acts` > 0), for forking on `restore`.
        self._written: list[Mapping[str, Any]] | None = [] if acts == 0 else None
        self._forks = 0
        #: The contract `report` last returned, while nobody has read it (`_PendingAct`).
        self._pending: weakref.ref[_PendingAct] | None = None

    # -- what engines implement ---------------------------------------------
    @abstractmethod
    def contract(self) -> Act:
        """The next act; must not change anything."""

    @abstractmethod
    def status(self) -> Status:
        """A read-only view of the loop."""

    @abstractmethod
    def transition(self, state: State, report: Report) -> Transition[State]:
        """The next state and events for `report`, or `LoopRefused`; never mutates `state`."""

    def warnings(self) -> Sequence[Problem]:
        """Validation warnings about what the loop runs (a pipeline stage that can only
        escalate...), which the Stepper shows above its buttons; none by default."""
        return ()

    def graph_model(self) -> GraphModel:
        """The loop's state diagram (engines that draw themselves override this)."""
        raise UsageError(f"the {self.kind} loop has no drawing")

    def _drawing_model(self) -> GraphModel | None:
        if type(self).graph_model is Loop.graph_model:
            return None
        return self.graph_model()

    # -- shared behaviour -----------------------------------------------------
    def route_for(self, role: str | None) -> Mapping[str, Any] | None:
        """The route the contract of `role` carries (`Act.route`): model and native effort
        from `crewbook.routing`, through the loop's `router`; None without a router."""
        if self.router is None or role is None:
            return None
        route = self._routes.get(role)
        if route is None or route._router is not self.router:
            route = self._routes[role] = LazyRoute(self.router, role)
        return route

    @property
    def state(self) -> State:
        """A deep copy of the current state (changing it changes nothing)."""
        return copy.deepcopy(self._state)

    @property
    def view(self) -> State:
        """The current state, read-only, for graph and frame builders: shared when the
        engine never mutates a state (``copy_state = False``), else a copy."""
        return copy.deepcopy(self._state) if self.copy_state else self._state

    @property
    def acts(self) -> int:
        """Number of accepted reports so far."""
        return self._acts

    def report(self, report: Report) -> Act:
        """Apply an actor's report; return the next contract. Refusals change nothing."""
        if self.is_finished():
            raise LoopRefused(
                f"the {self.kind} loop has finished ({self.status().finished_reason}); "
                f"nothing more can be reported. {self.finished_hint}",
                code="finished",
            )
        state = copy.deepcopy(self._state) if self.copy_state else self._state
        result = self.transition(state, report)
        events = result.events
        kind, run = self.kind, self.run  # `_stamp`, inline: an event's own ts and run win
        # the loop's clock only for events without their own ts (an event's own ts wins,
        # and engines stamp theirs: reading and formatting the clock again is wasted)
        ts: str | None = None
        stamped: list[dict[str, Any]]
        if self.fresh_events and type(events) is list:  # the engine's own dicts: in place
            stamped = cast("list[dict[str, Any]]", events)
            for event in stamped:
                if "loop" not in event:
                    event["loop"] = kind
                if "ts" not in event:
                    if ts is None:
                        ts = self._now_text()
                    event["ts"] = ts
                if run is not None and "run" not in event:
                    event["run"] = run
        else:
            for given in events:
                if "ts" not in given:
                    ts = self._now_text()
                    break
            if run is None:
                stamped = [{"loop": kind, "ts": ts, **event} for event in events]
            else:  # an event's own run keeps its place, else the run goes last (`setdefault`)
                stamped = [{"loop": kind, "ts": ts, **event, "run": event.get("run", run)}
                           for event in events]
        ref = self._pending  # `_settle`, inline: the contract last returned, if still held
        if ref is not None:
            self._pending = None
            held = ref()
            if held is not None:
                _PendingAct._resolve(held)
        self._commit(stamped, result.state)
        if self._written is not None:  # `_record`, inline
            self._written.extend(stamped)
        self._state = result.state
        self._acts += 1
        pending = _new_object(_PendingAct)  # `next_contract`, inline: nothing is pending now
        _set_attribute(pending, "_loop", self)  # `_PendingAct.__init__`, inline
        self._pending = weakref.ref(pending)
        return pending

    def _now_text(self) -> str:
        """The loop's clock now, as an event's ``ts``."""
        clock = self.clock
        return utc_now_text() if clock is utc_now else clock().isoformat()

    def next_contract(self) -> Act:
        """The contract as it stands now, built when first read (see `_PendingAct`):
        what `report` returns, so stepping a loop never builds contracts nobody reads."""
        self._settle()
        return self._new_pending()

    def _new_pending(self) -> Act:
        """A new pending contract, remembered weakly (call when none is pending: after
        `_settle`; an engine's own ``report`` ends with it)."""
        pending = _new_object(_PendingAct)
        _set_attribute(pending, "_loop", self)  # `_PendingAct.__init__`, inline
        self._pending = weakref.ref(pending)
        return pending

    def _settle(self) -> None:
        """Build the contract `report` last returned if someone still holds it unread:
        call before the state changes (engines that change it outside `report` too)."""
        ref = self._pending
        if ref is not None:
            self._pending = None
            pending = ref()
            if pending is not None:
                _PendingAct._resolve(pending)

    def _commit(self, events: list[dict[str, Any]], state: State) -> None:
        """Log one accepted act's events (an engine whose state lives in a file overrides
        this to commit the events and the new state together, `core.commit`)."""
        append_events(self.ledger, events)

    def is_finished(self) -> bool:
        """Whether the loop has finished (engines may answer faster than `status()`)."""
        return self.status().finished

    def snapshot(self) -> Snapshot[State]:
        """The state now, to `restore` later."""
        state = copy.deepcopy(self._state) if self.copy_state else self._state
        events = tuple(self._written) if self._written is not None else None
        return Snapshot(self.kind, self._acts, state, events)

    def _record(self, events: Sequence[Mapping[str, Any]]) -> None:
        """Remember events written to the current run (engines that append outside
        `report` call this too), so that a `restore` can fork the run."""
        if self._written is not None:
            self._written.extend(events)

    def restore(self, snapshot: Snapshot[State]) -> Act:
        """Rewind to `snapshot`; return its contract.

        The history forks: the acts after the rewind go to a new run, ``RUN~N``, which
        starts with a copy of the run's events up to the snapshot and a ``rewind`` event
        saying where it branched from (``from_run``, ``from_act``, ``to_act``). So the
        old run stays as it was (finished or not), and each run follows the loop's
        rules on its own. A snapshot without its events (a reopened loop) is logged as
        a ``rewind`` event in the same run.
        """
        if snapshot.loop != self.kind:
            raise LoopRefused(f"that snapshot is of a {snapshot.loop} loop, not {self.kind}",
                              code="wrong_snapshot")
        if snapshot.events is not None and self._written is not None:
            self._fork(snapshot)
        else:
            self.ledger.append(self._stamp(
                {"kind": "rewind", "summary": f"rewind to the state after act {snapshot.act} "
                                              f"(from after act {self._acts})",
                 "payload": {"from_act": self._acts, "to_act": snapshot.act}},
                self.clock().isoformat(),
            ))
        self._settle()
        self._state = copy.deepcopy(snapshot.state) if self.copy_state else snapshot.state
        self._acts = snapshot.act
        return self.contract()

    def _fork(self, snapshot: Snapshot[State]) -> None:
        """Start run ``RUN~N``: the events up to `snapshot`, then a ``rewind`` event."""
        assert snapshot.events is not None
        current = self.run or str(getattr(self.ledger, "run", None) or "run")
        root = current.split("~", 1)[0]
        self._forks += 1
        new = f"{root}~{self._forks}"
        copies: list[dict[str, Any]] = [
            {**{k: v for k, v in e.items() if k != "seq"}, "run": new} for e in snapshot.events]
        latest = max((str(e["ts"]) for e in copies if e.get("ts")), default="")
        now = self.clock().isoformat()
        rewind = {"kind": "rewind", "loop": self.kind, "run": new, "ts": max(now, latest),
                  "summary": f"branched from run {current} after act {snapshot.act} (it had "
                             f"{self._acts} acts)",
                  "payload": {"from_run": current, "from_act": self._acts,
                              "to_act": snapshot.act, "copied": len(copies)}}
        batch: list[Mapping[str, Any]] = [*copies, rewind]
        append_events(self.ledger, batch)
        self.run = new
        self._written = batch

    def _stamp(self, event: Mapping[str, Any], ts: str | None) -> dict[str, Any]:
        stamped = {"loop": self.kind, "ts": ts, **event}  # an event's own ts wins
        if self.run is not None:
            stamped.setdefault("run", self.run)
        return stamped

    def trail_rows(self) -> list[dict[str, Any]]:
        """The accepted acts as `crewbook.core.frames.TRAIL_COLUMNS` mappings (engines
        override this; `trail_frame` makes the frame)."""
        raise UsageError(f"the {self.kind} loop keeps no trail of its acts")

    def trail_frame(self) -> pd.DataFrame:
        """The one acts frame: one row per accepted act, the same columns for every
        family (`crewbook.core.frames`)."""
        from .frames import trail_table

        return trail_table(self.trail_rows())

    def stepper(self, policy: Any = None, **kwargs: Any) -> Any:
        """A `crewbook.widgets.Stepper` on this loop (imports ipywidgets now); `policy`
        proposes the reports (a list of reports, a callable, or None: the happy path)."""
        from .family import resolve

        return resolve(STEPPER)(self, policy, **kwargs)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.status()!r}>"

    def _repr_html_(self) -> str:
        return self.status()._repr_html_() + self.contract()._repr_html_()


def append_events(ledger: EventSink, events: Sequence[Mapping[str, Any]]) -> None:
    """Log the events of one act (or a batch) together, through `appender`."""
    appender(ledger)(events)


def appender(ledger: EventSink) -> Callable[[Sequence[Mapping[str, Any]]], Any]:
    """How a loop logs the events of one act in `ledger`: the one seam between the
    engines and their sinks (an engine that logs every act in the same sink looks it up
    once).

    A `crewbook.Ledger` takes them by ``append_built`` (the events an engine built,
    trusted for what it formatted: one lock and one write, no model built); any other
    sink by ``append_many`` when it has one (`EventSink`: all of an act at once), else
    one ``append`` each."""
    batch = getattr(ledger, "append_built", None) or getattr(ledger, "append_many", None)
    if batch is not None:
        return cast("Callable[[Sequence[Mapping[str, Any]]], Any]", batch)

    def one_by_one(events: Sequence[Mapping[str, Any]]) -> None:
        for event in events:
            ledger.append(event)
    return one_by_one


def check_caps(caps: Sequence[Cap], move: str, allowed_at_cap: Sequence[str]) -> None:
    """Refuse `move` when a cap is reached and the move is not allowed at a cap."""
    reached = [c for c in caps if c.reached]
    if reached and move not in allowed_at_cap:
        names = ", ".join(str(c) for c in reached)
        raise LoopRefused(
            f"{move!r} is refused: cap reached ({names}); only "
            f"{' or '.join(allowed_at_cap)} remain", code="cap_reached",
        )


def require_role(role: str, allowed: Sequence[str], what: str) -> None:
    """Refuse when `role` is not among the roles that may do `what`."""
    if role not in allowed:
        raise LoopRefused(
            f"{role!r} may not {what}; only {', '.join(allowed)} may", code="not_allowed",
        )


def _route_text(route: Mapping[str, Any] | None) -> str | None:
    """`model (native effort) — tier × effort` of a route, for displays."""
    if not route:
        return None
    model = route.get("model") or "no model (no routing profile)"
    native = f" ({route['native_text']})" if route.get("native_text") else ""
    return f"{model}{native} — {route.get('tier')} × {route.get('effort')}"


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return {k: _plain(v) for k, v in asdict(value).items()}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    return value


__all__ = [
    "EPOCH",
    "STEPPER",
    "Act",
    "Cap",
    "EventSink",
    "JournalEntry",
    "LazyRoute",
    "Loop",
    "ManualClock",
    "MemoryLedger",
    "RouteSource",
    "Snapshot",
    "State",
    "Status",
    "Transition",
    "Verdict",
    "append_events",
    "appender",
    "check_caps",
    "require_role",
    "utc_now",
]
