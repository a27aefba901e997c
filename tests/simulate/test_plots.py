"""The simulation plots draw what the frames hold."""

from __future__ import annotations

import matplotlib
import pytest

from crewbook.errors import SimulationError
from crewbook.simulate import (
    outcome_mix,
    plot_cost,
    plot_outcome_mix,
    plot_simulated_rounds,
    simulate,
    sweep,
)

from .conftest import PIPELINE, PIPELINE_POLICY

matplotlib.use("Agg")


def test_outcome_mix_has_a_line_per_reason() -> None:
    import matplotlib.pyplot as plt

    frame = sweep(PIPELINE, PIPELINE_POLICY, {"max_retries.implementer": [0, 1, 3]}, n=60,
                  seed=3)
    ax = plot_outcome_mix(frame, "max_retries.implementer")
    labels = [line.get_label() for line in ax.get_lines()]
    assert sorted(labels) == sorted(set(frame["finished_reason"].astype(str)))
    mix = outcome_mix(frame, "max_retries.implementer")
    done = mix[mix["finished_reason"] == "done"]["share"].tolist()
    line = next(line for line in ax.get_lines() if line.get_label() == "done")
    assert list(line.get_ydata()) == pytest.approx(done)
    with pytest.raises(SimulationError, match=r"did you mean 'max_retries.implementer'"):
        plot_outcome_mix(frame, "max_retries.implementr")
    plt.close("all")


def test_rounds_and_cost() -> None:
    import matplotlib.pyplot as plt

    frame = simulate(PIPELINE, PIPELINE_POLICY, n=80, seed=4)
    ax = plot_simulated_rounds(frame)
    heights = {round(p.get_x() + p.get_width() / 2): p.get_height() for p in ax.patches}
    assert heights == frame["rounds"].value_counts().to_dict()
    ax = plot_cost(frame)
    assert sum(p.get_height() for p in ax.patches) == 80
    ax = plot_cost(frame, by="finished_reason")
    assert ax.get_legend() is not None
    plt.close("all")
