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

The values a loop hands out (`Act`, `Status`, `Snapshot`, `Transition`) and the rules
every engine shares (caps, `check_caps`; who may give a verdict, `require_role`; the
exact-version rule, `Verdict.covers`) are in `crewbook.core.acts`; the act stamping and
the sink seam in `crewbook.core.stamping`; the contract built when first read in
`crewbook.core.pending`; `quick_init` in `crewbook.core.quickinit`. This module
re-exports their public names.

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
at once, the same objects). An engine that persists its state between processes (a
CLI) rebuilds the loop with ``Loop(state, acts=n)``. Engine-specific facts of a contract
go in ``Act.details`` (the pipeline puts its input versions and round there), of a
status in ``Status.details``.

Acts and events: the events of one act are stamped with one ``ts`` and handed to the
sink through one seam (`crewbook.core.stamping`). ``is_finished()`` is a cheap check
engines may override (``report`` asks it instead of building a `Status`). The first
event of a run can be emitted by ``transition`` itself (the pipeline logs ``init`` with
its first accepted report, so building a loop writes nothing). An event that carries its
own ``ts`` keeps it: the delivery loops stamp their events with the task's own time (a
`ManualClock` moved on by the durations reports carry), so a notebook on a fixed clock
still logs hours of work with their real spacing. Engines whose ``transition`` returns a
list of new dicts that nothing else holds set ``fresh_events = True`` (the delivery
loops): they are stamped in place.

Every loop is drawable (`Drawable`: one ``graph_model()`` gives ``dot()``, ``mermaid()``,
``graph()`` and a display that never raises) and routed: ``router`` resolves the route
(model and native effort) that ``Act.route`` carries, through `crewbook.routing.Router`.
The in-memory ledger (`MemoryLedger`) fills events as the file writer does, and its
``frame()`` is the `read_ledger` frame, so every analysis works on both.
"""

from __future__ import annotations

import copy
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

from ..draw.display import Drawable
from ..errors import LoopRefused, Problem, UsageError
from .acts import (
    Act,
    Cap,
    JournalEntry,
    LazyRoute,
    RouteSource,
    Snapshot,
    State,
    Status,
    Transition,
    Verdict,
    check_caps,
    require_role,
)
from .clock import EPOCH, ManualClock, utc_now, utc_now_text
from .pending import PendingAct, pending_act, resolve
from .quickinit import quick_init
from .sinks import EventSink, MemoryLedger
from .stamping import append_events, appender, stamp_events

if TYPE_CHECKING:
    import pandas as pd

    from ..draw.model import GraphModel

#: Where `Loop.stepper()` finds the notebook front end: a dotted path, resolved when
#: called, so the bottom layer never imports the widgets.
STEPPER: Final = "crewbook.widgets.stepper:Stepper"

Report = TypeVar("Report")


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
        #: The contract `report` last returned, while nobody has read it (`core.pending`).
        self._pending: weakref.ref[PendingAct] | None = None

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
        if route is None or route.router is not self.router:
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
        stamped = stamp_events(result.events, self.kind, self.run, self.fresh_events,
                               self._now_text)  # the act stamping seam
        ref = self._pending  # `_settle`, inline: the contract last returned, if still held
        if ref is not None:
            self._pending = None
            held = ref()
            if held is not None:
                resolve(held)
        self._commit(stamped, result.state)
        if self._written is not None:  # `_record`, inline
            self._written.extend(stamped)
        self._state = result.state
        self._acts += 1
        pending = pending_act(self)  # `next_contract`, inline: nothing is pending now
        self._pending = weakref.ref(pending)
        return pending

    def _now_text(self) -> str:
        """The loop's clock now, as an event's ``ts``."""
        clock = self.clock
        return utc_now_text() if clock is utc_now else clock().isoformat()

    def next_contract(self) -> Act:
        """The contract as it stands now, built when first read (see `core.pending`):
        what `report` returns, so stepping a loop never builds contracts nobody reads."""
        self._settle()
        return self._new_pending()

    def _new_pending(self) -> Act:
        """A new pending contract, remembered weakly (call when none is pending: after
        `_settle`; an engine's own ``report`` ends with it)."""
        pending = pending_act(self)
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
                resolve(pending)

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
    "quick_init",
    "require_role",
    "stamp_events",
    "utc_now",
]
