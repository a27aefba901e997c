"""The coordinator's rules on plain values, written once: the engine (`coordinator.py`,
`engine.py`, `outcomes.py`) asks them and raises its refusal with the message it words,
and the plain-data simulator (`fastsim.py`) asks the same functions for the same codes.

Each function takes only what its rule reads (verdicts as text, counts, limits), so a
state object and a handful of local variables can both call it.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Final, TypeVar

from .model import DEVELOPER, JUDGES

__all__ = ["DELEGATION_CODES", "budget_refusal", "caps_reached", "delegation_refusal",
           "gate_codes", "outcome_of", "result_refusal", "sends_back"]

#: A span of time: a `timedelta` (the engine) or milliseconds (the plain-data simulator).
Span = TypeVar("Span", int, timedelta)

#: A refused delegation's reason (`delegation_refusal`) → its refusal code.
DELEGATION_CODES: Final[dict[str, str]] = {
    "unknown_role": "bad_move", "self": "bad_move", "plan_first": "bad_move",
    "no_instructions": "bad_move", "launch_cap": "cap_reached", "qa_first": "qa_first",
}


def caps_reached(steps: int, steps_limit: int | None, elapsed: Span, limit: Span | None
                 ) -> bool:
    """Whether a global cap of the task is reached (C4.3): its accepted acts, or its run
    time (`elapsed` since its first act, zero before it; `limit` in the same unit, None:
    no limit). At a cap only finalising and failing remain."""
    if steps_limit is not None and steps >= steps_limit:
        return True
    return limit is not None and elapsed >= limit


def gate_codes(qa_verdict: str | None, review_required: bool,
               reviewer_verdict: str | None) -> list[str]:
    """The gates (C4.2) the version on the branch has not passed, in order: no QA pass on
    that exact version (``version_not_verified``); review required and no approval of
    that version (``review_required``). Empty: it may ship. The verdicts are the latest
    QA and reviewer verdicts on that version (None: none)."""
    out = [] if qa_verdict == "pass" else ["version_not_verified"]
    if review_required and reviewer_verdict != "approved":
        out.append("review_required")
    return out


def delegation_refusal(known: bool, is_self: bool, planned: bool, anytime: bool,
                       has_instructions: bool, launches: int, limit: int | None,
                       reviewer: bool, qa_passed: bool) -> str | None:
    """Why the coordinator may not delegate to a role (C3, C4.3), as a key of
    `DELEGATION_CODES`, or None: a role the catalogue lacks, itself, a role that works
    from the plan before there is one, no instructions, the role's launch cap, the
    reviewer before QA passed the version."""
    if not known:
        return "unknown_role"
    if is_self:
        return "self"
    if not planned and not anytime:
        return "plan_first"
    if not has_instructions:
        return "no_instructions"
    if limit is not None and launches >= limit:
        return "launch_cap"
    if reviewer and not qa_passed:
        return "qa_first"
    return None


def sends_back(role: str, last_verdict: str | None, on_this_version: bool) -> bool:
    """Whether launching `role` sends the work back: the developer again after the last
    verdict failed (``fail``, ``changes``) the current version."""
    return role == DEVELOPER and last_verdict in ("fail", "changes") and on_this_version


def budget_refusal(steps: int | None, budget: int | None) -> str | None:
    """Why a developer's report breaks its launch's step budget: ``missing`` (a budget
    and no count of steps), ``over`` (more steps than the budget), or None."""
    if budget is None:
        return None
    if steps is None:
        return "missing"
    return "over" if steps > budget else None


def result_refusal(role: str) -> str | None:
    """The report a role gives instead of a `Result`: a judge's `Judgement`, the
    developer's `Built`; None when a `Result` is that role's report."""
    if role in JUDGES:
        return "Judgement"
    return "Built" if role == DEVELOPER else None


def outcome_of(version: int) -> str:
    """How a finalised task ends (C5): a pull request when the run changed the code,
    else ``already_done``."""
    return "pull_request" if version else "already_done"
