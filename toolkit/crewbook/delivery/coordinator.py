"""Coordinator mode (SPEC C3–C6): the architect stays on and decides each next step,
within limits the platform enforces whatever it decides.

The coordinator's moves: `Plan` (acceptance criteria; the path), `Delegate` (one role
at a time, with instructions; fixes when sending work back), `Answer` (a pending
question: a decision and a reason), `Revise` (the plan), `Finalise`, `Fail`. While an
agent works the coordinator waits (spending nothing); the agent reports (`Built`,
`Judgement`, `Result`, `Question`) or the platform's timer fires (`Expire`); then the
coordinator has the turn again.

Refused (`LoopRefused`, nothing changes, nothing is logged), each with its code:

- a verdict from anyone but QA or the reviewer, or any verdict in a move
  (``not_allowed``, C4.1);
- finalising without a QA pass on the exact version that ships, or without the
  reviewer's approval of it when review is required (``version_not_verified``,
  ``review_required``, C4.2); the reviewer is only delegated a version QA passed
  (``qa_first``);
- a launch past a role's cap (``cap_reached``), a revision past the plan-revision cap
  (``cap_reached``), any move but finalise or fail once the steps or run time are
  used up (``cap_reached``, C4.3);
- an agent's report after its wait's deadline (``wait_expired``, C4.4);
- moves out of turn (``waiting``), an unanswered question (``question_pending``),
  optional paths that are off (``path_off``), a quick fix with no files, a focused
  recheck with no finding, a plan without criteria (``bad_move``).

Paths (C6): full; send-back (a delegation to the developer after a failed check:
the new version must pass QA again); already-done (QA on the unchanged code; the
path closes as soon as the run changes the code); quick fix and focused recheck
(optional, off by default: ``Task(quick_fix=True, focused_recheck=True)``).
Outcomes (C5): ``pull_request``, ``already_done``, ``failed``; decided by the code.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Final

from ..core.clock import iso_text, utc_now
from ..core.loop import Act, EventSink, JournalEntry, RouteSource, Transition, check_caps
from ..core.measures import copy_measures
from ..errors import InvalidInputError, LoopRefused, did_you_mean
from .catalogue import RoleCatalogue
from .codec import (
    PATHS,
    Answer,
    Built,
    Delegate,
    DeliveryReport,
    Expire,
    Fail,
    Finalise,
    Judgement,
    Plan,
    Question,
    Result,
    Revise,
    move_name,
)
from .endings import fail, finish, trail_step
from .engine import DeliveryLoop, Draft, Event, path_defect, transition_of
from .model import ARCHITECT, QA, REVIEWER
from .rules import DELEGATION_CODES, caps_reached, delegation_refusal, sends_back
from .state import PendingQuestion, PlanRecord, TaskState, Wait
from .timing import fmt, minutes

#: The run time of a task not started yet.
_NO_TIME: Final = timedelta(0)
#: Moves that remain once a global cap (steps, run time) is reached (C4.3).
AT_CAP: tuple[str, ...] = ("finalise", "fail")
_MOVES = (Plan, Revise, Delegate, Answer, Finalise, Fail)
_MOVE_TYPES = frozenset(_MOVES)
#: The agents' reports (what is neither a move nor the timer), by exact type.
_AGENT_REPORTS = frozenset((Built, Judgement, Result, Question))
_PLANS = (Plan, Revise)


class CoordinatorLoop(DeliveryLoop):
    """A task in coordinator mode, stepped one move or report at a time."""

    kind = "coordinator"
    mode = "coordinator"

    def __init__(
        self, task: Any, *, catalogue: RoleCatalogue | None = None,
        ledger: EventSink | None = None, run: str | None = None,
        clock: Callable[[], datetime] = utc_now, state: TaskState | None = None, acts: int = 0,
        router: RouteSource | None = None,
    ) -> None:
        super().__init__(task, catalogue=catalogue, ledger=ledger, run=run, clock=clock,
                         state=state, acts=acts, router=router)
        if self.task.standard_only:
            raise InvalidInputError(
                f"task {self.task.id!r} is {self.task.kind} work, which always runs in standard "
                "mode (C2): use StandardLoop, or start_task() which picks the mode")

    def _launchable(self, role: str) -> bool:
        return role != ARCHITECT

    @functools.cached_property
    def _delegations(self) -> tuple[tuple[str, bool, int | None, str], ...]:
        """(role, anytime, launch limit, move) of every role the coordinator may delegate
        to, in catalogue order (worked out once: the task and catalogue are frozen)."""
        limits = self.task.limits
        return tuple((r.id, r.anytime, limits.launch_limit(r.id), f"delegate:{r.id}")
                     for r in self.catalogue if r.id != ARCHITECT)

    # ------------------------------------------------------------------ stepping
    def transition(self, state: TaskState, report: DeliveryReport) -> Transition[TaskState]:
        """The next state and events for a move or report, or `LoopRefused`; pure."""
        events: list[Event] = []
        d, at, act = self._begin(state, report, events)
        if isinstance(report, Expire):
            self._expired(d, at, act, events)
            d["holder"] = ARCHITECT
            return transition_of(d, events)
        kind = type(report)  # the usual types by a set lookup, else isinstance decides
        if kind in _AGENT_REPORTS or (kind not in _MOVE_TYPES and not isinstance(report, _MOVES)):
            self._agent(d, report, at, act, events, state)
            if d["question"] is None:
                d.update(holder=ARCHITECT, wait=None)
            return transition_of(d, events)
        move = move_name(report)
        if state.holder != ARCHITECT:
            w = state.wait
            assert w is not None
            raise LoopRefused(
                f"{w.role} is working (launched at act {w.act}, deadline {fmt(w.deadline)}); "
                f"the coordinator waits until it reports or the wait expires, then decides "
                f"(C3, C4.4): {move!r} is refused", code="waiting")
        if state.question is not None and move not in ("answer", "fail"):
            q = state.question
            raise LoopRefused(f"{q.role} asked a question (act {q.act}): {q.text!r}; the "
                              f"coordinator answers it (Answer) or fails the task first (C3)",
                              code="question_pending")
        if move not in AT_CAP and self._near_cap(state, at):
            check_caps(self.global_caps(state, at), move, AT_CAP)
        if isinstance(report, Delegate):
            self._delegate(d, state, report, at, act, events)
        elif isinstance(report, _PLANS):
            self._plan(d, state, report, at, act, events)
        elif isinstance(report, Answer):
            self._answer(d, state, report, at, act, events)
        elif isinstance(report, Finalise):
            gates = self.gates(state)
            if state.plan is None:
                gates.insert(0, ("bad_move", "there is no plan yet: plan, build and verify first"))
            if gates:
                raise LoopRefused("finalise is refused: " + "; ".join(t for _, t in gates),
                                  code=gates[0][0])
            finish(self, d, at, act, events, ARCHITECT, report.summary)
        elif isinstance(report, Fail):
            if not report.reason.strip():
                raise LoopRefused("a failed task says why: give the reason (C3)", code="bad_move")
            fail(self, d, report.reason, at, act, events, ARCHITECT)
        _measure(events, report)
        d["previous"] = ARCHITECT
        return transition_of(d, events)

    def _near_cap(self, state: TaskState, at: datetime) -> bool:
        """Whether a global cap (steps, run time) may be reached: `global_caps` and its
        `Cap` objects are built only then (the same test as `Cap.reached`)."""
        limits = self.task.limits
        cap, started = limits.duration_minutes, state.started
        # int(elapsed minutes) >= cap, for whole minutes: elapsed >= that many minutes
        return caps_reached(state.steps, limits.steps,
                            _NO_TIME if started is None else at - started,
                            None if cap is None else minutes(cap))

    # ------------------------------------------------------------------ moves
    def _plan(self, d: Draft, s: TaskState, report: Plan | Revise, at: datetime, act: int,
              events: list[Event]) -> None:
        revising = isinstance(report, Revise)
        if revising and s.plan is None:
            raise LoopRefused("there is no plan to revise: record one with Plan", code="bad_move")
        if not revising and s.plan is not None:
            left = self.caps(s)[2].left
            raise LoopRefused(f"the plan exists (act {s.plan.act}); change it with Revise "
                              f"({'no' if left == 0 else left} revisions left)", code="bad_move")
        if revising:
            limit = self.task.limits.plan_revisions
            if limit is not None and s.revisions >= limit:
                raise LoopRefused(
                    f"the plan was revised {s.revisions} times, the most this task allows "
                    f"(plan_revisions {limit}, C4.3); go on with the current plan, finalise or "
                    "fail", code="cap_reached")
        criteria = tuple(c.strip() for c in report.criteria if c.strip())
        if not criteria:
            raise LoopRefused("a plan records its acceptance criteria (C3): give at least one",
                              code="bad_move")
        old = s.plan
        path = report.path or (old.path if old else "full")
        files = report.files if report.files is not None else (old.files if old else ())
        if path not in PATHS:
            raise LoopRefused(f"unknown path {path!r}{did_you_mean(path, PATHS)}; paths: "
                              f"{', '.join(PATHS)}", code="bad_move")
        if path == "quick-fix":
            if not self.task.quick_fix:
                raise LoopRefused("the quick-fix path is off for this task (C6: optional, off by "
                                  "default); plan the full path, or allow it with "
                                  "Task(quick_fix=True)", code="path_off")
            if not files:
                raise LoopRefused("a quick fix names the files it touches (C6): give files=",
                                  code="bad_move")
        for f in files:
            if defect := path_defect(f):
                raise LoopRefused(f"file {f!r} refused: {defect}", code="unsafe_path")
        if path == "already-done" and s.version > 0:
            raise LoopRefused(f"the run already changed the code (version {s.version}): the "
                              "already-done path is closed (C6)", code="path_closed")
        revision = s.revisions + 1 if revising else 0
        # files the run already edited that a quick fix does not name are flagged (C6)
        outside = [f for f in s.files if f not in files] if path == "quick-fix" else []
        record = PlanRecord(criteria, report.summary, path, tuple(files), revision, act)
        n = len(criteria)
        summary = report.summary or (f"plan revision {revision}" if revising else "plan") + \
            f": {n} acceptance criteri{'on' if n == 1 else 'a'}, path {path}"
        events.append({"kind": "plan", "role": ARCHITECT, "stage": "plan", "version": s.version,
                       "summary": summary, "ts": iso_text(at),
                       "payload": {"act": act, "criteria": list(criteria), "path": path,
                                   "files": list(files), "revision": revision,
                                   **({"outside_plan": outside} if outside else {})}})
        d.update(plan=record, path=path, revisions=revision, notices=())
        if outside:
            d["flagged"] = tuple(dict.fromkeys((*s.flagged, *outside)))
            d["notices"] = ("already edited outside the quick fix's files: "
                            + ", ".join(outside),)
        d["journal"] = (*s.journal, JournalEntry("revision" if revising else "plan",
                                                 summary, ARCHITECT, act))
        trail_step(d, act, ARCHITECT, "revise" if revising else "plan", summary, at)

    def _delegate(self, d: Draft, s: TaskState, report: Delegate, at: datetime, act: int,
                  events: list[Event]) -> None:
        role_id = report.role
        known = role_id in self.catalogue
        limit = self.task.limits.launch_limit(role_id) if known else None
        used = s.launches.get(role_id, 0)
        qa = s.latest(QA, s.version) if role_id == REVIEWER else None
        why = delegation_refusal(
            known=known, is_self=role_id == ARCHITECT, planned=s.plan is not None,
            anytime=known and self.catalogue.role(role_id).anytime,
            has_instructions=bool(report.instructions.strip()), launches=used, limit=limit,
            reviewer=role_id == REVIEWER, qa_passed=qa is not None and qa.verdict == "pass")
        if why is not None:
            raise LoopRefused(self._refused_delegation(why, role_id, s, used),
                              code=DELEGATION_CODES[why])
        focus: tuple[str, ...] = ()
        if report.focus:
            if not self.task.focused_recheck:
                raise LoopRefused("focused rechecks are off for this task (C6: optional, off by "
                                  "default); delegate a full QA run, or allow them with "
                                  "Task(focused_recheck=True)", code="path_off")
            if role_id != QA:
                raise LoopRefused("a focused recheck is QA's (C6)", code="bad_move")
            last = [v for v in s.verdicts if v.verdict in ("fail", "changes")]
            if not last or not s.findings:
                raise LoopRefused("a focused recheck starts from a finding of QA or the "
                                  "reviewer, and there is none to start from", code="bad_move")
            if last[-1].covers(s.version):
                raise LoopRefused(f"version {s.version} is the one that failed: a focused "
                                  "recheck checks a new build; delegate the fix to the "
                                  "developer first (C6)", code="bad_move")
            focus = s.findings
        final = s.verdicts[-1] if s.verdicts else None
        sent_back = sends_back(role_id, final.verdict if final is not None else None,
                               final is not None and final.covers(s.version))
        self._launch(d, role_id, at, act, events, report.instructions, by=ARCHITECT,
                     fixes=report.fixes, focus=focus, sent_back=sent_back)
        d["notices"] = ()

    def _refused_delegation(self, why: str, role_id: str, s: TaskState, used: int) -> str:
        """The message of a delegation `delegation_refusal` refuses (`why`, its reason)."""
        if why == "unknown_role":
            return f"no delivery role {role_id!r}{did_you_mean(role_id, self.catalogue.ids)}"
        if why == "self":
            return ("the coordinator is the architect: it plans and revises itself (Plan, "
                    "Revise), it does not delegate to itself")
        if why == "plan_first":
            return (f"plan first: {role_id} works from the plan and its acceptance criteria "
                    "(C3); before the plan only "
                    + ", ".join(r.id for r in self.catalogue if r.anytime)
                    + " may be delegated")
        if why == "no_instructions":
            return "a delegation says what to achieve: give instructions (C3)"
        if why == "launch_cap":
            return (f"{role_id} was launched {used} times, the most this task allows (C4.3); "
                    "other roles, revise, finalise or fail remain")
        return (f"the reviewer reviews what QA passed: QA has not passed version {s.version} "
                "(C3); delegate it to QA first")

    def _answer(self, d: Draft, s: TaskState, report: Answer, at: datetime, act: int,
                events: list[Event]) -> None:
        q = s.question
        if q is None:
            raise LoopRefused("no question is pending", code="bad_move")
        if not report.decision.strip() or not report.reason.strip():
            raise LoopRefused("an answer gives a decision and its reason (C3)", code="bad_move")
        w = s.wait
        assert w is not None
        events.append({"kind": "answer", "role": ARCHITECT, "stage": "coordinate",
                       "version": s.version, "summary": f"{report.decision} ({report.reason})",
                       "ts": iso_text(at),
                       "payload": {"act": act, "to": q.role, "question": q.text,
                                   "decision": report.decision, "reason": report.reason}})
        wait = Wait(w.role, at, at + self._wait, w.launch, w.act, w.version,
                    w.instructions, w.fixes, w.focus, w.steps, w.sent_back)
        d.update(question=None, holder=q.role, wait=wait, notices=())
        d["journal"] = (*s.journal, JournalEntry(
            "answer", f"{q.role} asked {q.text!r}: {report.decision} because {report.reason}",
            ARCHITECT, act))
        trail_step(d, act, ARCHITECT, "answer", report.decision, at, target=q.role)

    def _ask(self, d: Draft, w: Wait, report: Question, base: Event, act: int,
             events: list[Event]) -> None:
        events.append({**base, "kind": "question", "version": d["version"],
                       "summary": report.text, "payload": {"act": act}})
        d.update(question=PendingQuestion(w.role, report.text, act), holder=ARCHITECT,
                 notices=(f"{w.role} asks: {report.text}",))
        trail_step(d, act, w.role, "question", report.text, datetime.fromisoformat(base["ts"]))

    # ------------------------------------------------------------------ views
    def open_moves(self, state: TaskState | None = None) -> tuple[str, ...]:
        """The moves the coordinator may make now (``delegate:qa``…); empty while it waits."""
        s = state or self._state
        if s.outcome is not None or s.holder != ARCHITECT:
            return ()
        can_finalise = s.plan is not None and not self.gates(s)
        ending = (("finalise",) if can_finalise else ()) + ("fail",)
        capped = any(c.reached for c in self.global_caps(s, s.now or self.clock()))
        if s.question is not None:
            return ending if capped else ("answer", *ending)
        if capped:
            return ending
        moves: list[str] = []
        limits = self.task.limits
        if s.plan is None:
            moves.append("plan")
        elif limits.plan_revisions is None or s.revisions < limits.plan_revisions:
            moves.append("revise")
        qa = s.latest(QA, s.version)
        launches = s.launches
        for role_id, anytime, limit, move in self._delegations:
            if s.plan is None and not anytime:
                continue
            if limit is not None and launches.get(role_id, 0) >= limit:
                continue
            if role_id == REVIEWER and (qa is None or qa.verdict != "pass"):
                continue
            moves.append(move)
        return (*moves, *ending)

    def contract(self) -> Act:
        """The next act; pure. The coordinator's turn lists its open moves, the gates and
        what just happened; an agent's turn its instructions, version and deadline."""
        s = self._state
        if s.outcome is not None:
            return self._finished_contract(s)
        if s.holder != ARCHITECT and s.wait is not None:
            return self._agent_contract(s, s.wait)
        caps = self.caps(s)
        feedback = list(s.notices)
        if s.question is not None:
            feedback.insert(0, f"question from {s.question.role}: {s.question.text}")
        if s.findings:
            feedback += [f"to forward to the developer: {f}" for f in s.findings
                         if f"to forward to the developer: {f}" not in feedback]
        decision = self.review_decision(s)
        moves = self.open_moves(s)
        return Act(
            self.kind, self._acts + 1, ARCHITECT, stage="coordinate",
            receives=("task", "plan", f"version {s.version}") if s.plan else ("task",),
            expects="one move: " + ", ".join(moves),
            budget={c.name: c.left for c in caps}, attempt=1, moves=moves,
            feedback=tuple(feedback), journal=s.journal, route=self.route_for(ARCHITECT),
            details={"task": self.task.id, "version": s.version, "path": s.path,
                     "criteria": list(s.plan.criteria) if s.plan else [],
                     "question": s.question.text if s.question else None,
                     "gates": self.gate_problems(s), "review_required": decision.required,
                     "review_reasons": list(decision.reasons),
                     "caps_reached": [str(c) for c in caps if c.reached]})


def _measure(events: list[Event], report: DeliveryReport) -> None:
    """Put a move's measures on its first event."""
    if not events:
        return
    for event in events:  # the first that is not the run's ``init``
        if event.get("kind") != "init":
            copy_measures(report, event)
            return
    copy_measures(report, events[0])
