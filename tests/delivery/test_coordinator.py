"""Coordinator mode (SPEC C3–C6): each limit of C4 and each path of C6 tries the forbidden
move and checks the refusal, and that the ledger, the status and the contract are
unchanged (`assert_refused`); outcomes are exactly those of C5.

Where each rule is tried: C4.1 ``test_the_coordinator_cannot_give_a_verdict``,
``test_only_qa_and_the_reviewer_give_verdicts``, ``test_a_move_carries_no_verdict``;
C4.2 ``test_finalise_needs_a_qa_pass*``, ``test_finalise_needs_the_reviewer…``,
``test_a_verdict_counts_only_for_the_version_judged``; C4.3 ``test_launches_per_role…``,
``test_plan_revisions…``, ``test_at_the_step_cap…``, ``test_at_the_run_time_cap…``;
C4.4 ``test_a_report_after_the_deadline_is_refused``; C6 full
``test_finalise_needs_a_qa_pass``, send-back ``test_send_back_voids_the_old_pass``,
already-done ``test_already_done_closes_as_soon_as…``, quick fix
``test_quick_fix_*``, focused recheck ``test_focused_recheck_*``.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from crewbook import InvalidInputError, LoopRefused, check_conformance
from crewbook.delivery import (
    Answer,
    Built,
    ChangeSummary,
    CoordinatorLoop,
    Delegate,
    Expire,
    Fail,
    Finalise,
    Judgement,
    ManualClock,
    Plan,
    Question,
    Result,
    Revise,
    Task,
    parse_report,
)

from .conftest import CRITERIA, FILES, assert_refused, build_v1, step, verified

Make = Callable[..., CoordinatorLoop]


# ------------------------------------------------------------------ the full path
def test_full_path_ends_in_a_pull_request(coordinator: Make) -> None:
    loop = step(coordinator(), verified())
    act = loop.report(Finalise())
    assert act.finished
    assert act.finished_reason == "pull_request"
    assert loop.outcome is not None
    assert loop.outcome.version == 1
    line = loop.outcome.pr_line or ""
    assert line.startswith("Reviewer required: ")
    assert "path: coordinator mode, full" in line
    assert (loop.outcome.description or "").splitlines()[-1] == line
    kinds = [e["kind"] for e in loop.ledger.events]  # type: ignore[attr-defined]
    assert kinds == ["init", "plan", "act", "report", "act", "verdict", "act", "verdict",
                     "finish"]
    assert loop.status().finished_reason == "pull_request"


def test_contract_is_pure_and_names_the_next_actor(coordinator: Make) -> None:
    loop = coordinator()
    first = loop.contract()
    assert first == loop.contract()
    assert first.role == "architect"
    assert first.stage == "coordinate"
    assert "plan" in first.moves
    assert "delegate:developer" not in first.moves
    assert "delegate:explorer" in first.moves  # research at any stage (C1)
    loop.report(Plan(CRITERIA))
    act = loop.report(Delegate("developer", "add the CSV export"))
    assert act.role == "developer"
    assert act.expects
    assert "Built" in act.expects
    assert act.details["deadline"] == "2025-03-01T09:45:00+00:00"
    assert act.details["can_write"] is True
    assert len(loop.ledger.events) == 3  # type: ignore[attr-defined]


# ------------------------------------------------------------- C4.1 verdicts
def test_the_coordinator_cannot_give_a_verdict(coordinator: Make) -> None:
    loop = step(coordinator(), [*build_v1(), Delegate("qa", "verify version 1")])
    assert_refused(loop, Judgement("architect", "pass"), "not_allowed", "only qa, reviewer")


@pytest.mark.parametrize("role", ["developer", "web-tester", "explorer"])
def test_only_qa_and_the_reviewer_give_verdicts(coordinator: Make, role: str) -> None:
    loop = step(coordinator(), [*build_v1(), Delegate("qa", "verify version 1")])
    assert_refused(loop, Judgement(role, "pass"), "not_allowed")


def test_a_move_carries_no_verdict() -> None:
    with pytest.raises(LoopRefused) as info:
        parse_report({"move": "delegate", "role": "reviewer", "instructions": "ship it",
                      "verdict": "pass"})
    assert info.value.code == "not_allowed"
    assert "C4.1" in str(info.value)


def test_only_the_developer_builds(coordinator: Make) -> None:
    loop = step(coordinator(), [*build_v1(), Delegate("qa", "verify version 1")])
    assert_refused(loop, Built(("app/export.py",), role="qa"), "not_allowed", "C1")


# ------------------------------------------------------- C4.2 the exact version
def test_finalise_needs_a_qa_pass(coordinator: Make) -> None:
    loop = step(coordinator(), build_v1())
    assert_refused(loop, Finalise(), "version_not_verified", "version 1", "C4.2")


def test_finalise_needs_a_qa_pass_on_the_version_that_ships(coordinator: Make) -> None:
    loop = step(coordinator(), [
        *build_v1(), Delegate("qa", "verify version 1"), Judgement("qa", "pass"),
        Delegate("developer", "also trim the cells"), Built(("app/export.py",))])
    error = assert_refused(loop, Finalise(), "version_not_verified")
    assert "QA passed version 1" in str(error)
    assert "goes back to QA" in str(error)
    assert "delegate:reviewer" not in loop.contract().moves  # v2 is not QA-passed
    step(loop, [Delegate("qa", "verify version 2"), Judgement("qa", "pass"),
                Delegate("reviewer", "review version 2"), Judgement("reviewer", "approved")])
    loop.report(Finalise())
    assert loop.outcome is not None
    assert loop.outcome.version == 2


def test_finalise_needs_the_reviewer_when_review_is_required(coordinator: Make) -> None:
    loop = step(coordinator(), [*build_v1(), Delegate("qa", "verify"), Judgement("qa", "pass")])
    assert_refused(loop, Finalise(), "review_required", "'always'")


def test_the_reviewer_reviews_only_what_qa_passed(coordinator: Make) -> None:
    loop = step(coordinator(), build_v1())
    assert_refused(loop, Delegate("reviewer", "review version 1"), "qa_first")


def test_a_verdict_counts_only_for_the_version_judged(coordinator: Make) -> None:
    loop = step(coordinator(), [
        *build_v1(), Delegate("qa", "verify"), Judgement("qa", "fail", findings=("no header",)),
        Delegate("developer", "add the header"), Built(("app/export.py",)),
        Delegate("qa", "verify version 2")])
    assert_refused(loop, Judgement("qa", "pass", version=1), "wrong_version", "version 2")


def test_risk_based_minor_change_skips_the_reviewer(coordinator: Make) -> None:
    change = ChangeSummary.of({"app/export.py": (12, 3)})
    loop = step(coordinator(review="risk-based"), [
        Plan(CRITERIA), Delegate("developer", "add the export"),
        Built(("app/export.py",), change=change), Delegate("qa", "verify"),
        Judgement("qa", "pass")])
    loop.report(Finalise())
    assert loop.outcome is not None
    assert (loop.outcome.pr_line or "").startswith("Reviewer not required: minor, routine")


def test_risk_based_sensitive_change_still_needs_the_reviewer(coordinator: Make) -> None:
    change = ChangeSummary.of({"app/auth/tokens.py": (12, 3)})
    loop = step(coordinator(review="risk-based"), [
        Plan(CRITERIA), Delegate("developer", "fix"), Built(("app/auth/tokens.py",),
                                                            change=change),
        Delegate("qa", "verify"), Judgement("qa", "pass")])
    assert_refused(loop, Finalise(), "review_required", "authentication")


def test_risk_based_reads_every_file_the_branch_changed(coordinator: Make) -> None:
    """A later version's summary cannot hide what an earlier version changed: the
    policy judges the branch that ships (C7)."""
    loop = step(coordinator(review="risk-based"), [
        Plan(CRITERIA), Delegate("developer", "add"),
        Built(("app/auth/tokens.py",), change=ChangeSummary.of({"app/auth/tokens.py": (5, 0)})),
        Delegate("qa", "verify"), Judgement("qa", "fail", findings=("no header",)),
        Delegate("developer", "add the header"),
        Built(("app/export.py",), change=ChangeSummary.of({"app/export.py": (5, 0)})),
        Delegate("qa", "verify 2"), Judgement("qa", "pass")])
    assert_refused(loop, Finalise(), "review_required", "app/auth/tokens.py")
    assert loop.review_decision().changed_lines == 10


def test_risk_based_a_file_left_out_of_the_summary_is_unknown(coordinator: Make) -> None:
    loop = step(coordinator(review="risk-based"), [
        Plan(CRITERIA), Delegate("developer", "add"),
        Built(("app/export.py", "app/report.py"),
              change=ChangeSummary.of({"app/export.py": (5, 0)})),
        Delegate("qa", "verify"), Judgement("qa", "pass")])
    assert_refused(loop, Finalise(), "review_required", "line counts unknown for app/report.py")


def test_risk_based_a_whole_branch_summary_is_taken_as_it_is(coordinator: Make) -> None:
    loop = step(coordinator(review="risk-based"), [
        Plan(CRITERIA), Delegate("developer", "add"),
        Built(("app/export.py",), change=ChangeSummary.of({"app/export.py": (5, 0)})),
        Delegate("qa", "verify"), Judgement("qa", "fail", findings=("no header",)),
        Delegate("developer", "add the header"),
        Built(("app/export.py",), change=ChangeSummary.of({"app/export.py": (9, 1)})),
        Delegate("qa", "verify 2"), Judgement("qa", "pass")])
    loop.report(Finalise())
    assert loop.outcome is not None
    assert loop.outcome.review is not None
    assert loop.outcome.review.changed_lines == 10  # the latest summary, not 5 + 10
    assert (loop.outcome.pr_line or "").startswith("Reviewer not required")


def test_a_started_reviewer_stays_required(coordinator: Make) -> None:
    change = ChangeSummary.of({"app/export.py": (12, 3)})
    loop = step(coordinator(review="risk-based"), [
        Plan(CRITERIA), Delegate("developer", "add"), Built(("app/export.py",), change=change),
        Delegate("qa", "verify"), Judgement("qa", "pass"), Delegate("reviewer", "review"),
        Judgement("reviewer", "changes", findings=("rename the column",)),
        Delegate("developer", "rename"), Built(("app/export.py",), change=change),
        Delegate("qa", "verify 2"), Judgement("qa", "pass")])
    assert_refused(loop, Finalise(), "review_required", "a reviewer already started")


# ------------------------------------------------------------------ C4.3 caps
def test_launches_per_role_are_capped(coordinator: Make) -> None:
    loop = step(coordinator(limits={"launches": {"developer": 1}}), [
        *build_v1(), Delegate("qa", "verify"), Judgement("qa", "fail", findings=("x",))])
    assert "delegate:developer" not in loop.contract().moves
    assert_refused(loop, Delegate("developer", "fix x"), "cap_reached", "developer was "
                   "launched 1 times")
    loop.report(Fail("the developer could not fix x within its launches"))
    assert loop.outcome is not None
    assert loop.outcome.kind == "failed"


def test_plan_revisions_are_capped(coordinator: Make) -> None:
    loop = step(coordinator(limits={"plan_revisions": 1}),
                [Plan(CRITERIA), Revise(("the report downloads as CSV",))])
    assert "revise" not in loop.contract().moves
    assert_refused(loop, Revise(CRITERIA), "cap_reached", "plan_revisions 1")


def test_at_the_step_cap_only_finalise_or_fail_remain(coordinator: Make) -> None:
    loop = step(coordinator(limits={"steps": 5}), [
        *build_v1(), Delegate("qa", "verify"), Judgement("qa", "pass")])
    assert loop.contract().moves == ("fail",)  # review is required: finalise is not open
    error = assert_refused(loop, Delegate("reviewer", "review"), "cap_reached", "steps 5/5")
    assert "finalise or fail" in str(error)
    assert_refused(loop, Finalise(), "review_required")
    loop.report(Fail("out of steps before the review"))
    assert loop.outcome is not None
    assert loop.outcome.kind == "failed"


def test_at_the_run_time_cap_only_finalise_or_fail_remain(coordinator: Make) -> None:
    loop = step(coordinator(limits={"duration_minutes": 30, "wait_minutes": 60}), [
        Plan(CRITERIA), Delegate("developer", "add"), Built(FILES, duration_ms=31 * 60_000)])
    assert_refused(loop, Delegate("qa", "verify"), "cap_reached", "run time (min) 31/30")
    assert_refused(loop, Answer("yes", "because"), "cap_reached")
    loop.report(Fail("out of time"))
    assert loop.status().finished_reason == "failed"


def test_an_agent_report_in_flight_at_the_cap_is_still_taken(coordinator: Make) -> None:
    loop = step(coordinator(limits={"steps": 4}), [*build_v1(), Delegate("qa", "verify")])
    loop.report(Judgement("qa", "pass"))  # the 5th act: a result, not a decision
    assert loop.contract().moves == ("fail",)


# ----------------------------------------------------------- C4.4 wait deadlines
def test_a_report_after_the_deadline_is_refused(coordinator: Make, clock: ManualClock) -> None:
    loop = step(coordinator(limits={"wait_minutes": 30}),
                [Plan(CRITERIA), Delegate("developer", "add")])
    assert_refused(loop, Built(FILES, duration_ms=31 * 60_000), "wait_expired", "09:30")
    assert_refused(loop, Expire(), "not_expired", "runs until 09:30")
    clock.advance(minutes=31)
    act = loop.report(Expire())
    assert act.role == "architect"
    assert any("deadline" in f for f in act.feedback)
    assert loop.ledger.events[-1]["kind"] == "error"  # type: ignore[attr-defined]
    assert_refused(loop, Built(FILES), "wrong_role")  # the late report no longer counts
    loop.report(Delegate("developer", "add the export, smaller steps"))  # the coordinator decides


def test_the_coordinator_waits_while_an_agent_works(coordinator: Make) -> None:
    loop = step(coordinator(), [Plan(CRITERIA), Delegate("developer", "add")])
    assert_refused(loop, Delegate("qa", "verify"), "waiting", "developer is working")
    assert_refused(loop, Fail("impatient"), "waiting")
    assert_refused(loop, Judgement("qa", "pass"), "wrong_role", "one agent at a time")


# ------------------------------------------------------------------ questions
def test_questions_get_a_decision_and_a_reason(coordinator: Make, clock: ManualClock) -> None:
    loop = step(coordinator(), [Plan(CRITERIA), Delegate("developer", "add")])
    act = loop.report(Question("developer", "semicolon or comma?", duration_ms=40 * 60_000))
    assert act.role == "architect"
    assert act.moves[0] == "answer"
    assert_refused(loop, Delegate("qa", "verify"), "question_pending", "semicolon")
    assert_refused(loop, Built(FILES), "wrong_role", "answering developer's question")
    assert_refused(loop, Answer("comma", " "), "bad_move")
    act = loop.report(Answer("comma", "the spec's example uses commas"))
    assert act.role == "developer"
    assert act.details["deadline"] == "2025-03-01T10:25:00+00:00"  # a fresh wait
    assert loop.status().journal[-1].kind == "answer"
    loop.report(Built(FILES, duration_ms=44 * 60_000))  # within the new deadline


def test_answer_without_question_is_refused(coordinator: Make) -> None:
    assert_refused(step(coordinator(), [Plan(CRITERIA)]), Answer("yes", "because"), "bad_move")


# -------------------------------------------------------------- moves and rules
def test_plan_first_and_with_criteria(coordinator: Make) -> None:
    loop = coordinator()
    assert_refused(loop, Delegate("developer", "start"), "bad_move", "plan first")
    assert_refused(loop, Plan(()), "bad_move", "acceptance criteria")
    loop.report(Delegate("explorer", "where is the export button?"))
    loop.report(Result("explorer", "in app/views/report.py", ("ReportView.export",)))
    loop.report(Plan(CRITERIA))
    assert_refused(loop, Plan(CRITERIA), "bad_move", "Revise")
    assert_refused(loop, Delegate("architect", "plan"), "bad_move")
    assert_refused(loop, Delegate("designer", "draw"), "bad_move")
    assert_refused(loop, Delegate("developer", "  "), "bad_move")


def test_fail_needs_a_reason(coordinator: Make) -> None:
    loop = coordinator()
    assert_refused(loop, Fail(""), "bad_move", "reason")
    loop.report(Fail("the description asks for two incompatible formats"))
    assert loop.outcome is not None
    assert loop.outcome.kind == "failed"
    assert loop.outcome.reason.startswith("the description")
    with pytest.raises(LoopRefused) as info:
        loop.report(Plan(CRITERIA))
    assert info.value.code == "finished"


def test_merge_conflicts_never_run_in_coordinator_mode() -> None:
    with pytest.raises(InvalidInputError, match="standard mode"):
        CoordinatorLoop(Task(description="resolve the conflict", kind="merge-conflict"))


# ------------------------------------------------------------------ C6 paths
def test_send_back_voids_the_old_pass(coordinator: Make) -> None:
    loop = step(coordinator(), [
        *build_v1(), Delegate("qa", "verify"), Judgement("qa", "pass"),
        Delegate("reviewer", "review"),
        Judgement("reviewer", "changes", findings=("name the file report.csv",))])
    act = loop.contract()
    assert "to forward to the developer: name the file report.csv" in act.feedback
    act = loop.report(Delegate("developer", "rename", fixes=("use report.csv",)))
    assert "finding: name the file report.csv" in act.feedback
    loop.report(Built(("app/export.py",)))
    assert loop.status().counters["sent_back"] == 1
    assert_refused(loop, Finalise(), "version_not_verified", "QA passed version 1")
    assert_refused(loop, Delegate("reviewer", "review 2"), "qa_first")


def test_already_done_closes_without_a_pull_request(coordinator: Make) -> None:
    loop = step(coordinator(), [
        Plan(CRITERIA, path="already-done"), Delegate("qa", "check the code as it is"),
        Judgement("qa", "pass"), Delegate("reviewer", "confirm"),
        Judgement("reviewer", "approved")])
    loop.report(Finalise())
    assert loop.outcome is not None
    assert loop.outcome.kind == "already_done"
    assert loop.outcome.pr_line is None
    assert loop.outcome.version == 0
    assert loop.ledger.events[-1]["verdict"] == "already_done"  # type: ignore[attr-defined]


def test_already_done_risk_based_needs_no_reviewer(coordinator: Make) -> None:
    loop = step(coordinator(review="risk-based"), [
        Plan(CRITERIA, path="already-done"), Delegate("qa", "check"), Judgement("qa", "pass")])
    loop.report(Finalise())
    assert loop.outcome is not None
    assert loop.outcome.kind == "already_done"
    assert loop.outcome.review is not None
    assert loop.outcome.review.codes == ("empty_change",)


def test_already_done_closes_as_soon_as_the_run_changes_the_code(coordinator: Make) -> None:
    loop = step(coordinator(), [
        Plan(CRITERIA, path="already-done"), Delegate("qa", "check"), Judgement("qa", "pass"),
        Delegate("developer", "one tweak after all"), Built(("app/export.py",))])
    assert loop.status().details["path"] == "full"
    assert loop.ledger.events[-1]["kind"] == "note"  # type: ignore[attr-defined]
    assert_refused(loop, Finalise(), "version_not_verified", "QA passed version 0")
    assert_refused(loop, Revise(CRITERIA, path="already-done"), "path_closed", "version 1")


def test_quick_fix_is_off_by_default(coordinator: Make) -> None:
    assert_refused(coordinator(), Plan(CRITERIA, path="quick-fix", files=("app/export.py",)),
                   "path_off", "quick_fix=True")


def test_quick_fix_flags_edits_outside_its_files(coordinator: Make) -> None:
    loop = step(coordinator(quick_fix=True), [
        Plan(("the header row is written",), path="quick-fix", files=("app/export.py",))])
    assert_refused(loop, Plan(CRITERIA, path="quick-fix"), "bad_move")
    act = loop.report(Delegate("developer", "write the header row"))
    assert act.budget["steps"] == 15
    assert_refused(loop, Built(("app/export.py",), steps=16), "over_budget", "budget is 15")
    loop.report(Built(("app/export.py", "app/settings.py"), steps=9))
    act = loop.report(Delegate("qa", "verify"))
    assert act.details["flagged"] == ["app/settings.py"]
    assert any("app/settings.py" in f for f in act.feedback)
    step(loop, [Judgement("qa", "pass")])
    act = loop.report(Delegate("reviewer", "review"))
    assert act.details["flagged"] == ["app/settings.py"]


def test_quick_fix_needs_named_files(coordinator: Make) -> None:
    assert_refused(coordinator(quick_fix=True), Plan(CRITERIA, path="quick-fix"), "bad_move",
                   "names the files")


def test_focused_recheck_is_off_by_default(coordinator: Make) -> None:
    loop = step(coordinator(), [
        *build_v1(), Delegate("qa", "verify"), Judgement("qa", "fail", findings=("no header",)),
        Delegate("developer", "add it"), Built(("app/export.py",))])
    assert_refused(loop, Delegate("qa", "recheck", focus=True), "path_off")


def test_focused_recheck_starts_from_the_finding(coordinator: Make) -> None:
    loop = step(coordinator(focused_recheck=True), build_v1())
    assert_refused(loop, Delegate("qa", "recheck", focus=True), "bad_move", "no")
    step(loop, [Delegate("qa", "verify"), Judgement("qa", "fail", findings=("no header",)),
                Delegate("developer", "add it"), Built(("app/export.py",))])
    assert_refused(loop, Delegate("explorer", "look", focus=True), "bad_move")
    act = loop.report(Delegate("qa", "recheck the header", focus=True))
    assert act.details["focus"] == ["no header"]
    assert "whole version" in (act.expects or "")
    assert_refused(loop, Judgement("qa", "pass", version=1), "wrong_version")
    loop.report(Judgement("qa", "pass"))
    assert loop.status().details["gates"][0].startswith("review is required")


# ---------------------------------------------------------- state, ledger, time
def test_snapshot_and_restore(coordinator: Make) -> None:
    loop = step(coordinator(), verified())
    snap = loop.snapshot()
    loop.report(Finalise())
    act = loop.restore(snap)
    assert act.role == "architect"
    assert not loop.is_finished()
    loop.report(Fail("changed our mind"))
    assert loop.outcome is not None
    assert loop.outcome.kind == "failed"
    events = loop.ledger.events  # type: ignore[attr-defined]
    runs = list(dict.fromkeys(e["run"] for e in events))
    assert len(runs) == 2  # the rewind forked the history
    old = [e["kind"] for e in events if e["run"] == runs[0]]
    new = [e["kind"] for e in events if e["run"] == runs[1]]
    assert old[-1] == "finish"
    assert new[-2:] == ["rewind", "finish"]
    assert new[:-2] == old[:-1]  # the forked run starts with the history up to the snapshot
    assert check_conformance(loop.ledger.frame()).empty  # type: ignore[attr-defined]


def test_task_time_follows_reported_durations(coordinator: Make) -> None:
    loop = step(coordinator(), [Plan(CRITERIA, duration_ms=5 * 60_000),
                                Delegate("developer", "add"),
                                Built(FILES, duration_ms=3 * 3_600_000 // 4)])
    events = loop.ledger.events  # type: ignore[attr-defined]
    assert events[0]["ts"] == "2025-03-01T09:00:00+00:00"
    assert events[1]["ts"] == "2025-03-01T09:05:00+00:00"
    assert events[-1]["ts"] == "2025-03-01T09:50:00+00:00"
    assert events[1]["duration_ms"] == 300_000
    caps = {c.name: c for c in loop.status().caps}
    assert caps["run time (min)"].used == 50


def test_bad_reports_are_refused(coordinator: Make) -> None:
    loop = coordinator()
    before = loop.status().to_dict()
    with pytest.raises(LoopRefused) as info:
        loop.report("plan please")  # type: ignore[arg-type]
    assert info.value.code == "bad_report"
    assert loop.status().to_dict() == before
    loop.report(parse_report({"move": "plan", "criteria": list(CRITERIA)}))
    loop.report(parse_report({"move": "delegate", "role": "developer", "instructions": "go"}))
    loop.report(parse_report({"report": "built", "files": ["app/export.py"],
                              "change": {"lines": {"app/export.py": [4, 1]}}}))
    assert loop.status().counters["version"] == 1


def test_unsafe_paths_are_refused(coordinator: Make) -> None:
    loop = step(coordinator(), [Plan(CRITERIA), Delegate("developer", "add")])
    assert_refused(loop, Built(("../outside.py",)), "unsafe_path")


def test_no_change_keeps_the_version(coordinator: Make) -> None:
    loop = step(coordinator(), [Plan(CRITERIA), Delegate("developer", "check"), Built(())])
    assert loop.status().counters["version"] == 0


def test_each_init_event_carries_its_own_copy_of_the_limits(coordinator: Make) -> None:
    """The limits' dump is made once per limits object (issue 25), yet every run's
    ``init`` gets its own dict, equal to ``model_dump()``, changed by nobody else."""
    first, second = coordinator(limits={"launches": {"qa": 4}}), None
    first.report(Plan(CRITERIA))
    second = CoordinatorLoop(first.task, clock=ManualClock())
    second.report(Plan(CRITERIA))
    one = first.ledger.events[0]["payload"]["limits"]  # type: ignore[attr-defined]
    two = second.ledger.events[0]["payload"]["limits"]  # type: ignore[attr-defined]
    assert one == two == first.task.limits.model_dump()
    assert one["launches"] == {"qa": 4}
    one["launches"]["qa"] = 99
    third = CoordinatorLoop(first.task, clock=ManualClock())
    third.report(Plan(CRITERIA))
    assert third.ledger.events[0]["payload"]["limits"]["launches"] == {"qa": 4}  # type: ignore[attr-defined]
    assert two["launches"] == {"qa": 4}
