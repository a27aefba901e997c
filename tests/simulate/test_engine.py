"""simulate, sweep, run_reports and replay_run on the pipeline, standard and coordinator
loops: typed outcomes, refusals counted, seeds per run, ledgers in the standard format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from crewbook.core.loop import Act
from crewbook.errors import SimulationError
from crewbook.ledger import read_ledger, run_outcomes
from crewbook.simulate import (
    STUCK,
    UNFINISHED,
    CallablePolicy,
    PipelineFactory,
    RandomPolicy,
    ScriptedPolicy,
    Simulated,
    TaskFactory,
    replay_run,
    run_reports,
    simulate,
    sweep,
)

from .conftest import PIPELINE


def test_outcomes_have_one_typed_row_per_run(coordinator: TaskFactory,
                                             delivery_policy: RandomPolicy) -> None:
    frame = simulate(coordinator, delivery_policy, n=60, seed=1)
    assert list(frame["run"]) == list(range(60))
    assert frame["finished_reason"].dtype == "category"
    assert frame["finished"].dtype == bool
    for column in ("run", "acts", "rounds", "refusals", "tokens", "duration_ms"):
        assert str(frame[column].dtype) == "Int64", column
    assert frame["cost"].dtype == "float64"
    assert set(frame["finished_reason"].astype(str)) <= {"pull_request", "failed",
                                                          "already_done"}
    attempts = [c for c in frame.columns if c.startswith("attempts.")]
    assert {"attempts.architect", "attempts.developer", "attempts.qa"} <= set(attempts)
    # the developer is launched once more for every send-back
    assert (frame["attempts.developer"] >= frame["rounds"] + 1).all()
    assert (frame[attempts].sum(axis=1) <= frame["acts"]).all()
    assert (frame["tokens"] == frame["tokens_in"] + frame["tokens_out"]).all()
    assert frame.attrs["crewbook_seed"] == 1


def test_refusals_are_counted_per_code(coordinator: TaskFactory,
                                       delivery_policy: RandomPolicy) -> None:
    frame = simulate(coordinator, delivery_policy, n=80, seed=2)
    refused = [c for c in frame.columns if c.startswith("refused.")]
    assert (frame[refused].sum(axis=1) == frame["refusals"]).all()
    # finalising before the gates and reporting after a wait's deadline are refused
    assert frame["refused.version_not_verified"].sum() > 0
    assert frame["refused.wait_expired"].sum() > 0


def test_a_policy_that_is_always_refused_gets_stuck(coordinator: TaskFactory) -> None:
    from crewbook.delivery import Finalise

    frame = simulate(coordinator, CallablePolicy(lambda contract: Finalise()), n=3, seed=0,
                     max_refusals=7)
    assert list(frame["finished_reason"].astype(str)) == [STUCK] * 3
    assert list(frame["refusals"]) == [7, 7, 7]
    assert list(frame["acts"]) == [0, 0, 0]
    assert not frame["finished"].any()


def test_a_script_that_runs_out_leaves_the_run_unfinished(pipeline: PipelineFactory) -> None:
    from crewbook.pipeline import StageReport

    reports = [StageReport("analyst", {"analysis": {
        "summary": "s", "acceptance_criteria": ["a"], "relevant_files": []}})]
    frame = simulate(pipeline, ScriptedPolicy(reports), n=2, seed=0)
    assert list(frame["finished_reason"].astype(str)) == [UNFINISHED] * 2
    assert list(frame["acts"]) == [1, 1]


def test_max_acts_ends_a_run_unfinished(pipeline: PipelineFactory,
                                        pipeline_policy: RandomPolicy) -> None:
    frame = simulate(pipeline, pipeline_policy, n=5, seed=0, max_acts=2)
    assert set(frame["finished_reason"].astype(str)) == {UNFINISHED}
    assert set(frame["acts"]) == {2}


def test_the_same_seed_gives_the_same_runs_and_runs_do_not_depend_on_n(
        coordinator: TaskFactory, delivery_policy: RandomPolicy) -> None:
    a = simulate(coordinator, delivery_policy, n=40, seed=9)
    b = simulate(coordinator, delivery_policy, n=40, seed=9)
    pd.testing.assert_frame_equal(a, b)
    longer = simulate(coordinator, delivery_policy, n=70, seed=9)
    head = longer.iloc[:40][a.columns].reset_index(drop=True)
    pd.testing.assert_frame_equal(head, a, check_categorical=False)
    other = simulate(coordinator, delivery_policy, n=40, seed=10)
    assert not other["cost"].equals(a["cost"])


def test_every_loop_kind_is_simulated(standard: TaskFactory, pipeline: PipelineFactory,
                                      delivery_policy: RandomPolicy,
                                      pipeline_policy: RandomPolicy) -> None:
    std = simulate(standard, delivery_policy, n=60, seed=3)
    assert "pull_request" in set(std["finished_reason"].astype(str))
    assert std["rounds"].max() >= 1  # QA's fails send the task back
    pipe = simulate(pipeline, pipeline_policy, n=60, seed=3)
    assert set(pipe["finished_reason"].astype(str)) <= {"done", "escalated"}
    assert pipe["rounds"].max() >= 1  # the reviewer's changes send work back
    assert "attempts.implementer" in pipe.columns


def test_the_ledger_is_the_standard_format(coordinator: TaskFactory,
                                           delivery_policy: RandomPolicy,
                                           tmp_path: Path) -> None:
    result = simulate(coordinator, delivery_policy, n=12, seed=4, ledger=True)
    assert isinstance(result, Simulated)
    outcomes, ledger = result
    assert ledger["ts"].dtype == "datetime64[ns, UTC]"
    assert ledger["run"].nunique() == 12
    per_run = run_outcomes(ledger)
    finished = outcomes[outcomes["finished"]]
    names = [f"sim-{r:05d}" for r in finished["run"]]
    assert list(per_run.loc[names, "finished_reason"].astype(str)) == \
        list(finished["finished_reason"].astype(str))
    path = tmp_path / "sim.jsonl"
    written = simulate(coordinator, delivery_policy, n=12, seed=4, ledger=path)
    pd.testing.assert_frame_equal(written, outcomes)
    back = read_ledger(path)
    pd.testing.assert_frame_equal(back.drop(columns="payload"),
                                  ledger.drop(columns="payload"))


def test_sweep_is_a_tidy_frame_with_common_seeds(pipeline: PipelineFactory,
                                                pipeline_policy: RandomPolicy) -> None:
    frame = sweep(pipeline, pipeline_policy, {"max_retries.implementer": [0, 3]}, n=50,
                  seed=5)
    assert len(frame) == 100
    assert list(frame.columns[:2]) == ["setting", "max_retries.implementer"]
    assert str(frame["max_retries.implementer"].dtype) == "Int64"
    capped = frame[frame["max_retries.implementer"] == 0]
    alone = simulate(pipeline, pipeline_policy, n=50, seed=5,
                     settings={"max_retries.implementer": 0})
    pd.testing.assert_frame_equal(capped[alone.columns].reset_index(drop=True), alone,
                                  check_categorical=False)
    shares = frame.groupby("max_retries.implementer")["finished_reason"].apply(
        lambda s: (s == "escalated").mean())
    assert shares[0] > shares[3]  # no send-back allowed: every changes request escalates


def test_sweep_changes_the_policy(coordinator: TaskFactory) -> None:
    frame = sweep(coordinator, RandomPolicy(), {"policy.roles.qa.fail": [0.0, 0.6]}, n=60,
                  seed=6)
    rounds = frame.groupby("policy.roles.qa.fail")["rounds"].mean()
    assert rounds[0.0] == 0
    assert rounds[0.6] > 0.5


def test_sweep_and_simulate_refuse_bad_settings(coordinator: TaskFactory,
                                                pipeline: PipelineFactory) -> None:
    with pytest.raises(SimulationError, match="did you mean 'max_retries'"):
        simulate(pipeline, RandomPolicy(), n=1, settings={"max_retry": 1})
    with pytest.raises(SimulationError, match=r"no stage 'implemnter'.*implementer"):
        simulate(pipeline, RandomPolicy(), n=1, settings={"max_retries.implemnter": 1})
    with pytest.raises(SimulationError, match="did you mean 'plan_revisions'"):
        simulate(coordinator, RandomPolicy(), n=1, settings={"plan_revision": 1})
    with pytest.raises(SimulationError, match="non-empty list"):
        sweep(coordinator, RandomPolicy(), {"steps": []}, n=1)
    with pytest.raises(SimulationError, match="seed"):
        simulate(coordinator, RandomPolicy(), n=1, seed=-1)


def test_a_simulated_run_can_be_stepped_again(coordinator: TaskFactory,
                                              delivery_policy: RandomPolicy) -> None:
    frame = simulate(coordinator, delivery_policy, n=30, seed=7)
    for index in (0, 11, 29):
        reports = run_reports(coordinator, delivery_policy, index, seed=7)
        assert len(reports) == frame.loc[index, "acts"]
        loop = replay_run(coordinator, delivery_policy, index, seed=7)
        assert loop.status().finished_reason == frame.loc[index, "finished_reason"]
        assert loop.acts == frame.loc[index, "acts"]


def test_a_replayed_run_ends_when_its_last_act_does(coordinator: TaskFactory,
                                                   delivery_policy: RandomPolicy) -> None:
    """The family declares how long a report's act took (`LoopFamily.duration_of`): the
    replay's clock ends that long after the last report was made."""
    from datetime import timedelta

    from crewbook.families import family_of

    pairs = run_reports(coordinator, delivery_policy, 3, seed=7, times=True)
    last, at = pairs[-1]
    loop = replay_run(coordinator, delivery_policy, 3, seed=7)
    family = family_of(loop)
    assert family is not None
    assert family.duration_of is not None
    ms = family.duration_of(last)
    assert ms is not None
    assert ms > 0  # the policy's acts take time: the check can fail
    assert loop.clock() == at + timedelta(milliseconds=ms)


def test_a_factory_that_makes_no_loop_is_refused() -> None:
    with pytest.raises(SimulationError, match="not a Loop"):
        simulate(lambda: "loop", RandomPolicy(), n=1)


def test_files_are_factories(tmp_path: Path) -> None:
    task = tmp_path / "task.yaml"
    task.write_text("id: csv\ndescription: Export the report as CSV\nmode: standard\n")
    frame = simulate(task, {"roles": {"qa": {"fail": 0.5}}}, n=20, seed=1)
    assert "attempts.qa" in frame.columns
    pipe = simulate(PIPELINE, {}, n=5, seed=1)
    assert set(pipe["finished_reason"].astype(str)) == {"done"}


def _wrong_then_right(contract: Act, rng: Any) -> Any:
    """Reports for another stage first (refused), then the right one."""
    from crewbook.pipeline import StageReport

    return StageReport("nobody" if rng.random() < 0.5 else str(contract.stage), {})


def test_callables_get_the_runs_generator(pipeline: PipelineFactory) -> None:
    frame = simulate(pipeline, _wrong_then_right, n=20, seed=8)
    assert frame["refused.wrong_stage"].sum() > 0
    again = simulate(pipeline, _wrong_then_right, n=20, seed=8)
    pd.testing.assert_frame_equal(frame, again)


def test_ledger_totals_match_the_outcomes(coordinator: TaskFactory,
                                          delivery_policy: RandomPolicy) -> None:
    outcomes, ledger = simulate(coordinator, delivery_policy, n=15, seed=12, ledger=True)
    per_run = run_outcomes(ledger)
    names = [f"sim-{r:05d}" for r in outcomes["run"]]
    assert list(per_run.loc[names, "tokens"]) == list(outcomes["tokens"])
    assert per_run.loc[names, "cost"].round(6).tolist() == outcomes["cost"].round(6).tolist()
