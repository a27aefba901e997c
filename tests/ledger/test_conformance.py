"""Ledger conformance (issue 12): each rule flagged on a hand-made bad ledger, and no
problem on the ledgers the engines write (pipeline, standard, coordinator) or on
imported spec-kit runs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from crewbook.commands import main
from crewbook.delivery import (
    Built,
    CoordinatorLoop,
    Delegate,
    Finalise,
    Judgement,
    ManualClock,
    Plan,
    StandardLoop,
)
from crewbook.ledger import Ledger, read_ledger
from crewbook.ledger.conformance import (
    CONFORMANCE_COLUMNS,
    LOOP_RULES,
    LoopRules,
    check_conformance,
    conformance_problems,
)
from delivery.conftest import CRITERIA, FILES, build_v1, make_task, verified

DATA = Path(__file__).parents[1] / "data" / "ledgers"
LIMITS = {"launches": {}, "default_launches": 3, "plan_revisions": 1, "steps": 60,
          "duration_minutes": 240, "wait_minutes": 45, "agent_steps": None,
          "quick_fix_steps": 15}


def ledger(tmp_path: Path, events: list[dict[str, Any]], loop: str = "coordinator") -> Path:
    """A ledger file of `events` (seq numbered in order unless given, a minute apart)."""
    path = tmp_path / "run.jsonl"
    lines = []
    for i, event in enumerate(events):
        full = {"v": 1, "ts": f"2025-03-01T09:{i:02d}:00Z", "run": "r-1", "seq": i,
                "loop": loop, **event}
        lines.append(json.dumps(full))
    path.write_text("\n".join(lines) + "\n")
    return path


def coordinator_run(*middle: dict[str, Any], finish: dict[str, Any] | None = None,
                    limits: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """init, plan, developer built v1, QA passes v1, [middle], finish (pull request, v1)."""
    return [
        {"kind": "init", "payload": {"limits": limits or LIMITS}},
        {"kind": "plan", "role": "architect", "version": 0, "payload": {"revision": 0}},
        {"kind": "act", "role": "developer", "version": 0},
        {"kind": "report", "role": "developer", "verdict": "done", "version": 1},
        {"kind": "act", "role": "qa", "version": 1},
        {"kind": "verdict", "role": "qa", "verdict": "pass", "version": 1},
        *middle,
        finish or {"kind": "finish", "role": "architect", "verdict": "pull_request",
                   "version": 1},
    ]


def codes(frame: pd.DataFrame) -> list[tuple[int | None, str]]:
    return [(None if pd.isna(s) else int(s), str(c)) for s, c in zip(frame["seq"],
                                                                       frame["code"],
                                                                       strict=True)]


def test_a_conforming_hand_made_run_has_no_problem(tmp_path: Path) -> None:
    frame = check_conformance(ledger(tmp_path, coordinator_run()))
    assert list(frame.columns) == list(CONFORMANCE_COLUMNS)
    assert frame.empty
    assert str(frame["seq"].dtype) == "Int64"
    assert str(frame["code"].dtype) == "category"


def _seq_gap(events: list[dict[str, Any]]) -> None:
    for i in range(3, len(events)):
        events[i]["seq"] = i + 1  # 3 is missing


def _seq_duplicate(events: list[dict[str, Any]]) -> None:
    for i in range(4, len(events)):
        events[i]["seq"] = i - 1  # 3 twice


def _time_backwards(events: list[dict[str, Any]]) -> None:
    events[4]["ts"] = "2025-03-01T08:00:00Z"


def _late_act(events: list[dict[str, Any]]) -> None:
    events.append({"kind": "act", "role": "developer", "version": 1})


def _verdict_by_architect(events: list[dict[str, Any]]) -> None:
    events.insert(6, {"kind": "verdict", "role": "architect", "verdict": "approved",
                      "version": 1})


def _finalise_unverified(events: list[dict[str, Any]]) -> None:
    events.insert(6, {"kind": "act", "role": "developer", "version": 1})
    events.insert(7, {"kind": "report", "role": "developer", "verdict": "done", "version": 2})
    events[-1]["version"] = 2


def _unexpected_report(events: list[dict[str, Any]]) -> None:
    events[3]["role"] = "reviewer"


def _unknown_role(events: list[dict[str, Any]]) -> None:
    events[2]["role"] = "intern"
    events[3]["role"] = "intern"


def _too_many_launches(events: list[dict[str, Any]]) -> None:
    events[0]["payload"] = {"limits": {**LIMITS, "launches": {"qa": 2}}}
    for _ in range(2):
        events.insert(6, {"kind": "act", "role": "qa", "version": 1})
        events.insert(7, {"kind": "verdict", "role": "qa", "verdict": "pass", "version": 1})


def _too_many_revisions(events: list[dict[str, Any]]) -> None:
    for revision in (1, 2):
        events.insert(2, {"kind": "plan", "role": "architect", "version": 0,
                          "payload": {"revision": revision}})


@pytest.mark.parametrize(("break_it", "expected"), [
    (_seq_gap, [(4, "seq_gap")]),
    (_seq_duplicate, [(3, "seq_duplicate")]),
    (_time_backwards, [(4, "time_backwards")]),
    (_late_act, [(7, "act_after_finish")]),
    (_verdict_by_architect, [(6, "verdict_not_allowed"), (6, "unexpected_role")]),
    (_finalise_unverified, [(8, "finalise_unverified")]),
    (_unexpected_report, [(3, "unexpected_role")]),
    (_unknown_role, [(2, "unexpected_role"), (3, "unexpected_role")]),
    (_too_many_launches, [(8, "cap_exceeded")]),
    (_too_many_revisions, [(3, "cap_exceeded")]),
])
def test_each_rule_is_flagged_on_a_hand_made_bad_ledger(
        tmp_path: Path, break_it: Callable[[list[dict[str, Any]]], None],
        expected: list[tuple[int, str]]) -> None:
    events = coordinator_run()
    break_it(events)
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps({
        "v": 1, "ts": f"2025-03-01T09:{i:02d}:00Z", "run": "r-1", "seq": i,
        "loop": "coordinator", **e}) + "\n" for i, e in enumerate(events)))
    frame = check_conformance(path)
    assert codes(frame) == expected, frame.to_string()
    assert all(frame["message"].str.len() > 20)


def test_the_steps_cap(tmp_path: Path) -> None:
    events = coordinator_run(limits={**LIMITS, "steps": 2})
    for i, event in enumerate(events):
        event.setdefault("payload", {})["act"] = i
    frame = check_conformance(ledger(tmp_path, events))
    assert codes(frame) == [(3, "cap_exceeded")]
    assert "at the cap only finalise or fail remain" in frame["message"][0]


def test_a_pipeline_run_is_checked_against_its_stages(tmp_path: Path) -> None:
    init = {"kind": "init", "payload": {"start": "write", "stages": ["write", "review"],
                                        "caps": {"write": 1, "review": 0}}}
    events = [init,
              {"kind": "report", "role": "write", "verdict": "done", "attempt": 1},
              {"kind": "transition", "stage": "review", "attempt": 1},
              {"kind": "verdict", "role": "write", "verdict": "approved", "attempt": 1},
              {"kind": "transition", "stage": "done"},
              {"kind": "finish", "verdict": "done"}]
    frame = check_conformance(ledger(tmp_path, events, loop="pipeline"))
    assert codes(frame) == [(3, "unexpected_role")]


def _review_loop(rounds: int, failures: int) -> list[dict[str, Any]]:
    """A write ⇄ review run: `rounds` send-backs to ``write`` (whose max_retries is 1),
    then `failures` failed tries of ``write`` in its last visit."""
    events: list[dict[str, Any]] = [
        {"kind": "init", "payload": {"start": "write", "stages": ["write", "review"],
                                     "caps": {"write": 1, "review": 0}}}]
    attempts = {"write": 0, "review": 0}

    def visit(stage: str, verdict: str = "done") -> dict[str, Any]:
        attempts[stage] += 1
        return {"kind": "report", "role": stage, "verdict": verdict,
                "attempt": attempts[stage]}

    events.append(visit("write"))
    for round_ in range(2, rounds + 2):
        events += [{"kind": "transition", "stage": "review", "payload": {"loop": False}},
                   visit("review"),
                   {"kind": "verdict", "role": "review", "verdict": "changes_requested"},
                   {"kind": "transition", "stage": "write",
                    "payload": {"loop": True, "round": round_}}]
        if round_ == rounds + 1:
            events += [visit("write", "failed") for _ in range(failures)]
        events.append(visit("write"))
    events += [{"kind": "transition", "stage": "review", "payload": {"loop": False}},
               visit("review"), {"kind": "verdict", "role": "review", "verdict": "approved"},
               {"kind": "transition", "stage": "done"}, {"kind": "finish", "verdict": "done"}]
    return events


@pytest.mark.parametrize(("rounds", "failures", "expected"), [
    (1, 1, []),  # one send-back and one failed retry: both within max_retries 1
    (2, 0, [(10, "cap_exceeded")]),  # a second send-back to write: the run must escalate
    (1, 2, [(8, "cap_exceeded")]),  # a report after the try that had to escalate
])
def test_a_pipelines_caps_are_the_engines_caps(
        tmp_path: Path, rounds: int, failures: int, expected: list[tuple[int, str]]) -> None:
    """B6/B7: ``max_retries`` caps the send-backs to a stage and the failed tries of one
    visit; the ``attempt`` field, which counts every entry and try, is no cap."""
    frame = check_conformance(ledger(tmp_path, _review_loop(rounds, failures),
                                     loop="pipeline"))
    assert codes(frame) == expected, frame.to_string()
    assert all("max_retries allows" in m for m in frame["message"])


def test_the_engines_own_pipeline_runs_conform(tmp_path: Path) -> None:
    """Runs the engine plays (through the simulator) with many send-backs and failed
    tries break no rule: the checker and the engine count the caps alike."""
    import crewbook

    tour = crewbook.example_project(dest=tmp_path / "tour")
    out, policy = tmp_path / "sim.jsonl", tmp_path / "policy.yaml"
    policy.write_text("policy: random\nroles:\n  implementer: {fail: 0.4}\n  reviewer:\n"
                      "    verdicts:\n      review_report.verdict: "
                      "{approved: 0.3, changes_requested: 0.7}\n")
    assert main(["simulate", str(tour / "pipeline" / "role_pipeline.toml"),
                 "--policy", str(policy), "-n", "300", "--seed", "7", "--workers", "1",
                 "--no-progress", "--ledger", str(out)]) == 0
    runs = read_ledger(out)
    looped = runs[(runs["kind"] == "transition")
                  & runs["payload"].map(lambda p: bool(p and p.get("loop")))]
    assert looped["run"].nunique() > 100  # the caps were really reached
    assert (runs["kind"] == "escalate").any()
    frame = check_conformance(out)
    assert frame.empty, frame.head(10).to_string()


def test_spec_kit_runs_follow_their_own_rules(tmp_path: Path) -> None:
    assert check_conformance(DATA / "speckit-project").empty
    events = [{"kind": "init"},
              {"kind": "act", "role": "agent", "stage": "specify", "attempt": 1},
              {"kind": "report", "role": "human", "stage": "specify", "verdict": "completed",
               "attempt": 1},
              {"kind": "verdict", "role": "agent", "verdict": "go"},
              {"kind": "finish", "verdict": "completed"}]
    frame = check_conformance(ledger(tmp_path, events, loop="spec-kit"))
    assert codes(frame) == [(2, "unexpected_role"), (3, "verdict_not_allowed")]


def test_a_loop_without_rules_gets_the_generic_ones(tmp_path: Path) -> None:
    assert "my-loop" not in LOOP_RULES
    events = [{"kind": "init"}, {"kind": "verdict", "role": "anyone", "verdict": "go"},
              {"kind": "finish", "verdict": "scope_covered"}, {"kind": "note"}]
    assert codes(check_conformance(ledger(tmp_path, events, loop="my-loop"))) == [
        (3, "act_after_finish")]
    mine = LoopRules("my-loop", judges=frozenset({"qa"}))
    frame = check_conformance(ledger(tmp_path, events, loop="my-loop"),
                              rules={"my-loop": mine})
    assert codes(frame) == [(1, "verdict_not_allowed"), (3, "act_after_finish")]


# -- every ledger the engines write conforms -------------------------------------------------


def _coordinator_ledgers() -> list[list[Any]]:
    send_back = [*build_v1(), Delegate("qa", "verify"), Judgement("qa", "pass"),
                 Delegate("reviewer", "review"),
                 Judgement("reviewer", "changes", findings=("name the file report.csv",)),
                 Delegate("developer", "rename", fixes=("use report.csv",)),
                 Built(("app/export.py",)), Delegate("qa", "verify 2"),
                 Judgement("qa", "pass"), Delegate("reviewer", "review 2"),
                 Judgement("reviewer", "approved"), Finalise()]
    already_done = [Plan(CRITERIA, path="already-done"), Delegate("qa", "check"),
                    Judgement("qa", "pass"), Delegate("reviewer", "confirm"),
                    Judgement("reviewer", "approved"), Finalise()]
    return [[*verified(), Finalise()], send_back, already_done, build_v1()]


@pytest.mark.parametrize("reports", _coordinator_ledgers())
def test_coordinator_ledgers_conform(tmp_path: Path, reports: list[Any]) -> None:
    with Ledger(tmp_path / "run.jsonl", run="task-1") as file:
        loop = CoordinatorLoop(make_task(), clock=ManualClock(), ledger=file)
        for report in reports:
            loop.report(report)
    assert check_conformance(tmp_path / "run.jsonl").empty
    assert check_conformance(loop_frame(reports)).empty


def loop_frame(reports: list[Any]) -> pd.DataFrame:
    loop = CoordinatorLoop(make_task(), clock=ManualClock())
    for report in reports:
        loop.report(report)
    return loop.ledger.frame()  # type: ignore[attr-defined, no-any-return]


@pytest.mark.parametrize("reports", [
    [Plan(CRITERIA), Built(FILES), Judgement("qa", "pass"), Judgement("reviewer", "approved")],
    [Plan(CRITERIA), Built(FILES), Judgement("qa", "fail", findings=("header",)),
     Built(FILES), Judgement("qa", "pass"),
     Judgement("reviewer", "changes", findings=("name",)), Built(FILES),
     Judgement("qa", "pass"), Judgement("reviewer", "approved")],
])
def test_standard_ledgers_conform(reports: list[Any]) -> None:
    loop = StandardLoop(make_task(), clock=ManualClock())
    for report in reports:
        loop.report(report)
    assert check_conformance(loop.ledger.frame()).empty  # type: ignore[attr-defined]


def test_pipeline_ledgers_conform(tmp_path: Path) -> None:
    from crewbook.pipeline import load_pipeline
    from pipeline.conftest import SEED, WORKSPACE
    from pipeline.test_engine import APPROVE, IMPLEMENT, REJECT, TO_IMPLEMENTER, step_all

    with Ledger(tmp_path / "run.jsonl", run="r-1") as file:
        loop = load_pipeline(SEED).loop(WORKSPACE, ledger=file, run="r-1")
        step_all(loop, [*TO_IMPLEMENTER, IMPLEMENT, REJECT, IMPLEMENT, APPROVE])
    assert loop.status().finished
    assert check_conformance(read_ledger(tmp_path / "run.jsonl")).empty


def test_the_history_fixtures_conform() -> None:
    assert check_conformance(DATA / "history").empty


def test_conformance_problems_name_run_and_seq(tmp_path: Path) -> None:
    events = coordinator_run()
    events[4]["ts"] = "2025-03-01T08:00:00Z"
    [problem] = conformance_problems(ledger(tmp_path, events))
    assert (problem.code, problem.key, problem.severity) == (
        "time_backwards", "run r-1, seq 4", "error")
