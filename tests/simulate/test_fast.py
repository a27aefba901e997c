"""Plain-data runs (`crewbook.delivery.fastsim`) give exactly the full engine's outcomes
for the same seed: every rule the random coordinator meets is applied the same way."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as examples
from hypothesis import strategies as st

from crewbook.simulate import InlineExecutor, RandomPolicy, TaskFactory, simulate
from crewbook.simulate.engine import RunSpec, _prepare, fast_runner, run_chunk

TASK = {"id": "csv-export", "description": "Export the report as CSV"}
BUSY: dict[str, Any] = {
    "roles": {"qa": {"fail": 0.5, "question": 0.2}, "reviewer": {"fail": 0.3},
              "developer": {"question": 0.3,
                            "duration_ms": {"dist": "exponential", "mean": 1_800_000}}},
    "coordinator": {"finalise_early": 0.3},
}
#: Settings that reach every rule: caps of steps and time, short waits, a step budget,
#: a launch cap, review by risk, a coordinator that delegates past a cap.
CASES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({}, BUSY),
    ({"steps": 9}, BUSY),
    ({"duration_minutes": 40, "wait_minutes": 8}, BUSY),
    ({"agent_steps": 5}, {}),
    ({"launches.developer": 1, "review": "risk-based"}, BUSY),
    ({"launches.qa": 1}, {**BUSY, "coordinator": {"finalise_early": 0.2,
                                                  "fail_at_cap": False}}),
    ({}, {"duration_ms": {"dist": "uniform", "low": 0, "high": 1_000_000_000},
          "tokens": 5000}),
]


def results(settings: dict[str, Any], policy: dict[str, Any], seed: int, n: int
            ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    factory, chosen, loop_settings = _prepare(TaskFactory(TASK), RandomPolicy(policy), settings)
    spec = RunSpec(factory, chosen, tuple(loop_settings.items()), seed)
    assert fast_runner(spec) is not None
    fast = [asdict(r) for r in run_chunk(spec, 0, n)]
    full = [asdict(r) for r in run_chunk(replace(spec, fast=False), 0, n)]
    return fast, full


@pytest.mark.slow  # 105 runs on the full engine (about 1.5 s quiet): every rule reached
def test_the_plain_data_runs_equal_the_engines_on_every_rule() -> None:
    codes: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for number, (settings, policy) in enumerate(CASES):
        fast, full = results(settings, policy, seed=number, n=15)
        for a, b in zip(fast, full, strict=True):
            assert a == b, (settings, a["run"])
        for r in full:
            codes.update(r["refused"])
            reasons[r["finished_reason"]] += 1
    # the cases do reach the rules compared (else the comparison proves little)
    assert {"version_not_verified", "review_required", "wait_expired", "cap_reached",
            "over_budget", "bad_report"} <= set(codes)
    assert {"pull_request", "failed", "stuck"} <= set(reasons)


@examples(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), fail=st.floats(0, 1), question=st.floats(0, 0.6),
       early=st.floats(0, 0.5), steps=st.sampled_from([None, 6, 12, 30]))
def test_any_policy_and_cap_gives_the_same_outcomes(seed: int, fail: float, question: float,
                                                     early: float, steps: int | None) -> None:
    policy = {"roles": {"qa": {"fail": fail, "question": question},
                        "developer": {"question": question}},
              "coordinator": {"finalise_early": early}}
    fast, full = results({"steps": steps}, policy, seed, n=5)
    assert fast == full


def test_simulate_frames_are_equal_with_and_without_the_plain_data_path() -> None:
    factory = TaskFactory(TASK)
    fast = simulate(factory, BUSY, n=20, seed=3, executor=InlineExecutor())
    full = simulate(factory, BUSY, n=20, seed=3, executor=InlineExecutor(), fast=False)
    assert int(fast["acts"].sum()) > 20
    import pandas as pd

    pd.testing.assert_frame_equal(fast, full)


@pytest.mark.parametrize("mode", ["standard"])
def test_other_loops_and_ledgers_go_through_the_engine(mode: str) -> None:
    factory, chosen, settings = _prepare(TaskFactory({**TASK, "mode": mode}), RandomPolicy(BUSY),
                                         {})
    assert fast_runner(RunSpec(factory, chosen, tuple(settings.items()))) is None
    coordinator, chosen, settings = _prepare(TaskFactory(TASK), RandomPolicy(BUSY), {})
    assert fast_runner(RunSpec(coordinator, chosen, (), ledger=True)) is None
    assert fast_runner(RunSpec(coordinator, chosen, (), record=True)) is None
