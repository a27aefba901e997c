"""How a delivery act ends up written: a task's ``init`` event, the trail step of every
accepted act, and the task's end (C5): a pull request or ``already_done`` when the code
decides it may finish, ``failed`` otherwise. Functions of the loop's draft (the next
state's fields, `delivery.engine.Draft`) and its events, called by the standard and
coordinator engines.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core.acts import JournalEntry
from ..core.clock import iso_text
from .model import Limits
from .outcomes import path_text, pr_description
from .rules import outcome_of
from .state import Outcome, Step, TaskState, freeze

if TYPE_CHECKING:
    from .engine import DeliveryLoop

Event = dict[str, Any]
Draft = dict[str, Any]

#: `Limits.model_dump()` by limits object (kept alive here, so its id stays its own).
_LIMITS: dict[int, tuple[Limits, dict[str, Any]]] = {}


def limits_data(limits: Limits) -> dict[str, Any]:
    """``limits.model_dump()``, a new dict each time (every task's ``init`` event carries
    it; limits are frozen, so the dump is made once per limits object and copied; its one
    mutable field, the launches mapping, is compared each time)."""
    known = _LIMITS.get(id(limits))
    if known is None or known[0] is not limits or known[1]["launches"] != limits.launches:
        if len(_LIMITS) >= 256:
            _LIMITS.clear()
        known = _LIMITS[id(limits)] = (limits, limits.model_dump())
    return {k: dict(v) if type(v) is dict else v for k, v in known[1].items()}


def finish(loop: DeliveryLoop, d: Draft, at: datetime, act: int, events: list[Event], by: str,
            summary: str = "") -> None:
    """End the task with the outcome the code decides (C5): PR or already done."""
    s: TaskState = freeze(d)
    decision = loop.review_decision(s)
    path = path_text(loop.mode, s)
    if outcome_of(s.version) == "already_done":
        outcome = Outcome("already_done", "QA confirmed the code already does what is "
                          "asked: nothing to merge, no pull request", 0, decision, None, path)
    else:
        outcome = Outcome("pull_request", summary or f"version {s.version} ready for "
                          "approval", s.version, decision, None, path)
        outcome = Outcome(outcome.kind, outcome.reason, s.version, decision,
                          pr_description(loop.task.description, s, outcome), path)
    facts = outcome.to_dict()
    line = facts["pr_line"] or outcome.reason  # `Outcome.pr_line`, made once
    events.append({"kind": "finish", "verdict": outcome.kind, "version": s.version,
                   "role": by, "ts": iso_text(at), "summary": line,
                   "payload": {"act": act, **facts}})
    d.update(outcome=outcome, holder=None, wait=None, question=None)
    trail_step(d, act, by, "finalise", line, at, outcome.kind)

def fail(loop: DeliveryLoop, d: Draft, reason: str, at: datetime, act: int, events: list[Event],
          by: str, escalate: bool = False) -> None:
    s: TaskState = freeze(d)
    if escalate:
        events.append({"kind": "escalate", "summary": reason, "ts": iso_text(at),
                       "payload": {"act": act}})
    outcome = Outcome("failed", reason, s.version, None, None, path_text(loop.mode, s))
    events.append({"kind": "finish", "verdict": "failed", "version": s.version, "role": by,
                   "summary": reason, "ts": iso_text(at),
                   "payload": {"act": act, **outcome.to_dict()}})
    d.update(outcome=outcome, holder=None, wait=None, question=None)
    d["journal"] = (*s.journal, JournalEntry("failure", reason, by, act))
    trail_step(d, act, by, "fail", reason, at, "failed")

def init_event(loop: DeliveryLoop, at: datetime) -> Event:
    """The ``init`` event of a task started at `at`: the task, its mode and limits."""
    t = loop.task
    return {"kind": "init", "ts": iso_text(at),
            "summary": f"{loop.mode} task {t.id}: {t.description}",
            "payload": {"task": t.id, "mode": loop.mode, "kind": t.kind,
                        "review": loop.policy.policy, "quick_fix": t.quick_fix,
                        "focused_recheck": t.focused_recheck,
                        "limits": limits_data(t.limits), "labels": dict(t.labels)}}

def trail_step(d: Draft, act: int, actor: str, move: str, summary: str, at: datetime,
           verdict: str | None = None, *, version: int | None = None,
           target: str | None = None, sent_back: bool = False) -> None:
    d["trail"] = (*d["trail"], Step(act, actor, move, summary,
                                    d["version"] if version is None else version, at,
                                    verdict, target, sent_back))


__all__ = ["fail", "finish", "init_event", "limits_data", "trail_step"]
