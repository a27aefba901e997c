"""The gates a version passes before it ships (C4.2) and what a pull request says (C5, C7).

Pure functions of a task's state: the engines call them, and so can a notebook
(``check_gates(loop.state, loop.review_decision())``).
"""

from __future__ import annotations

from .model import QA, REVIEWER
from .review import ReviewDecision
from .rules import gate_codes
from .state import Outcome, TaskState


def check_gates(s: TaskState, decision: ReviewDecision) -> list[tuple[str, str]]:
    """Why the version on the branch cannot ship yet, as (code, reason) pairs:
    ``version_not_verified`` (no QA pass on that exact version) and ``review_required``
    (review is required and the reviewer has not approved that version). Empty: it can."""
    v = s.version
    out: list[tuple[str, str]] = []
    qa = s.latest(QA, v)
    rv = s.latest(REVIEWER, v) if decision.required else None
    codes = gate_codes(qa.verdict if qa is not None else None, decision.required,
                       rv.verdict if rv is not None else None)
    if "version_not_verified" in codes:
        if qa is not None:
            text = (f"QA failed version {v} (act {qa.act}): the findings go back to the "
                    "developer, or the task fails")
        elif (older := s.latest(QA)) is not None and older.verdict == "pass":
            text = (f"finalising needs a QA pass on version {v}, the version that ships; QA "
                    f"passed version {older.version} and the branch changed since (C4.2): "
                    "the new version goes back to QA")
        else:
            text = (f"finalising needs a QA pass on version {v}, the version that ships; "
                    "QA has not verified it (C4.2)")
        out.append(("version_not_verified", text))
    if "review_required" in codes:
        if rv is None:
            text = (f"review is required ({'; '.join(decision.reasons)}) and the reviewer "
                    f"has not approved version {v} (C4.2)")
        else:
            text = f"the reviewer asked for changes on version {v} (act {rv.act})"
        out.append(("review_required", text))
    return out


def path_text(mode: str, s: TaskState) -> str:
    """The path taken, as the review line shows it: ``coordinator mode, full, sent back 1×``."""
    text = s.path
    if s.sent_back:
        text += f", sent back {s.sent_back}×"
    if s.flagged:
        text += f", {len(s.flagged)} files outside the plan flagged"
    return f"{mode} mode, {text}"


def pr_description(description: str, s: TaskState, outcome: Outcome) -> str:
    """The pull-request description; its last line is the review line (C7)."""
    lines = [description, ""]
    if s.plan is not None:
        lines += ["Acceptance criteria:", *(f"- {c}" for c in s.plan.criteria), ""]
    qa = s.latest(QA, s.version)
    checks = [f"QA passed version {s.version} (act {qa.act})" if qa else ""]
    rv = s.latest(REVIEWER, s.version)
    if rv is not None:
        checks.append(f"the reviewer approved version {s.version} (act {rv.act})")
    lines.append("Verified: " + "; ".join(c for c in checks if c) + ".")
    lines.append(f"Files: {', '.join(s.files)}")
    if s.flagged:
        lines.append(f"Edited outside the quick fix's files: {', '.join(s.flagged)}")
    lines += ["", outcome.pr_line or ""]
    return "\n".join(lines)
