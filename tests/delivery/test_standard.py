"""Standard mode (SPEC C2): fixed order, send-backs to the developer, caps end the task as
failed with the reason, no coordinator; `start_task` picks the mode."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from crewbook.delivery import (
    Answer,
    Built,
    ChangeSummary,
    CoordinatorLoop,
    Delegate,
    Expire,
    Finalise,
    Judgement,
    ManualClock,
    Plan,
    Question,
    StandardLoop,
    Task,
    replay,
    start_task,
)

from .conftest import CRITERIA, FILES, assert_refused, make_task, step

Make = Callable[..., StandardLoop]


def test_fixed_order_to_a_pull_request(standard: Make) -> None:
    loop = standard()
    order = [loop.contract().role]
    for report in (Plan(CRITERIA), Built(FILES), Judgement("qa", "pass")):
        order.append(loop.report(report).role)
    assert order == ["architect", "developer", "qa", "reviewer"]
    loop.report(Judgement("reviewer", "approved"))
    assert loop.outcome is not None
    assert loop.outcome.kind == "pull_request"
    assert "standard mode, full" in (loop.outcome.pr_line or "")
    acts = [(e["kind"], e.get("role")) for e in loop.ledger.events  # type: ignore[attr-defined]
            if e["kind"] == "act"]
    assert [r for _, r in acts] == ["architect", "developer", "qa", "reviewer"]


@pytest.mark.parametrize(("judge", "verdict"), [("qa", "fail"), ("reviewer", "changes")])
def test_a_failed_check_goes_back_to_the_developer(standard: Make, judge: str,
                                                   verdict: str) -> None:
    loop = step(standard(), [Plan(CRITERIA), Built(FILES), Judgement("qa", "pass")]
                if judge == "reviewer" else [Plan(CRITERIA), Built(FILES)])
    act = loop.report(Judgement(judge, verdict, findings=("the header is missing",)))
    assert act.role == "developer"
    assert act.attempt == 2
    assert "fix: the header is missing" in act.feedback
    assert loop.report(Built(("app/export.py",))).role == "qa"
    assert loop.status().counters["sent_back"] == 1


def test_a_launch_cap_fails_the_task_with_the_reason(standard: Make) -> None:
    loop = step(standard(limits={"launches": {"developer": 1}}), [Plan(CRITERIA), Built(FILES)])
    loop.report(Judgement("qa", "fail", findings=("no header",)))
    assert loop.outcome is not None
    assert loop.outcome.kind == "failed"
    assert "developer cannot be launched again" in loop.outcome.reason
    assert "developer launches 1/1" in loop.outcome.reason
    assert [e["kind"] for e in loop.ledger.events[-2:]] == ["escalate", "finish"]  # type: ignore[attr-defined]


def test_the_step_cap_fails_the_task(standard: Make) -> None:
    loop = step(standard(limits={"steps": 2}), [Plan(CRITERIA)])
    loop.report(Built(FILES))
    assert loop.outcome is not None
    assert "steps 2/2" in loop.outcome.reason


def test_there_is_no_coordinator(standard: Make) -> None:
    loop = step(standard(), [Plan(CRITERIA)])
    for move in (Delegate("qa", "verify"), Finalise(), Answer("yes", "because")):
        assert_refused(loop, move, "no_coordinator", "fixed order")
    assert_refused(loop, Question("developer", "comma?"), "no_coordinator")
    assert_refused(loop, Plan(CRITERIA), "wrong_role")


def test_standard_mode_runs_the_full_path_only(standard: Make) -> None:
    assert_refused(standard(), Plan(CRITERIA, path="already-done"), "bad_move", "fixed order")


def test_risk_based_minor_change_finishes_after_qa(standard: Make) -> None:
    change = ChangeSummary.of({"app/export.py": (10, 2)})
    loop = step(standard(review="risk-based"), [Plan(CRITERIA),
                                                Built(("app/export.py",), change=change)])
    loop.report(Judgement("qa", "pass"))
    assert loop.outcome is not None
    assert loop.outcome.kind == "pull_request"
    assert (loop.outcome.pr_line or "").startswith("Reviewer not required")


def test_an_expired_wait_relaunches_the_role(standard: Make, clock: ManualClock) -> None:
    loop = step(standard(limits={"wait_minutes": 10}), [Plan(CRITERIA)])
    assert_refused(loop, Built(FILES, duration_ms=11 * 60_000), "wait_expired")
    clock.advance(minutes=11)
    act = loop.report(Expire())
    assert act.role == "developer"
    assert act.attempt == 2
    assert "relaunched" in act.details["instructions"]


def test_an_expired_wait_at_the_cap_fails(standard: Make, clock: ManualClock) -> None:
    loop = step(standard(limits={"wait_minutes": 10, "launches": {"developer": 1}}),
                [Plan(CRITERIA)])
    clock.advance(minutes=11)
    loop.report(Expire())
    assert loop.outcome is not None
    assert loop.outcome.kind == "failed"


def test_start_task_picks_the_mode() -> None:
    assert isinstance(start_task("add CSV export"), CoordinatorLoop)
    assert isinstance(start_task(make_task(mode="standard")), StandardLoop)
    assert isinstance(start_task("add CSV export", coordinator_available=False), StandardLoop)
    conflict = Task(description="resolve the merge conflict", kind="merge-conflict")
    assert isinstance(start_task(conflict), StandardLoop)


def test_replay_and_the_same_task_in_both_modes() -> None:
    clock = ManualClock()
    loop = replay(make_task(mode="standard"), [
        {"move": "plan", "criteria": list(CRITERIA)},
        {"report": "built", "files": list(FILES)},
        {"report": "judgement", "role": "qa", "verdict": "pass"},
        {"report": "judgement", "role": "reviewer", "verdict": "approved"}], clock=clock)
    assert loop.outcome is not None
    assert loop.outcome.kind == "pull_request"


def test_no_change_in_standard_mode_is_already_done(standard: Make) -> None:
    loop = step(standard(), [Plan(CRITERIA), Built(()), Judgement("qa", "pass"),
                             Judgement("reviewer", "approved")])
    assert loop.outcome is not None
    assert loop.outcome.kind == "already_done"
