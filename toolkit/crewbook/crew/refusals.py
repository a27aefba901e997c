"""The crew loop's refusals of a report (SPEC D2): a report from another role than the
expected one, a verdict that role may not give, a blank or overlong summary, and qa's
``go`` on a bar that is red or not measured on the version judged; and a retry of an
accepted act told from a report for another act (`is_retry`). Each raises
`LoopRefused` with its code before the act makes anything, so a refusal changes and logs
nothing.
"""

from __future__ import annotations

from ..errors import LoopRefused, did_you_mean
from .model import MAX_SUMMARY_CHARS, ROLES, STAGES, VERDICTS
from .working import Working


def check_report(w: Working, role: str, verdict: str, summary: str, run_bar: bool) -> None:
    """Refuse a report of `role` with `verdict` and `summary` on the working state `w`
    (`run_bar`: whether the bar gates qa's ``go``)."""
    if role != w.expected:
        if role not in ROLES:
            raise LoopRefused(f"no role {role!r} in the crew loop"
                              f"{did_you_mean(role, ROLES)}; roles: {', '.join(ROLES)}",
                              code="unknown_role")
        raise LoopRefused(
            f"the crew loop expects a report from {w.expected!r} ({STAGES[w.expected]} of "
            f"story {w.story!r} of epic {w.epic!r}); a report from {role!r} is refused and "
            "nothing is logged", code="wrong_role")
    allowed = VERDICTS[role]
    if verdict not in allowed:
        raise LoopRefused(f"{role} reports {' or '.join(allowed)}, not {verdict!r}"
                          f"{did_you_mean(verdict, allowed)}", code="bad_verdict")
    if not summary.strip():
        raise LoopRefused("the summary is blank: say in one sentence what the act did",
                          code="bad_report")
    if len(summary) > MAX_SUMMARY_CHARS:
        raise LoopRefused(f"the summary is {len(summary)} characters, over "
                          f"{MAX_SUMMARY_CHARS}: it rides along in every later step; say "
                          "it in a few sentences and put details in the payload",
                          code="bad_report")
    if role == "qa" and verdict == "go" and run_bar:
        check_bar(w)


def check_bar(w: Working) -> None:
    """Refuse qa's ``go`` while the bar is red or not measured on the version judged."""
    facts = w.bar
    if facts is None or facts.act != w.dev_act:
        raise LoopRefused(f"the bar has not been measured on version {w.version}; call "
                          "crew_step (it measures the bar at the qa step) before giving "
                          "go", code="bar_unmeasured")
    if not facts.passed:
        failed = "; ".join(r.line() for r in facts.runs if not r.passed)
        raise LoopRefused(f"qa cannot give go: the bar is red on version {facts.version} "
                          f"({failed}); give no-go with the findings", code="bar_red")



def is_retry(w: Working, act: int, role: str, verdict: str, summary: str) -> bool:
    """Whether a report for act `act` repeats that accepted act (an idempotent retry: the
    caller answers the next contract and logs nothing); False when `act` is the act to
    come; `LoopRefused` (``stale``) when it names another act."""
    if act == w.acts + 1:
        return False
    record = next((r for r in w.trail if r.act == act), None)
    if (record is not None and record.role == role and record.verdict == verdict
            and record.summary == summary):
        return True
    raise LoopRefused(
        f"this report is for act {act}, but the loop is at act {w.acts + 1}"
        + (f" and act {act} was another report ({record.role}: {record.verdict})"
           if record is not None else "") + "; ask for the current contract (crew_step)",
        code="stale")


__all__ = ["check_bar", "check_report", "is_retry"]
