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
