"""Where simulated runs execute: in this process, a process pool, or any
`concurrent.futures.Executor` (a Dask ``distributed`` client's ``get_executor()``).

The engine cuts the runs into chunks and submits one task per chunk; every run draws
from its own seed (derived from the simulation's seed and the run's index), so the
results are identical whatever the executor, its workers or the chunking.

- `InlineExecutor`: runs each task when it is submitted (no threads, no pickling);
  the default for small simulations.
- `default_executor(n)`: inline up to `INLINE_RUNS` runs, else a process pool with one
  worker per core (`os.process_cpu_count` or `os.cpu_count`).
- Dask: ``Client(cluster).get_executor()``; documented in docs/simulate.md.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

#: Up to this many runs, the default executor is `InlineExecutor`.
INLINE_RUNS = 2_000


class InlineExecutor(Executor):
    """Runs each submitted call at once, in this process (futures come back done)."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # handed to the caller through the future
            future.set_exception(exc)
        return future

    def __repr__(self) -> str:
        return "<InlineExecutor>"


def cores() -> int:
    """The cores this process may use."""
    counter = getattr(os, "process_cpu_count", None) or os.cpu_count
    return max(1, counter() or 1)


def default_executor(n: int) -> tuple[Executor, bool]:
    """The executor for `n` runs, and whether the caller must shut it down."""
    if n <= INLINE_RUNS or cores() == 1:
        return InlineExecutor(), False
    return ProcessPoolExecutor(max_workers=cores()), True


def workers_of(executor: Executor) -> int:
    """How many tasks `executor` runs at once (a guess for chunking; 1 inline)."""
    if isinstance(executor, InlineExecutor):
        return 1
    found = getattr(executor, "_max_workers", None)
    if isinstance(found, int) and found > 0:
        return found
    client = getattr(executor, "_client", None)  # dask.distributed's ClientExecutor
    if client is not None:
        try:
            threads: int = sum(client.nthreads().values())
        except Exception:  # any failure: fall back to a fair guess
            return cores()
        return max(1, threads)
    return cores()


def chunks(n: int, workers: int, *, per_worker: int = 4, largest: int = 5_000
           ) -> list[tuple[int, int]]:
    """``[start, stop)`` ranges covering ``range(n)``: about `per_worker` per worker."""
    if n <= 0:
        return []
    size = max(1, min(largest, -(-n // (workers * per_worker))))
    return [(start, min(n, start + size)) for start in range(0, n, size)]
