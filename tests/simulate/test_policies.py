"""Scripted, random, replay and callable policies; policy files with located errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from crewbook.errors import SimulationError
from crewbook.simulate import (
    CallablePolicy,
    PipelineFactory,
    RandomPolicy,
    ReplayPolicy,
    ScriptedPolicy,
    TaskFactory,
    as_policy,
    load_policy,
    run_reports,
    simulate,
)

from .conftest import DELIVERY_POLICY

ANALYSIS = {"summary": "s", "acceptance_criteria": ["a"], "relevant_files": []}
REPORTS = [
    {"stage": "analyst", "artifacts": {"analysis": ANALYSIS}},
    {"stage": "planner", "artifacts": {}},  # the wrong stage: refused, counted, skipped
    {"stage": "architect", "artifacts": {"design": {"approach": "a", "components": [
        {"name": "n", "responsibility": "r"}]}}},
    {"stage": "planner", "artifacts": {"impl_plan": {"steps": [
        {"id": 1, "description": "d", "verify": "v"}]}}},
    {"stage": "implementer", "writes": ["core/x.py"]},
    {"stage": "reviewer", "artifacts": {"review_report": {"verdict": "approved",
                                                          "findings": []}}},
]


def test_scripted_reports_play_in_order_and_refusals_count(pipeline: PipelineFactory) -> None:
    frame = simulate(pipeline, ScriptedPolicy(REPORTS), n=3, seed=0)
    assert list(frame["finished_reason"].astype(str)) == ["done"] * 3
    assert list(frame["acts"]) == [5] * 3
    assert list(frame["refused.wrong_stage"]) == [1] * 3


def test_scripted_json_that_the_loop_cannot_read_is_refused_up_front(
        pipeline: PipelineFactory) -> None:
    with pytest.raises(SimulationError, match="scripted report 1 cannot be read"):
        simulate(pipeline, ScriptedPolicy([{"stag": "analyst"}]), n=1)
    with pytest.raises(SimulationError, match="at least one report"):
        ScriptedPolicy([])


@pytest.mark.parametrize("mode", ["coordinator", "standard"])
def test_replaying_a_ledger_gives_the_same_history(mode: str) -> None:
    factory = TaskFactory({"description": "Export the report as CSV", "mode": mode})
    outcomes, ledger = simulate(factory, RandomPolicy(DELIVERY_POLICY), n=25, seed=3,
                                ledger=True)
    replayed, again = simulate(factory, ReplayPolicy.from_ledger(ledger), n=25, seed=99,
                               ledger=True)
    columns = ["run", "seq", "ts", "kind", "role", "verdict", "version", "summary",
               "duration_ms", "tokens_in", "cost"]
    pd.testing.assert_frame_equal(again[columns], ledger[columns])
    stuck = outcomes["finished_reason"] == "stuck"  # a stuck run replays as unfinished
    assert (replayed.loc[~stuck, "finished_reason"].astype(str)
            == outcomes.loc[~stuck, "finished_reason"].astype(str)).all()
    assert replayed["refusals"].sum() == 0  # refusals are not in a ledger: none replayed


def test_replaying_a_pipeline_ledger_file(pipeline: PipelineFactory,
                                          pipeline_policy: RandomPolicy,
                                          tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    outcomes = simulate(pipeline, pipeline_policy, n=20, seed=4, ledger=path)
    replayed = simulate(pipeline, ReplayPolicy.from_ledger(path), n=20, seed=0)
    for column in ("finished_reason", "acts", "rounds", "tokens", "duration_ms"):
        assert replayed[column].astype(str).tolist() == outcomes[column].astype(str).tolist()


def test_replaying_history_under_tighter_caps_counts_the_refusals(
        coordinator: TaskFactory, delivery_policy: RandomPolicy) -> None:
    outcomes, ledger = simulate(coordinator, delivery_policy, n=40, seed=5, ledger=True)
    assert outcomes["attempts.developer"].max() >= 2
    tight = simulate(coordinator, ReplayPolicy.from_ledger(ledger), n=40, seed=0,
                     settings={"launches.developer": 1})
    assert tight["refused.cap_reached"].sum() > 0
    assert (tight["attempts.developer"] <= 1).all()


def test_replay_of_named_runs_and_of_reports(coordinator: TaskFactory,
                                             delivery_policy: RandomPolicy) -> None:
    _, ledger = simulate(coordinator, delivery_policy, n=5, seed=6, ledger=True)
    policy = ReplayPolicy.from_ledger(ledger, runs=["sim-00003"])
    assert policy.names == ["sim-00003"]
    with pytest.raises(SimulationError, match="no run 'sim-3'"):
        ReplayPolicy.from_ledger(ledger, runs=["sim-3"])
    pairs = run_reports(coordinator, delivery_policy, 3, seed=6, times=True)
    from_reports = simulate(coordinator, ReplayPolicy([pairs]), n=2, seed=0)
    from_ledger = simulate(coordinator, policy, n=2, seed=0)
    pd.testing.assert_frame_equal(from_reports, from_ledger)


def _qa_always_fails(contract, rng):  # type: ignore[no-untyped-def]
    assert isinstance(rng, np.random.Generator)
    from crewbook.delivery import Built, Delegate, Fail, Judgement, Plan

    if contract.stage == "coordinate":
        if "plan" in contract.moves:
            return Plan(("it works",))
        version = contract.details["version"]
        needs_build = version == 0 or any("fail" in f for f in contract.feedback)
        if needs_build and "delegate:developer" in contract.moves:
            return Delegate("developer", "build it")
        if "delegate:qa" in contract.moves:
            return Delegate("qa", "check it")
        return Fail("qa never passes")
    if contract.role == "developer":
        return Built(("a.py",))
    return Judgement("qa", "fail", findings=("broken",))


def test_a_callable_policy_plays_every_role(coordinator: TaskFactory) -> None:
    frame = simulate(coordinator, _qa_always_fails, n=2, seed=1)
    assert set(frame["finished_reason"].astype(str)) == {"failed"}
    assert (frame["attempts.qa"] >= 1).all()
    assert isinstance(as_policy(_qa_always_fails), CallablePolicy)


def test_random_policy_settings(coordinator: TaskFactory) -> None:
    policy = RandomPolicy(roles={"qa": {"fail": 0.3}})
    changed = policy.with_setting("roles.qa.fail", 0.9)
    assert changed.spec.roles["qa"].fail == 0.9
    assert policy.spec.roles["qa"].fail == 0.3  # the original is untouched
    assert policy.with_setting("roles.reviewer.fail", 0.5).spec.roles["reviewer"].fail == 0.5
    with pytest.raises(SimulationError, match="did you mean 'price_per_mtok'"):
        policy.with_setting("price_per_mtk", 1.0)
    with pytest.raises(SimulationError, match=r"roles.qa.fail"):
        policy.with_setting("roles.qa.fail", 2)
    with pytest.raises(SimulationError, match="no settings to sweep"):
        ScriptedPolicy(REPORTS).with_setting("x", 1)


def test_as_policy_accepts_data_files_and_policies(tmp_path: Path) -> None:
    random = RandomPolicy()
    assert as_policy(random) is random
    assert isinstance(as_policy({"policy": "scripted", "reports": REPORTS}), ScriptedPolicy)
    path = tmp_path / "policy.yaml"
    path.write_text("roles:\n  qa: {fail: 0.25}\n")
    loaded = as_policy(path)
    assert isinstance(loaded, RandomPolicy)
    assert loaded.spec.roles["qa"].fail == 0.25
    with pytest.raises(SimulationError, match="not int"):
        as_policy(3)  # type: ignore[arg-type]


def test_policy_file_errors_name_file_line_and_key(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("policy: random\nroles:\n  qa:\n    fial: 0.3\n  reviewer:\n"
                    "    fail: 1.5\n")
    with pytest.raises(SimulationError) as info:
        load_policy(path)
    problems = {p.code: p for p in info.value.problems}
    assert problems["unknown_key"].line == 4
    assert "did you mean 'fail'" in problems["unknown_key"].message
    assert problems["invalid_value"].line == 6
    assert problems["invalid_value"].key == "roles.reviewer.fail"
    path.write_text("policy: randum\n")
    with pytest.raises(SimulationError, match="did you mean 'random'") as info:
        load_policy(path)
    assert info.value.problems[0].line == 1


def test_a_role_the_loop_does_not_have_is_located(tmp_path: Path,
                                                  coordinator: TaskFactory) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("roles:\n  qa: {fail: 0.1}\n  reveiwer: {fail: 0.2}\n")
    with pytest.raises(SimulationError) as info:
        simulate(coordinator, path, n=1)
    problem = info.value.problems[0]
    assert (problem.code, problem.line, problem.key) == ("unknown_role", 3, "roles.reveiwer")
    assert "did you mean 'reviewer'" in problem.message


def test_pipeline_verdicts_must_name_a_field_a_transition_reads(
        pipeline: PipelineFactory) -> None:
    policy = RandomPolicy(roles={"reviewer": {"verdicts": {"review_report.verdit": {"a": 1}}}})
    with pytest.raises(SimulationError, match=r"review_report.verdict"):
        simulate(pipeline, policy, n=1)


def test_pipeline_verdict_weights_decide_the_path(pipeline: PipelineFactory) -> None:
    always = RandomPolicy(roles={"reviewer": {"verdicts": {
        "review_report.verdict": {"changes_requested": 1}}}})
    frame = simulate(pipeline, always, n=5, seed=0)
    assert set(frame["finished_reason"].astype(str)) == {"escalated"}
    assert set(frame["rounds"]) == {3}  # the implementer's max_retries
