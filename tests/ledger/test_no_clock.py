"""``"ts": null``: an event from a log with no clock (an import). Written explicitly,
read as NaT; a line that leaves `ts` out is still an error."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from crewbook import read_ledger
from crewbook.errors import LedgerError
from crewbook.ledger.analyses import run_outcomes
from crewbook.ledger.events import LedgerEvent

from .conftest import event


def test_a_null_ts_is_written_not_left_out() -> None:
    line = LedgerEvent.model_validate(event(0, ts=None)).to_line()
    assert line.startswith('{"v":1,"ts":null,"run":"r1"')
    assert LedgerEvent.model_validate_json(line).ts is None


@pytest.mark.parametrize("many", [False, True], ids=["one line before", "300 lines before"])
def test_null_ts_reads_as_nat_and_a_missing_ts_is_an_error(
        write_ledger: Callable[..., Path], many: bool) -> None:
    clocked = [event(n) for n in range(300 if many else 1)]
    unclocked = event(len(clocked), ts=None)
    path = write_ledger([*clocked, unclocked])
    df = read_ledger(path)
    assert df["ts"].isna().sum() == 1
    assert pd.isna(df["ts"].iloc[-1])
    assert pd.isna(run_outcomes(df).loc["r1", "duration"])  # unknown end: no duration
    missing = {k: v for k, v in event(len(clocked)).items() if k != "ts"}
    bad = write_ledger([*clocked, missing])
    with pytest.raises(LedgerError, match="ts is missing") as caught:
        read_ledger(bad)
    assert caught.value.problems[0].line == len(clocked) + 1


def test_null_ts_on_the_line_by_line_path(write_ledger: Callable[..., Path]) -> None:
    # a corrupt line makes Arrow refuse the block: its lines are read one by one
    path = write_ledger([event(0), "{not json}", event(1, ts=None)])
    with pytest.warns(UserWarning, match="1 line left out"):
        df = read_ledger(path, errors="skip")
    assert list(df["seq"]) == [0, 1]
    assert pd.isna(df["ts"].iloc[1])
