"""One ledger frame: a loop's in-memory ledger and the same run written to a file give the
same frame, so every analysis works on both (issue 15)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from crewbook.core.loop import Loop
from crewbook.core.sinks import MemoryLedger
from crewbook.delivery import (
    Built,
    CoordinatorLoop,
    Finalise,
    Judgement,
    ManualClock,
    Plan,
    StandardLoop,
)
from crewbook.ledger import Ledger, read_ledger, rework, run_outcomes, usage_by_role
from delivery.conftest import make_task, step, verified


def coordinator(ledger: Any) -> Loop[Any, Any]:
    loop = CoordinatorLoop(make_task(), clock=ManualClock(), ledger=ledger, run="r-1")
    step(loop, [*verified(), Finalise()])
    return loop


def standard(ledger: Any) -> Loop[Any, Any]:
    loop = StandardLoop(make_task(), clock=ManualClock(), ledger=ledger, run="r-1")
    step(loop, [Plan(["exports CSV"]), Built(("report.py",), duration_ms=60_000),
                Judgement("qa", "pass"), Judgement("reviewer", "approved")])
    return loop


@pytest.mark.parametrize("build", [coordinator, standard], ids=["coordinator", "standard"])
@pytest.mark.parametrize("analysis", [run_outcomes, usage_by_role, rework],
                         ids=["run_outcomes", "usage_by_role", "rework"])
def test_memory_and_file_ledgers_give_the_same_frames(
    build: Callable[[Any], Loop[Any, Any]], analysis: Callable[[pd.DataFrame], pd.DataFrame],
    tmp_path: Path,
) -> None:
    memory = build(MemoryLedger("r-1"))
    path = tmp_path / "run.jsonl"
    with Ledger(path, run="r-1") as ledger:
        build(ledger)
    in_memory = memory.ledger.frame()  # type: ignore[attr-defined]
    on_disk = read_ledger(path)
    assert len(in_memory) > 3
    pd.testing.assert_frame_equal(in_memory, on_disk)
    pd.testing.assert_frame_equal(analysis(in_memory), analysis(on_disk))
    assert run_outcomes(in_memory)["finished_reason"].notna().all()
