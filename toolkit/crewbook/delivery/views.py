"""The read-only views of a delivery loop: an agent's contract and the loop's status."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ..core.loop import Act, Status
from .model import ARCHITECT, DEVELOPER, QA, REVIEWER
from .state import TaskState, Wait

if TYPE_CHECKING:
    from .engine import DeliveryLoop

#: What each role hands back, as the contract says it.
EXPECTS: Final[dict[str, str]] = {
    ARCHITECT: "Plan: the plan and its acceptance criteria",
    DEVELOPER: "Built: the files changed (a new version), or a Question",
    QA: "Judgement: pass or fail on version {v}, with findings; or a Question",
    REVIEWER: "Judgement: approved or changes on version {v}, with findings; or a Question",
}


def agent_contract(loop: DeliveryLoop, s: TaskState, w: Wait) -> Act:
    """The contract of the agent at work: instructions, version, deadline, tools…"""
    role = loop.catalogue.role(w.role)
    feedback = [w.instructions, *(f"fix: {f}" for f in w.fixes)]
    if w.role == DEVELOPER and s.findings:
        feedback += [f"finding: {f}" for f in s.findings]
    if w.focus:
        feedback += [f"start from: {f}" for f in w.focus]
    if w.role in (QA, REVIEWER) and s.flagged:
        feedback.append("flagged: edited outside the quick fix's files: "
                        + ", ".join(s.flagged))
    receives = ["task", "plan"] if s.plan else ["task"]
    if w.role != ARCHITECT:
        receives.append(f"version {w.version}")
    expects = EXPECTS.get(w.role, "Result: findings, or a Question").format(v=w.version)
    if w.focus:
        expects += " (judge the whole version, starting from the finding)"
    budget: dict[str, int | None] = {
        "minutes_to_deadline": max(0, int((w.deadline - (s.now or w.since))
                                          .total_seconds() // 60)),
        "steps": w.steps}
    moves = {"developer": ("built", "question"), QA: ("judgement", "question"),
             REVIEWER: ("judgement", "question"), ARCHITECT: ("plan",)}.get(
                 w.role, ("result", "question"))
    return Act(
        loop.kind, loop.acts + 1, w.role, stage=role.stage, receives=tuple(receives),
        expects=expects, budget=budget, attempt=w.launch, moves=moves,
        feedback=tuple(feedback), journal=s.journal, route=loop.route_for(w.role),
        details={"task": loop.task.id, "version": w.version, "since": w.since.isoformat(),
                 "deadline": w.deadline.isoformat(), "instructions": w.instructions,
                 "fixes": list(w.fixes), "focus": list(w.focus), "flagged": list(s.flagged),
                 "criteria": list(s.plan.criteria) if s.plan else [],
                 "plan_files": list(s.plan.files) if s.plan else [], "path": s.path,
                 "tools": list(role.tools), "can_write": loop.catalogue.can_write(w.role)})


def loop_status(loop: DeliveryLoop) -> Status:
    """Where the task is: holder, counters, caps, outcome, gates, the journal."""
    s = loop.view
    o = s.outcome
    w = s.wait if s.wait is not None and s.holder == s.wait.role else None
    decision = loop.review_decision(s)
    return Status(
        loop.kind, loop.acts, s.holder, s.previous, o is not None,
        o.kind if o else None,
        counters={"steps": s.steps, "version": s.version, "revisions": s.revisions,
                  "sent_back": s.sent_back, **{f"{r} launches": n
                                               for r, n in s.launches.items()}},
        caps=tuple(loop.caps(s)), journal=s.journal,
        path=tuple(f"{st.actor}:{st.move}" + (f"→{st.target}" if st.target else "")
                   + (f"({st.verdict})" if st.verdict else "") for st in s.trail),
        details={"task": loop.task.id, "mode": loop.mode, "path": s.path,
                 "version": s.version, "files": list(s.files),
                 "outcome": o.to_dict() if o else None,
                 "reason": o.reason if o else None,
                 "gates": loop.gate_problems(s), "review": decision.to_dict(),
                 "waiting_for": w.role if w else None,
                 "deadline": w.deadline.isoformat() if w else None,
                 "question": s.question.text if s.question else None,
                 "flagged": list(s.flagged)})
