"""What a delivery task's state still needs before it may ship, and its caps: the review
decision of the version on the branch (C7, decided by code), the gates of C4.2
(``version_not_verified``, ``review_required``), and the caps of C4.3 with their use.

States are immutable, so `Judged` remembers the last state judged with its decision and
gates, and review decisions by change (shared by the loops of one named review mode: the
decision is a pure function of the change and the policy, both frozen).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

from ..core.acts import Cap
from .diffstat import ChangeSummary, summary_of
from .model import REVIEWER, Limits, ReviewMode, ReviewPolicy, Task
from .outcomes import check_gates
from .review import ReviewDecision, review_required
from .state import TaskState

#: Review decisions of the named review modes, by change (`Judged.decision`).
_DECISIONS: dict[str, dict[tuple[Any, ...], ReviewDecision]] = {}


@lru_cache(maxsize=64)
def _named_policy(name: ReviewMode) -> ReviewPolicy:
    return ReviewPolicy(policy=name)


def policy_of(task: Task) -> ReviewPolicy:
    """`Task.policy`, the policy of a named review mode made once (policies are frozen)."""
    review = task.review
    if type(review) is str:  # a named mode, the usual (a model's isinstance costs more)
        return _named_policy(review)
    return review if isinstance(review, ReviewPolicy) else _named_policy(review)


class Judged:
    """The review decisions and gates of one task's states, remembered."""

    def __init__(self, task: Task) -> None:
        self.policy = policy_of(task)
        #: The last state judged, with its review decision and gates.
        self._memo: tuple[TaskState | None, ReviewDecision | None, list[tuple[str, str]] | None] \
            = (None, None, None)
        review = task.review
        self._decisions: dict[tuple[Any, ...], ReviewDecision] = (
            _DECISIONS.setdefault(review, {}) if isinstance(review, str) else {})

    def decision(self, s: TaskState) -> ReviewDecision:
        """Whether the version on the branch of `s` needs the reviewer (C7)."""
        memo_state, memo, gates = self._memo
        if memo_state is s and memo is not None:
            return memo
        started = s.launches.get(REVIEWER, 0) > 0
        # the decision depends on the change only: remembered per (change, reviewer started)
        key = (s.version == 0, s.change, s.files if s.change is None else (), started)
        decision = self._decisions.get(key)
        if decision is None:
            if s.version == 0:
                change: ChangeSummary | None = ChangeSummary((), "empty")
            else:
                change = s.change or summary_of(s.files)
            decision = review_required(change, self.policy, reviewer_started=started)
            if len(self._decisions) < 256:
                self._decisions[key] = decision
        self._memo = (s, decision, gates if memo_state is s else None)
        return decision

    def gates(self, s: TaskState) -> list[tuple[str, str]]:
        """Why the version on the branch of `s` cannot ship yet, as (code, reason) pairs."""
        memo_state, _, memo = self._memo
        if memo_state is s and memo is not None:
            return list(memo)
        decision = self.decision(s)
        out = check_gates(s, decision)
        self._memo = (s, decision, out)
        return list(out)


def task_caps(limits: Limits, s: TaskState, at: datetime | None,
              launch_caps: Sequence[tuple[str, str, int | None]]) -> list[Cap]:
    """Every cap of `s` with its use at `at` (else the state's time): steps, run time
    (minutes), plan revisions, and the launches of each (role, cap name, limit)."""
    elapsed = 0
    if s.started is not None:
        elapsed = int(((at or s.now or s.started) - s.started).total_seconds() // 60)
    caps = [Cap("steps", s.steps, limits.steps),
            Cap("run time (min)", elapsed, limits.duration_minutes),
            Cap("plan revisions", s.revisions, limits.plan_revisions)]
    launches = s.launches
    caps += [Cap(name, launches.get(r, 0), limit) for r, name, limit in launch_caps]
    return caps


def global_caps(limits: Limits, state: TaskState, at: datetime) -> list[Cap]:
    """The caps that, once reached, leave only finalise or fail (steps, run time)."""
    elapsed = 0
    if state.started is not None:
        elapsed = int((at - state.started).total_seconds() // 60)
    return [Cap("steps", state.steps, limits.steps),
            Cap("run time (min)", elapsed, limits.duration_minutes)]


__all__ = ["Judged", "global_caps", "policy_of", "task_caps"]
