"""Plots draw what the analyses compute; importing the ledger package stays light."""

from __future__ import annotations

import subprocess
import sys

import matplotlib
import pandas as pd
import pytest

from crewbook.ledger import read_ledger, run_outcomes, timeline
from crewbook.ledger.plots import COLOURS, plot_rounds, plot_timeline

from .conftest import HISTORY, SPECKIT_PROJECT

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def history() -> pd.DataFrame:
    return read_ledger(HISTORY)


def test_importing_the_ledger_package_imports_no_drawing_library() -> None:
    code = ("import sys, crewbook.ledger, crewbook.commands.ledger; "
            "print(sorted(m for m in ('matplotlib', 'graphviz', 'ipywidgets', 'IPython') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True)
    assert out.stdout.strip() == "[]"


def test_timeline_has_a_bar_per_span_coloured_by_verdict(history: pd.DataFrame) -> None:
    import matplotlib.pyplot as plt

    ax = plot_timeline(history, "run-0002")
    spans = timeline(history, "run-0002")
    assert len(ax.patches) == len(spans)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["architect", "developer", "bar", "qa", "reviewer"]
    colours = {matplotlib.colors.to_hex(p.get_facecolor()) for p in ax.patches}
    assert colours <= set(COLOURS.values())
    assert COLOURS["negative"] in colours
    assert "run-0002" in ax.get_title()
    plt.close("all")


def test_timeline_needs_a_run_when_there_are_several(history: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="3 runs"):
        plot_timeline(history)
    one = read_ledger(SPECKIT_PROJECT)
    ax = plot_timeline(one[one["run"] == "b71e04d9"])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["agent", "human"]
    assert len(ax.patches) == 6
    import matplotlib.pyplot as plt

    plt.close("all")


def test_rounds_histogram_counts_every_run(history: pd.DataFrame) -> None:
    import matplotlib.pyplot as plt

    ax = plot_rounds(history)
    heights = sum(p.get_height() for p in ax.patches)
    assert heights == len(run_outcomes(history))
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["coordinator", "crew"]
    ax2 = plot_rounds(run_outcomes(history), column="acts", by=None)
    assert sum(p.get_height() for p in ax2.patches) == 3
    for axes in (ax, ax2):  # runs are counted: whole ticks only, and the bars all shown
        ticks = axes.get_yticks()
        assert all(float(t).is_integer() for t in ticks), ticks
        assert axes.get_ylim()[1] >= max(p.get_height() for p in axes.patches)
    plt.close("all")
