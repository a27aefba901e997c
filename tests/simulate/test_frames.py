"""outcome_mix and summarise on simulated outcomes."""

from __future__ import annotations

import pytest

from crewbook.simulate import outcome_mix, simulate, summarise, sweep

from .conftest import PIPELINE, PIPELINE_POLICY


def test_outcome_mix_shares_add_up_per_group() -> None:
    frame = sweep(PIPELINE, PIPELINE_POLICY, {"max_retries.implementer": [0, 2]}, n=80,
                  seed=1)
    mix = outcome_mix(frame, "max_retries.implementer")
    assert list(mix.columns) == ["max_retries.implementer", "finished_reason", "runs", "share"]
    assert str(mix["runs"].dtype) == "Int64"
    totals = mix.groupby("max_retries.implementer")["share"].sum()
    assert totals.tolist() == pytest.approx([1.0, 1.0])
    assert mix.groupby("max_retries.implementer")["runs"].sum().tolist() == [80, 80]


def test_summarise_overall_and_by_group() -> None:
    frame = simulate(PIPELINE, PIPELINE_POLICY, n=50, seed=2)
    overall = summarise(frame)
    assert len(overall) == 1
    assert overall.loc[0, "runs"] == 50
    assert overall.loc[0, "acts"] == pytest.approx(frame["acts"].mean())
    assert overall.loc[0, "cost_p90"] == pytest.approx(frame["cost"].quantile(0.9))
    by = summarise(frame, "finished_reason")
    assert by["runs"].sum() == 50
    assert set(by["finished_reason"].astype(str)) == set(frame["finished_reason"].astype(str))


def test_outcomes_sent_as_columns_make_the_same_frame_as_run_results() -> None:
    from crewbook.simulate.engine import RunResult
    from crewbook.simulate.frames import outcomes_frame, outcomes_of

    def result(i: int, attempts: dict[str, int], refused: dict[str, int]) -> RunResult:
        return RunResult(i, "done" if i % 2 else "stuck", bool(i % 2), i + 1, i % 3, len(refused),
                         10 * i, 5 * i, 0.5 * i, 1000 * i, attempts, refused)

    results = [result(0, {"qa": 1}, {}), result(1, {"dev": 2, "qa": 1}, {"wait": 1}),
               result(2, {}, {"late": 2}), result(3, {"rev": 1}, {})]
    whole = outcomes_frame(results)
    # chunks that saw different roles and codes: a missing count is 0, column order the same
    chunked = outcomes_frame([outcomes_of(results[:1]), outcomes_of(results[1:3]),
                              outcomes_of(results[3:])])
    assert list(whole.columns) == [*list(whole.columns[:11]), "attempts.qa", "attempts.dev",
                                   "attempts.rev", "refused.late", "refused.wait"]
    assert whole["attempts.dev"].tolist() == [0, 2, 0, 0]
    assert chunked.equals(whole)
    assert outcomes_frame([]).shape == (0, 11)
