"""The coordinator's limits held against an adversarial driver (C4–C6): durations that
cannot be, the quick fix's budget and files, focused rechecks on a new build only, the
ledgers `check_conformance` must reject, and rewinds that fork the history."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from crewbook import check_conformance
from crewbook.delivery import (
    Built,
    CoordinatorLoop,
    Delegate,
    DeliveryLoop,
    Finalise,
    Judgement,
    Plan,
    Revise,
)

from .conftest import CRITERIA, FILES, assert_refused, build_v1, step, verified

Make = Callable[..., CoordinatorLoop]


@pytest.mark.parametrize(("ms", "words"), [(-3_600_000, "negative"),
                                           (10**12, "more than a week"),
                                           (1.5, "whole number")])
def test_durations_that_cannot_be_are_refused(coordinator: Make, ms: Any, words: str) -> None:
    loop = step(coordinator(), [Plan(CRITERIA), Delegate("developer", "add it")])
    assert_refused(loop, Built(FILES, duration_ms=ms), "bad_report", words)
    assert_refused(loop, Delegate("qa", "verify", duration_ms=ms), "bad_report", words)


def test_a_negative_duration_cannot_rewind_past_the_run_time_cap(coordinator: Make) -> None:
    loop = step(coordinator(limits={"duration_minutes": 60, "wait_minutes": 300}),
                [Plan(CRITERIA), Delegate("developer", "add it"),
                 Built(FILES, duration_ms=59 * 60_000)])
    used = {c.name: c.used for c in loop.status().caps}["run time (min)"]
    assert used == 59
    assert_refused(loop, Delegate("qa", "verify", duration_ms=-50 * 60_000), "bad_report")


def test_the_quick_fix_budget_needs_the_steps(coordinator: Make) -> None:
    loop = step(coordinator(quick_fix=True), [
        Plan(("the header row is written",), path="quick-fix", files=("app/export.py",)),
        Delegate("developer", "write the header row")])
    assert_refused(loop, Built(("app/export.py",)), "over_budget", "budget of 15 steps")
    loop.report(Built(("app/export.py",), steps=4))
    assert loop.ledger.events[-1]["payload"]["steps"] == 4  # type: ignore[attr-defined]


def test_revising_into_a_quick_fix_flags_files_already_edited(coordinator: Make) -> None:
    loop = step(coordinator(quick_fix=True), [*build_v1()])
    act = loop.report(Revise(("the header row is written",), path="quick-fix",
                             files=("app/export.py",)))
    assert "already edited outside the quick fix's files: tests/test_export.py" in \
        act.feedback, act.feedback
    act = loop.report(Delegate("qa", "verify"))
    assert act.details["flagged"] == ["tests/test_export.py"]
    plan = [e for e in loop.ledger.events if e["kind"] == "plan"]  # type: ignore[attr-defined]
    assert plan[-1]["payload"]["outside_plan"] == ["tests/test_export.py"]


def test_a_focused_recheck_needs_a_new_build(coordinator: Make) -> None:
    loop = step(coordinator(focused_recheck=True), [
        *build_v1(), Delegate("qa", "verify"), Judgement("qa", "fail", findings=("no header",))])
    assert_refused(loop, Delegate("qa", "recheck", focus=True), "bad_move",
                   "version 1 is the one that failed")
    step(loop, [Delegate("developer", "add it"), Built(("app/export.py",))])
    act = loop.report(Delegate("qa", "recheck the header", focus=True))
    assert act.details["focus"] == ["no header"]


# ------------------------------------------------------------- illegal ledgers
def _ledger(tmp_path: Path, loop: DeliveryLoop, edit: Callable[[list[dict[str, Any]]],
                                                                    None]) -> list[str]:
    events = [dict(e) for e in loop.ledger.events]  # type: ignore[attr-defined]
    assert check_conformance(loop.ledger.frame()).empty  # type: ignore[attr-defined]
    edit(events)
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps({"v": 1, **e}) + "\n" for e in events))
    return [str(c) for c in check_conformance(path)["code"]]


def test_a_pull_request_without_the_required_approval(coordinator: Make,
                                                      tmp_path: Path) -> None:
    loop = step(coordinator(), [*verified(), Finalise()])

    def drop_approval(events: list[dict[str, Any]]) -> None:
        events[:] = [e for e in events if not (e["kind"] == "verdict"
                                                and e["role"] == "reviewer")]
        for i, e in enumerate(events):
            e["seq"] = i

    assert _ledger(tmp_path, loop, drop_approval) == ["review_missing"]


def test_a_report_after_the_wait_deadline(coordinator: Make, tmp_path: Path) -> None:
    loop = step(coordinator(), [*verified(), Finalise()])

    def late(events: list[dict[str, Any]]) -> None:
        i = next(i for i, e in enumerate(events) if e["kind"] == "report")
        for e in events[i:]:  # the developer answers three hours after its launch
            e["ts"] = (datetime_of(e["ts"]) + timedelta(hours=3)).isoformat()

    assert _ledger(tmp_path, loop, late) == ["wait_expired"]


def test_already_done_after_a_version_was_built(coordinator: Make, tmp_path: Path) -> None:
    loop = step(coordinator(), [*verified(), Finalise()])

    def already(events: list[dict[str, Any]]) -> None:
        events[-1]["verdict"] = "already_done"

    assert "path_closed" in _ledger(tmp_path, loop, already)


def test_a_pass_before_a_later_fail_does_not_count(coordinator: Make, tmp_path: Path) -> None:
    loop = step(coordinator(), [*verified(), Finalise()])

    def fail_after(events: list[dict[str, Any]]) -> None:
        i = next(i for i, e in enumerate(events) if e["kind"] == "verdict"
                 and e["role"] == "qa")
        events.insert(i + 1, {**events[i], "verdict": "fail"})
        for n, e in enumerate(events):
            e["seq"] = n

    assert _ledger(tmp_path, loop, fail_after) == ["finalise_unverified"]


def test_rewinding_forks_a_run_that_passes_its_own_rules(coordinator: Make) -> None:
    loop = step(coordinator(), verified())
    snap = loop.snapshot()
    loop.report(Finalise())
    loop.restore(snap)
    loop.report(Finalise())
    frame = loop.ledger.frame()  # type: ignore[attr-defined]
    assert check_conformance(frame).empty
    runs = list(dict.fromkeys(frame["run"].astype(str)))
    assert len(runs) == 2
    rewind = frame[frame["kind"].astype(str) == "rewind"].iloc[0]
    assert rewind["run"] == runs[1]
    assert rewind["payload"]["from_run"] == runs[0]


def datetime_of(text: str) -> datetime:
    return datetime.fromisoformat(text)
