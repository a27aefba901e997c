"""`simulate_to`: runs (and events) streamed to Parquet parts, read back as `simulate`'s
frames; a progress bar on request; a real Dask cluster writes the same parts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from crewbook.errors import SimulationError
from crewbook.ledger import read_ledger
from crewbook.ledger.reader import COLUMNS
from crewbook.simulate import InlineExecutor, TaskFactory, simulate, simulate_to, sweep
from ledger.conftest import without_nulls

from .conftest import DELIVERY_POLICY, PIPELINE, PIPELINE_POLICY

TASK = {"id": "csv-export", "description": "Export the report as CSV"}


def parts(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.is_file())


def test_runs_stream_to_parquet_parts_and_read_back_as_simulate_gives_them(
        tmp_path: Path) -> None:
    factory = TaskFactory(TASK)
    out = simulate_to(tmp_path / "sim", factory, DELIVERY_POLICY, n=30, seed=4,
                      executor=InlineExecutor())
    expected = simulate(factory, DELIVERY_POLICY, n=30, seed=4, executor=InlineExecutor())
    pd.testing.assert_frame_equal(out.outcomes(), expected)
    assert out.runs == 30
    assert out.acts == int(expected["acts"].sum())
    names = parts(tmp_path / "sim")
    assert names
    assert all(n.startswith("part-s000-") for n in names)
    assert all(n.endswith(".parquet") for n in names)
    assert "30 runs" in repr(out)


def test_a_sweep_streams_with_its_settings_first(tmp_path: Path) -> None:
    factory = TaskFactory(TASK)
    grid: dict[str, list[Any]] = {"launches.developer": [1, 3], "policy.roles.qa.fail": [0.2, 0.6]}
    out = simulate_to(tmp_path / "sweep", factory, DELIVERY_POLICY, n=8, seed=2, grid=grid,
                      executor=InlineExecutor())
    expected = sweep(factory, DELIVERY_POLICY, grid, n=8, seed=2, executor=InlineExecutor())
    got = out.outcomes()
    assert out.settings == 4
    assert out.runs == 32
    pd.testing.assert_frame_equal(got[list(expected.columns)], expected)


def test_events_have_the_ledger_columns_and_read_back_with_read_ledger(tmp_path: Path) -> None:
    out = simulate_to(tmp_path / "ev", PIPELINE, PIPELINE_POLICY, n=6, seed=1, events=True,
                      executor=InlineExecutor())
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "ev" / "events")
    assert tuple(table.column_names) == COLUMNS
    frame = out.ledger()
    expected = simulate(PIPELINE, PIPELINE_POLICY, n=6, seed=1, ledger=True,
                        executor=InlineExecutor()).ledger
    assert list(frame.columns) == list(expected.columns)
    assert frame["run"].astype(str).tolist() == expected["run"].astype(str).tolist()
    assert frame["kind"].astype(str).tolist() == expected["kind"].astype(str).tolist()
    files = sorted((tmp_path / "ev" / "events").glob("*.parquet"))
    pd.testing.assert_frame_equal(read_ledger(files).drop(columns="payload"),
                                  expected.drop(columns="payload"))


def test_a_folder_holding_parts_is_refused_and_no_temporary_file_is_left(
        tmp_path: Path) -> None:
    factory = TaskFactory(TASK)
    simulate_to(tmp_path / "o", factory, DELIVERY_POLICY, n=5, seed=0, executor=InlineExecutor())
    assert not [p for p in (tmp_path / "o").rglob(".*")]
    with pytest.raises(SimulationError, match="already holds Parquet parts"):
        simulate_to(tmp_path / "o", factory, DELIVERY_POLICY, n=5, seed=0)
    with pytest.raises(SimulationError, match="outcomes, not events"):
        simulate_to(tmp_path / "p", factory, DELIVERY_POLICY, n=5, seed=0).ledger()


def test_progress_shows_on_stderr_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    simulate(TaskFactory(TASK), DELIVERY_POLICY, n=12, seed=0, executor=InlineExecutor(),
             progress=True)
    err = capsys.readouterr().err
    assert "12/12" in err
    assert "runs" in err
    simulate(TaskFactory(TASK), DELIVERY_POLICY, n=12, seed=0, executor=InlineExecutor())
    assert capsys.readouterr().err == ""  # not a terminal: quiet


def test_an_unknown_executor_is_refused() -> None:
    with pytest.raises(SimulationError, match="scheduler address"):
        simulate(TaskFactory(TASK), DELIVERY_POLICY, n=3, seed=0, executor="threads")
    with pytest.raises(SimulationError, match=r"concurrent\.futures\.Executor"):
        simulate(TaskFactory(TASK), DELIVERY_POLICY, n=3, seed=0, executor=3)


@pytest.mark.slow  # starts a real Dask cluster (about 2 s on a quiet machine)
def test_a_dask_cluster_and_its_address_run_unchanged_and_write_their_parts(
        tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    factory = TaskFactory(TASK)
    expected = simulate(factory, DELIVERY_POLICY, n=40, seed=9, executor=InlineExecutor())
    with distributed.LocalCluster(processes=False, n_workers=2, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        by_cluster = simulate(factory, DELIVERY_POLICY, n=40, seed=9, executor=cluster)
        out = simulate_to(tmp_path / "dask", factory, DELIVERY_POLICY, n=40, seed=9,
                          executor=cluster.scheduler_address)
    pd.testing.assert_frame_equal(by_cluster, expected)
    pd.testing.assert_frame_equal(out.outcomes(), expected)


def test_a_parquet_ledger_writes_batches_that_read_back_as_the_memory_ledger(
        tmp_path: Path) -> None:
    from crewbook.core.sinks import MemoryLedger, ParquetLedger
    from crewbook.simulate import run_reports

    factory = TaskFactory(TASK)
    pairs = run_reports(factory, DELIVERY_POLICY, 3, seed=1, times=True)
    frames = []
    sink = ParquetLedger(tmp_path / "pq", "task-1", loop="coordinator", batch=4)
    for ledger in (MemoryLedger("task-1", loop="coordinator"), sink):
        loop = factory()
        loop.ledger = ledger
        with_ledger: Any = ledger
        clock = loop.clock
        for report, at in pairs:  # as replay_run steps a run again
            clock.catch_up(at)  # type: ignore[attr-defined]
            loop.report(report)
            clock.advance(ms=getattr(report, "duration_ms", None) or 0)  # type: ignore[attr-defined]
        if isinstance(with_ledger, ParquetLedger):
            held = len(with_ledger) - with_ledger.written
            assert 0 <= held < 4  # never more than a batch in memory
            with_ledger.close()
            frames.append(read_ledger(sorted((tmp_path / "pq").glob("*.parquet"))))
        else:
            frames.append(with_ledger.frame())
    memory, parquet = frames
    assert len(sink.parts) == -(-len(memory) // 4)
    assert not list((tmp_path / "pq").glob(".*"))
    pd.testing.assert_frame_equal(parquet.drop(columns="payload"),
                                  memory.drop(columns="payload"))
    # the ledger's Parquet reader leaves out null members of a payload (ledger/reader.py)
    assert ([without_nulls(p) for p in parquet["payload"]]
            == [without_nulls(p) for p in memory["payload"]])
