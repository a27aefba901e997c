"""The policy file's models: distributions, behaviours, defaults."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from crewbook.core.players import Draws
from crewbook.simulate.model import RandomPolicyFile, RoleBehaviour


def test_distributions_parse_by_name() -> None:
    spec = RandomPolicyFile.model_validate({
        "duration_ms": {"dist": "uniform", "low": 10, "high": 20},
        "tokens": 500,
        "roles": {"qa": {"duration_ms": {"dist": "normal", "mean": 5, "sd": 1},
                         "tokens": {"dist": "exponential", "mean": 100}}},
    })
    draws = Draws(spec, np.random.default_rng(0))
    values = [draws.measures("developer") for _ in range(200)]
    assert all(10 <= v["duration_ms"] <= 20 for v in values)
    assert {v["tokens_in"] + v["tokens_out"] for v in values} == {500}
    assert {v["tokens_in"] for v in values} == {375}  # tokens_in_share 0.75
    assert values[0]["cost"] == pytest.approx(500 * 3.0 / 1e6)


def test_bad_distributions_are_refused() -> None:
    with pytest.raises(ValidationError, match="high"):
        RandomPolicyFile.model_validate({"tokens": {"dist": "uniform", "low": 5, "high": 1}})
    with pytest.raises(ValidationError):
        RandomPolicyFile.model_validate({"tokens": {"dist": "poisson", "mean": 5}})
    with pytest.raises(ValidationError, match=r"artifact.field"):
        RoleBehaviour.model_validate({"verdicts": {"verdict": {"a": 1}}})
    with pytest.raises(ValidationError, match="more than 0"):
        RoleBehaviour.model_validate({"verdicts": {"r.verdict": {"a": 0}}})


@given(st.floats(0, 1), st.integers(0, 2**32))
def test_chance_is_a_probability(p: float, seed: int) -> None:
    draws = Draws(RandomPolicyFile(), np.random.default_rng(seed))
    outcomes = [draws.chance(p) for _ in range(20)]
    if p == 0:
        assert not any(outcomes)
    if p == 1:
        assert all(outcomes)


def test_choice_follows_the_weights() -> None:
    draws = Draws(RandomPolicyFile(), np.random.default_rng(1))
    picks = [draws.choice({"a": 3, "b": 1, "c": 0}) for _ in range(4000)]
    assert "c" not in picks
    assert picks.count("a") / len(picks) == pytest.approx(0.75, abs=0.03)
