"""Standard mode (SPEC C2): the platform runs Architect → Developer → QA → Reviewer in a
fixed order; a failed QA or a reviewer asking for changes sends the task back to the
developer; a cap ends the task as failed, with the reason.

Always used for some work (``Task(kind="merge-conflict")``) and the fallback when
coordinator mode is unavailable (`start_task`). The same agents, limits and gates as
coordinator mode; only who decides the next step differs. The agents' reports are the
same (`Plan` from the architect, `Built`, `Judgement`); there is no coordinator, so
coordinator moves and questions are refused (``no_coordinator``). An expired wait
relaunches the same role when its cap allows, else the task fails.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from ..core.clock import iso_text
from ..core.loop import Act, JournalEntry, Transition
from ..core.measures import copy_measures
from ..errors import LoopRefused
from .codec import (
    Answer,
    Delegate,
    DeliveryReport,
    Expire,
    Fail,
    Finalise,
    Judgement,
    Plan,
    Revise,
    move_name,
    parse_report,
)
from .coordinator import CoordinatorLoop
from .endings import fail, finish, trail_step
from .engine import DeliveryLoop, Draft, Event, transition_of
from .model import ARCHITECT, DEVELOPER, QA, REVIEWER, Task
from .state import PlanRecord, TaskState, Wait, freeze
from .timing import fmt

#: What the platform tells each role it launches.
INSTRUCTIONS: dict[str, str] = {
    ARCHITECT: "turn the description into a specification, then a plan with acceptance "
               "criteria",
    DEVELOPER: "build the plan: change the code, write or update the tests, run them",
    QA: "verify version {v}: the test suite, the quality gates, the acceptance criteria",
    REVIEWER: "review the diff of version {v}, which QA passed, under the review rules",
}


class StandardLoop(DeliveryLoop):
    """A task in standard mode, stepped one agent report at a time."""

    kind = "standard"
    mode = "standard"

    def _launchable(self, role: str) -> bool:
        return role in (ARCHITECT, DEVELOPER, QA, REVIEWER)

    def transition(self, state: TaskState, report: DeliveryReport) -> Transition[TaskState]:
        """The next state and events for an agent's report (or the timer), or `LoopRefused`."""
        events: list[Event] = []
        d, at, act = self._begin(state, report, events)
        if state.started is None:
            self._launch(d, ARCHITECT, d["started"], act, events, INSTRUCTIONS[ARCHITECT],
                         by="platform")
        if isinstance(report, Expire):
            w = self._expired(d, at, act, events)
            self._next(d, w.role, at, act, events, why="relaunched after its wait expired")
            return transition_of(d, events)
        if isinstance(report, Plan):
            self._planned(d, report, at, act, events)
            self._next(d, DEVELOPER, at, act, events)
            return transition_of(d, events)
        if isinstance(report, Revise | Delegate | Answer | Finalise | Fail):
            raise LoopRefused(f"standard mode has no coordinator: the platform decides the next "
                              f"step in a fixed order (C2); {move_name(report)!r} is refused",
                              code="no_coordinator")
        role = self._agent(d, report, at, act, events)
        d.update(holder=None, wait=None)
        s = freeze(d)
        if role == DEVELOPER:
            self._next(d, QA, at, act, events)
        elif isinstance(report, Judgement) and report.verdict in ("fail", "changes"):
            self._next(d, DEVELOPER, at, act, events, sent_back=True, fixes=report.findings)
        elif role == QA and self.review_decision(s).required:
            self._next(d, REVIEWER, at, act, events)
        else:
            finish(self, d, at, act, events, "platform")
        return transition_of(d, events)

    def _planned(self, d: Draft, report: Plan, at: datetime, act: int,
                 events: list[Event]) -> None:
        s = freeze(d)
        w = s.wait
        if w is None or w.role != ARCHITECT or s.holder != ARCHITECT:
            raise LoopRefused(f"the task waits for {s.holder!r}, not the architect: standard "
                              "mode plans once, first (C2)", code="wrong_role")
        if at > w.deadline:
            raise LoopRefused(f"the wait for the architect ended at {fmt(w.deadline)} (C4.4); "
                              f"this report comes at {fmt(at)}", code="wait_expired")
        if report.path != "full":
            raise LoopRefused(f"standard mode runs the full path in a fixed order (C2); the "
                              f"{report.path} path is the coordinator's", code="bad_move")
        criteria = tuple(c.strip() for c in report.criteria if c.strip())
        if not criteria:
            raise LoopRefused("a plan records its acceptance criteria: give at least one",
                              code="bad_move")
        summary = report.summary or f"plan: {_criteria(len(criteria))}"
        event: Event = {"kind": "plan", "role": ARCHITECT, "stage": "plan", "version": 0,
                        "attempt": w.launch, "summary": summary, "ts": iso_text(at),
                        "payload": {"act": act, "criteria": list(criteria), "path": "full"}}
        copy_measures(report, event)
        events.append(event)
        d.update(plan=PlanRecord(criteria, report.summary, "full", (), 0, act), wait=None,
                 holder=None, previous=ARCHITECT)
        d["journal"] = (*s.journal, JournalEntry("plan", summary, ARCHITECT, act))
        trail_step(d, act, ARCHITECT, "plan", summary, at)

    def _next(self, d: Draft, role: str, at: datetime, act: int, events: list[Event], *,
              sent_back: bool = False, fixes: tuple[str, ...] = (), why: str = "") -> None:
        """Launch `role`, or fail the task with the reason when a cap forbids it."""
        s = freeze(d)
        blocked = [c for c in self.global_caps(s, at) if c.reached]
        limit = self.task.limits.launch_limit(role)
        if limit is not None and s.launches.get(role, 0) >= limit:
            blocked.insert(0, next(c for c in self.caps(s, at) if c.name == f"{role} launches"))
        if blocked:
            last = s.trail[-1].summary if s.trail else ""
            reason = (f"{role} cannot be launched again: cap reached "
                      f"({', '.join(str(c) for c in blocked)}, C4.3)"
                      + (f" after: {last}" if last else ""))
            fail(self, d, reason, at, act, events, "platform", escalate=True)
            return
        text = INSTRUCTIONS[role].format(v=s.version) + (f" ({why})" if why else "")
        self._launch(d, role, at, act, events, text, by="platform", fixes=fixes,
                     sent_back=sent_back)

    def contract(self) -> Act:
        """The next act; pure: which role the platform waits for, on which version."""
        s = self._state
        if s.outcome is not None:
            return self._finished_contract(s)
        if s.wait is None:  # nothing started yet: the architect is launched first
            now = self.clock()
            w = Wait(ARCHITECT, now, now + self.task.limits.wait, 1, 1, 0,
                     INSTRUCTIONS[ARCHITECT])
            return self._agent_contract(s, w)
        return self._agent_contract(s, s.wait)


def _criteria(n: int) -> str:
    return f"{n} acceptance criteri{'on' if n == 1 else 'a'}"


def start_task(task: Task | str, *, coordinator_available: bool = True,
               **kwargs: Any) -> DeliveryLoop:
    """The loop a task runs in: coordinator mode when the task asks for it, its work allows
    it and it is available; else standard mode (the fallback, C2)."""
    t = Task(description=task) if isinstance(task, str) else task
    if t.mode == "coordinator" and coordinator_available and not t.standard_only:
        return CoordinatorLoop(t, **kwargs)
    return StandardLoop(t, **kwargs)


def replay(task: Task | str, reports: Iterable[DeliveryReport | Mapping[str, Any]],
           **kwargs: Any) -> DeliveryLoop:
    """`start_task(task, **kwargs)` with `reports` applied in order (each must be accepted);
    a mapping is read with `parse_report`."""
    loop = start_task(task, **kwargs)
    for item in reports:
        loop.report(parse_report(item) if isinstance(item, Mapping) else item)
    return loop
