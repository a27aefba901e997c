"""What the standard and coordinator loops share: agents' reports, time and waits, the
gates of C4.2, outcomes (C5), contracts for agents, status, drawings.

The engines differ only in who decides the next step (C2, C3): the platform, in
fixed order (`crewbook.delivery.standard`), or the coordinator
(`crewbook.delivery.coordinator`). Both enforce the same limits, whatever anyone
decides; a report the rules refuse raises `LoopRefused` and changes and logs nothing.

Time: an act happens at ``max(clock(), task time + report.duration_ms)``, so with a
`ManualClock` the reported durations drive the task's time, and with the wall clock
replayed reports still take the time they say.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

from ..core.clock import iso_text
from ..core.loop import (
    Act,
    Cap,
    EventSink,
    JournalEntry,
    Loop,
    RouteSource,
    Status,
    Transition,
    Verdict,
    utc_now,
)
from ..core.loop import require_role as _require_role
from ..core.measures import copy_measures
from ..errors import LoopRefused, did_you_mean
from ..models import path_defect as _path_defect
from ..routing.router import Router
from .catalogue import RoleCatalogue, load_catalogue
from .codec import Built, DeliveryReport, Expire, Judgement, Measured, Question, Result
from .diffstat import covering
from .endings import init_event, trail_step
from .gates import Judged, global_caps, task_caps
from .model import ARCHITECT, DEVELOPER, JUDGES, ReviewPolicy, Task
from .review import ReviewDecision
from .rules import budget_refusal, result_refusal
from .state import Outcome, TaskState, Wait, freeze
from .timing import check_measures, duration, fmt, minutes
from .views import agent_contract, loop_status

if TYPE_CHECKING:
    import pandas as pd

    from ..draw.model import GraphModel

Event = dict[str, Any]
Draft = dict[str, Any]
_new_object: Final = object.__new__
_set_attribute: Final = object.__setattr__
#: The roles that judge (C4.1), in `JUDGES` order.
_JUDGE_ROLES: Final = tuple(JUDGES)
#: `crewbook.models.path_defect`, remembered (the same files come back version after version).
path_defect = lru_cache(maxsize=4096)(_path_defect)


#: The state every task starts from (states are never changed in place: one is shared).
_FIRST_STATE = TaskState(holder=ARCHITECT)


class DeliveryLoop(Loop[TaskState, DeliveryReport]):
    """Base of `StandardLoop` and `CoordinatorLoop` (see the module docstring)."""

    kind = "delivery"
    copy_state = False
    fresh_events = True
    mode = "standard"

    def __init__(
        self, task: Task | str, *, catalogue: RoleCatalogue | None = None,
        ledger: EventSink | None = None, run: str | None = None,
        clock: Callable[[], datetime] = utc_now, state: TaskState | None = None, acts: int = 0,
        router: RouteSource | None = None,
    ) -> None:
        self.task = Task(description=task) if isinstance(task, str) else task
        self.catalogue = catalogue or load_catalogue()
        #: The review decisions and gates of this task's states (`delivery.gates`).
        self.judged = Judged(self.task)
        #: The task's review policy (a named mode's made once: policies are frozen).
        self.policy: ReviewPolicy = self.judged.policy
        #: How long a wait lasts (the task is frozen: worked out once, not per launch).
        self._wait = minutes(self.task.limits.wait_minutes)  # `Limits.wait`, made once
        if router is None:
            router = Router("delivery")
        super().__init__(state or _FIRST_STATE, ledger=ledger, run=run,
                         clock=clock, acts=acts, router=router)

    # ------------------------------------------------------------------ reading
    def is_finished(self) -> bool:
        """Whether the task has ended (C5)."""
        return self._state.outcome is not None

    @property
    def outcome(self) -> Outcome | None:
        """How the task ended, or None while it runs."""
        return self._state.outcome

    def review_decision(self, state: TaskState | None = None) -> ReviewDecision:
        """Whether the version now on the branch needs the reviewer (C7, decided by code)."""
        return self.judged.decision(state or self._state)

    def caps(self, state: TaskState | None = None, at: datetime | None = None) -> list[Cap]:
        """Every cap with its use: steps, run time (minutes), plan revisions, launches."""
        return task_caps(self.task.limits, state or self._state, at, self._launch_caps)

    @functools.cached_property
    def _launch_caps(self) -> tuple[tuple[str, str, int | None], ...]:
        """(role, cap name, launch limit) of every launchable role (the task is frozen)."""
        limits = self.task.limits
        return tuple((r, f"{r} launches", limits.launch_limit(r))
                     for r in self.catalogue.ids if self._launchable(r))

    def _launchable(self, role: str) -> bool:
        return True

    def global_caps(self, state: TaskState, at: datetime) -> list[Cap]:
        """The caps that, once reached, leave only finalise or fail (steps, run time)."""
        return global_caps(self.task.limits, state, at)

    # ------------------------------------------------------------------ time
    def _time(self, state: TaskState, report: Measured) -> datetime:
        now = self.clock()
        base = state.now or now
        if report.duration_ms:
            base = base + duration(report.duration_ms)
        return now if now >= base else base

    # ----------------------------------------------------------- agent reports
    def _agent(self, d: Draft, report: DeliveryReport, at: datetime, act: int,
               events: list[Event], state: TaskState | None = None) -> str:
        """Check and apply an agent's report; returns its role. Refusals raise first.
        `state`: the state `d` was drafted from, when only `_begin` changed the draft (its
        time, steps and start, which no check here reads): no need to freeze `d` again."""
        s: TaskState = freeze(d) if state is None else state
        role = getattr(report, "role", None)
        if isinstance(report, Judgement):
            _require_role(report.role, _JUDGE_ROLES, "give a verdict (C4.1: only QA and the "
                          "reviewer judge, each in its own report)")
        if isinstance(report, Built) and report.role != DEVELOPER:
            raise LoopRefused(f"{report.role!r} may not change the code: only the developer "
                              "builds versions (C1)", code="not_allowed")
        assert isinstance(role, str)
        if s.wait is None or s.holder != s.wait.role:
            holder = "the coordinator" if s.holder == ARCHITECT else repr(s.holder)
            extra = (f" (answering {s.question.role}'s question)" if s.question else "")
            raise LoopRefused(f"no report from {role!r} is expected: {holder} has the turn"
                              f"{extra}", code="wrong_role")
        w = s.wait
        if role != w.role:
            raise LoopRefused(f"the task waits for {w.role!r} (launched at act {w.act}); a report "
                              f"from {role!r} is refused: one agent at a time (C3)",
                              code="wrong_role")
        if at > w.deadline:
            raise LoopRefused(
                f"the wait for {w.role} ended at {fmt(w.deadline)} "
                f"({self.task.limits.wait_minutes} min after {fmt(w.since)}, C4.4); this "
                f"report comes at {fmt(at)}. The "
                "platform records the expiry (Expire()), then the next step is decided anew",
                code="wait_expired")
        base: Event = {"role": role, "stage": self.catalogue.stages[role],
                       "attempt": w.launch, "ts": iso_text(at)}
        copy_measures(report, base)
        if isinstance(report, Built):
            self._built(d, s, w, report, base, at, act, events)
        elif isinstance(report, Judgement):
            self._judged(d, s, w, report, base, at, act, events)
        elif isinstance(report, Result):
            wanted = result_refusal(role)
            if wanted is not None:
                raise LoopRefused(f"{role} reports a {wanted}, not a Result", code="bad_report")
            events.append({**base, "kind": "report", "verdict": "done", "version": s.version,
                           "summary": report.summary,
                           "payload": {"act": act, "findings": list(report.findings)}})
            d["notices"] = (f"{role}: {report.summary}", *report.findings)
            trail_step(d, act, role, "result", report.summary, at, "done")
        elif isinstance(report, Question):
            if not report.text.strip():
                raise LoopRefused("a question needs its text", code="bad_report")
            self._ask(d, w, report, base, act, events)
        d["previous"] = role
        return role

    def _built(self, d: Draft, s: TaskState, w: Wait, report: Built, base: Event,
               at: datetime, act: int, events: list[Event]) -> None:
        for f in report.files:
            defect = path_defect(f)
            if defect:
                raise LoopRefused(f"file {f!r} refused: {defect}", code="unsafe_path")
        over = budget_refusal(report.steps, w.steps)
        if over is not None:
            quick = " (quick fix, C6)" if s.path == "quick-fix" else ""
            raise LoopRefused(f"this launch has a budget of {w.steps} steps{quick}: the "
                              "developer's report says how many it took (steps=)"
                              if over == "missing" else
                              f"the developer reports {report.steps} steps; this launch's "
                              f"budget is {w.steps}{quick}", code="over_budget")
        version = s.version + (1 if report.files else 0)
        outside: list[str] = []
        if s.plan is not None and s.path == "quick-fix":
            outside = [f for f in report.files if f not in s.plan.files]
        payload: dict[str, Any] = {"act": act, "files": list(report.files),
                                   "changed": bool(report.files)}
        if report.head:
            payload["head"] = report.head
        if report.steps is not None:
            payload["steps"] = report.steps
        if outside:
            payload["outside_plan"] = outside
        n = len(report.files)
        summary = report.summary or (f"version {version}: {n} file{'s' if n != 1 else ''} "
                                     "changed" if n else "no change: the code stays as it is")
        events.append({**base, "kind": "report", "verdict": "done", "version": version,
                       "summary": summary, "payload": payload})
        notices = [f"developer: {summary}"]
        if report.files:
            files = tuple(dict.fromkeys((*s.files, *report.files)))
            d.update(version=version, head=report.head or s.head, files=files,
                     change=None if report.change is None  # every changed file, C7
                     else covering(report.change, files, s.change))
            if s.path == "already-done":
                note = (f"the already-done path is closed: the run changed the code (version "
                        f"{version}); QA's verdict on the unchanged code no longer counts (C6)")
                events.append({"kind": "note", "role": DEVELOPER, "stage": "build",
                               "version": version, "summary": note, "ts": iso_text(at),
                               "payload": {"act": act, "path": "full", "from": "already-done"}})
                d["path"] = "full"
                d["journal"] = (*s.journal, JournalEntry("path", note, DEVELOPER, act))
                notices.append(note)
        if outside:
            d["flagged"] = tuple(dict.fromkeys((*s.flagged, *outside)))
            notices.append("edited outside the quick fix's files: " + ", ".join(outside))
        d["notices"] = tuple(notices)
        trail_step(d, act, DEVELOPER, "built", summary, at, "done", version=version)

    def _judged(self, d: Draft, s: TaskState, w: Wait, report: Judgement, base: Event,
                at: datetime, act: int, events: list[Event]) -> None:
        allowed = JUDGES[report.role]
        if report.verdict not in allowed:
            raise LoopRefused(f"{report.role} gives {' or '.join(allowed)}, not "
                              f"{report.verdict!r}{did_you_mean(report.verdict, allowed)}",
                              code="bad_report")
        version = w.version if report.version is None else report.version
        if version != w.version:
            raise LoopRefused(
                f"{report.role} was launched on version {w.version}; a verdict on version "
                f"{version} is refused (a verdict counts only for the exact version judged, "
                "C4.2)", code="wrong_version")
        positive = report.verdict == allowed[0]
        summary = report.summary or (f"{report.role}: {report.verdict} on version {version}"
                                     + (f" ({len(report.findings)} findings)"
                                        if report.findings else ""))
        events.append({**base, "kind": "verdict", "verdict": report.verdict, "version": version,
                       "summary": summary,
                       "payload": {"act": act, "findings": list(report.findings),
                                   "focus": list(w.focus), "flagged": list(s.flagged)}})
        d["verdicts"] = (*s.verdicts, Verdict(report.role, report.verdict, version, act))
        d["journal"] = (*s.journal, JournalEntry(
            "verdict", f"{report.role}: {report.verdict} on version {version}", report.role, act))
        d["findings"] = () if positive else tuple(report.findings)
        d["notices"] = (summary, *report.findings)
        trail_step(d, act, report.role, "judgement", summary, at, report.verdict,
                    version=version)

    def _ask(self, d: Draft, w: Wait, report: Question, base: Event, act: int,
             events: list[Event]) -> None:
        raise LoopRefused("in standard mode no coordinator answers questions: the platform "
                          "runs the fixed order (C2); report the result with its open points",
                          code="no_coordinator")

    # --------------------------------------------------------------- launches
    def _launch(self, d: Draft, role: str, at: datetime, act: int, events: list[Event],
                instructions: str, *, by: str, fixes: Sequence[str] = (),
                focus: Sequence[str] = (), sent_back: bool = False) -> None:
        """Hand the task to `role` (caps are checked by the caller)."""
        launches = dict(d["launches"])
        launches[role] = launches.get(role, 0) + 1
        limits = self.task.limits
        steps = limits.agent_steps
        if role == DEVELOPER and d["path"] == "quick-fix":
            steps = limits.quick_fix_steps if steps is None else min(steps, limits.quick_fix_steps)
        wait = Wait(role, at, at + self._wait, launches[role], act, d["version"], instructions,
                    tuple(fixes), tuple(focus), steps, sent_back)
        events.append({
            "kind": "act", "role": role, "stage": self.catalogue.stages[role],
            "attempt": launches[role], "version": d["version"], "summary": instructions,
            "ts": iso_text(at),
            "payload": {"act": act, "by": by, "fixes": list(fixes), "focus": list(focus),
                        "sent_back": sent_back, "deadline": iso_text(wait.deadline),
                        "steps": steps}})
        d["launches"], d["wait"], d["holder"] = launches, wait, role
        if sent_back:
            d["sent_back"] = d["sent_back"] + 1
        trail_step(d, act, by, "delegate", instructions, at, target=role, sent_back=sent_back)

    def _expired(self, d: Draft, at: datetime, act: int, events: list[Event]) -> Wait:
        s: TaskState = freeze(d)
        w = s.wait
        if w is None or s.holder != w.role:
            raise LoopRefused("no wait is running: nobody is working on the task now",
                              code="no_wait")
        if at <= w.deadline:
            raise LoopRefused(f"the wait for {w.role} runs until {fmt(w.deadline)}; it is "
                              f"{fmt(at)}: nothing has expired", code="not_expired")
        text = (f"the wait for {w.role} (launch {w.launch}, from {fmt(w.since)}) passed its "
                f"deadline {fmt(w.deadline)} (C4.4)")
        events.append({"kind": "error", "role": w.role, "stage": self.catalogue.role(w.role).stage,
                       "attempt": w.launch, "version": s.version, "summary": text,
                       "ts": iso_text(at),
                       "payload": {"act": act, "reason": "wait_expired",
                                   "since": iso_text(w.since),
                                   "deadline": iso_text(w.deadline)}})
        d.update(wait=None, notices=(text,), previous=w.role)
        d["journal"] = (*s.journal, JournalEntry("expiry", text, "platform", act))
        trail_step(d, act, "platform", "expire", text, at, "expired", target=w.role)
        return w

    # ------------------------------------------------------------- finishing
    def gates(self, state: TaskState | None = None) -> list[tuple[str, str]]:
        """Why the version on the branch cannot ship yet, as (code, reason) pairs (C4.2):
        ``version_not_verified`` (QA), ``review_required`` (the reviewer). Empty: it can."""
        return self.judged.gates(state or self._state)

    def gate_problems(self, state: TaskState | None = None) -> list[str]:
        """Why the version on the branch cannot ship yet (empty: it can; C4.2)."""
        return [text for _, text in self.gates(state)]

    # ------------------------------------------------------------------ helpers
    def _begin(self, state: TaskState, report: DeliveryReport, events: list[Event]
               ) -> tuple[Draft, datetime, int]:
        if not isinstance(report, Measured):
            raise LoopRefused(f"a delivery report is a move (Plan, Delegate…) or an agent "
                              f"report (Built, Judgement…), not {type(report).__name__}",
                              code="bad_report")
        check_measures(report)
        d: Draft = dict(state.__dict__)
        at = self._time(state, report) if not isinstance(report, Expire) else max(
            self.clock(), state.now or self.clock())
        if state.started is None:
            d["started"] = self.clock()
            events.append(init_event(self, d["started"]))
        d["now"] = at
        d["steps"] = state.steps + 1
        return d, at, self._acts + 1

    # ------------------------------------------------------------------ views
    def _agent_contract(self, s: TaskState, w: Wait) -> Act:
        return agent_contract(self, s, w)

    def _finished_contract(self, s: TaskState) -> Act:
        o = s.outcome
        assert o is not None
        return Act(self.kind, self._acts + 1, None, journal=s.journal, finished=True,
                   finished_reason=o.kind, details={"task": self.task.id, **o.to_dict()})

    def status(self) -> Status:
        """Where the task is: holder, counters, caps, outcome, gates, the journal."""
        return loop_status(self)

    def trail_rows(self) -> list[dict[str, Any]]:
        """The trail's steps as acts-frame rows (`Loop.trail_frame`)."""
        return [{"act": s.act, "ts": iso_text(s.at), "role": s.actor, "stage": None,
                 "move": s.move, "verdict": s.verdict, "version": s.version,
                 "summary": s.summary} for s in self.view.trail]

    def path_frame(self) -> pd.DataFrame:
        """The trail, one row per accepted act: ``act`` (Int64), ``at`` (datetime, UTC),
        ``actor``, ``move`` (category), ``target``, ``version`` (Int64), ``verdict``,
        ``sent_back`` (bool), ``summary``."""
        from .frames import trail_frame

        return trail_frame(self._state.trail)

    def graph_model(self) -> GraphModel:
        """The path taken so far: who acted, verdicts per version, send-backs, the holder."""
        from .graph import path_graph

        return path_graph(self)


def transition_of(d: Draft, events: list[Event]) -> Transition[TaskState]:
    """Freeze a draft into the transition `Loop.report` applies (the draft becomes the
    state's own fields: nothing may change `d` afterwards)."""
    state = _new_object(TaskState)
    _set_attribute(state, "__dict__", d)
    return Transition(state, events)
