"""Matplotlib drawings of simulations: the outcome mix against a swept setting, the
rounds histogram and the cost distribution.

matplotlib is imported inside each function; each draws on `ax` (or a new figure)
and returns the Axes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from ..errors import SimulationError, did_you_mean
from .frames import outcome_mix

if TYPE_CHECKING:
    from matplotlib.axes import Axes

#: Colours of the usual finished reasons (others take matplotlib's cycle).
COLOURS = {"done": "#4c9f70", "pull_request": "#4c9f70", "already_done": "#8cc7a1",
           "escalated": "#d1495b", "failed": "#d1495b", "stuck": "#7f7f7f",
           "unfinished": "#b3b3b3"}


def _axes(ax: Axes | None) -> Axes:
    import matplotlib.pyplot as plt

    if ax is not None:
        return ax
    _, made = plt.subplots(figsize=(6, 3.5))
    return made


def plot_outcome_mix(frame: pd.DataFrame, parameter: str, *, ax: Axes | None = None) -> Axes:
    """Share of each finished reason (a line each) against the swept `parameter`."""
    if parameter not in frame.columns:
        raise SimulationError(f"the frame has no column {parameter!r}"
                              f"{did_you_mean(parameter, map(str, frame.columns))}")
    ax = _axes(ax)
    mix = outcome_mix(frame, parameter)
    table = mix.pivot_table(index=parameter, columns="finished_reason", values="share",
                            observed=True, fill_value=0.0)
    numeric = pd.api.types.is_numeric_dtype(frame[parameter]) and \
        not pd.api.types.is_bool_dtype(frame[parameter])
    positions = list(table.index) if numeric else list(range(len(table.index)))
    for reason in table.columns:
        ax.plot(positions, table[reason].to_numpy(), marker="o", label=str(reason),
                color=COLOURS.get(str(reason)))
    if not numeric:
        ax.set_xticks(positions, [str(v) for v in table.index])
    ax.set_xlabel(parameter)
    ax.set_ylabel("share of runs")
    ax.set_ylim(0, 1)
    ax.legend(title="finished", fontsize="small")
    ax.set_title(f"outcome mix by {parameter}")
    return ax


def plot_simulated_rounds(frame: pd.DataFrame, *, ax: Axes | None = None) -> Axes:
    """How many runs sent work back 0, 1, 2… times."""
    ax = _axes(ax)
    counts = frame["rounds"].astype("int64").value_counts(sort=False).sort_index()
    ax.bar(counts.index.to_numpy(), counts.to_numpy(), color="#5b8bd1")
    ax.set_xlabel("rounds (times work went back)")
    ax.set_ylabel("runs")
    ax.set_title(f"rounds per run ({len(frame):,} runs)")
    return ax


def plot_cost(frame: pd.DataFrame, *, by: str | None = None, bins: int = 40,
              ax: Axes | None = None) -> Axes:
    """The distribution of cost per run (a histogram per value of `by`)."""
    ax = _axes(ax)
    if by is None:
        ax.hist(frame["cost"].to_numpy(), bins=bins, color="#5b8bd1")
    else:
        for value, part in frame.groupby(by, observed=True):
            ax.hist(part["cost"].to_numpy(), bins=bins, alpha=0.5, label=f"{by}={value}")
        ax.legend(fontsize="small")
    ax.set_xlabel("cost per run")
    ax.set_ylabel("runs")
    ax.set_title("cost distribution")
    return ax
