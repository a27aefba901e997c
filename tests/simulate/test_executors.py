"""The same seed gives the same runs in this process, a process pool, threads and a
Dask cluster; chunks cover every run once."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from crewbook.simulate import InlineExecutor, RandomPolicy, TaskFactory, simulate, sweep
from crewbook.simulate.executors import INLINE_RUNS, chunks, default_executor, workers_of

from .conftest import PIPELINE, PIPELINE_POLICY


@pytest.fixture(scope="module")
def reference() -> pd.DataFrame:
    return simulate(PIPELINE, PIPELINE_POLICY, n=120, seed=11, executor=InlineExecutor())


def test_a_process_pool_gives_the_same_runs(reference: pd.DataFrame) -> None:
    with ProcessPoolExecutor(max_workers=2) as pool:
        frame = simulate(PIPELINE, PIPELINE_POLICY, n=120, seed=11, executor=pool)
    pd.testing.assert_frame_equal(frame, reference)


def test_threads_give_the_same_runs(reference: pd.DataFrame) -> None:
    with ThreadPoolExecutor(max_workers=3) as pool:
        frame = simulate(PIPELINE, PIPELINE_POLICY, n=120, seed=11, executor=pool)
    pd.testing.assert_frame_equal(frame, reference)


def test_a_dask_cluster_gives_the_same_runs(reference: pd.DataFrame) -> None:
    distributed = pytest.importorskip(
        "distributed", reason="dask[distributed] is not installed (the dev extra has it)")
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=2,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        executor = client.get_executor()
        assert workers_of(executor) == 2
        frame = simulate(PIPELINE, PIPELINE_POLICY, n=120, seed=11, executor=executor)
        task = TaskFactory({"description": "Export the report as CSV"})
        policy = RandomPolicy(roles={"qa": {"fail": 0.4}})
        grid = {"policy.roles.qa.fail": [0.1, 0.5], "launches.developer": [2, 5]}
        on_dask = sweep(task, policy, grid, n=30, seed=2, executor=executor)
    pd.testing.assert_frame_equal(frame, reference)
    pd.testing.assert_frame_equal(on_dask, sweep(task, policy, grid, n=30, seed=2,
                                                 executor=InlineExecutor()))


def test_the_default_executor_depends_on_the_runs() -> None:
    small, own = default_executor(INLINE_RUNS)
    assert isinstance(small, InlineExecutor)
    assert not own
    large, own = default_executor(INLINE_RUNS + 1)
    try:
        from crewbook.simulate.executors import cores

        if cores() > 1:
            assert isinstance(large, ProcessPoolExecutor)
            assert own
    finally:
        large.shutdown()


def test_inline_futures_carry_errors() -> None:
    future = InlineExecutor().submit(int, "x")
    with pytest.raises(ValueError, match="invalid literal"):
        future.result()


@given(st.integers(0, 5000), st.integers(1, 64))
def test_chunks_cover_every_run_once(n: int, workers: int) -> None:
    ranges = chunks(n, workers)
    covered = [i for a, b in ranges for i in range(a, b)]
    assert covered == list(range(n))
    assert all(b > a for a, b in ranges)
