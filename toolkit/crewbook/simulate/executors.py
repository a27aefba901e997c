"""Where simulated runs execute: in this process, a process pool, or any
`concurrent.futures.Executor` (a Dask ``distributed`` client's ``get_executor()``).

The engine cuts the runs into chunks and submits one task per chunk; every run draws
from its own seed (derived from the simulation's seed and the run's index), so the
results are identical whatever the executor, its workers or the chunking.

- `InlineExecutor`: runs each task when it is submitted (no threads, no pickling);
  the default for small simulations.
- `default_executor(n)`: inline up to `INLINE_RUNS` runs, else a process pool with one
  worker per core (`os.process_cpu_count` or `os.cpu_count`).
- Dask: ``executor="dask"`` (a `LocalCluster` here), a scheduler address
  (``"tcp://host:8786"``), a ``Client`` or a cluster, unchanged (`opened`); or
  ``Client(cluster).get_executor()``; documented in docs/simulate.md.

`progress_bar` is the bar a long simulation shows on stderr (tqdm).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from contextlib import contextmanager
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


#: What ``executor=`` accepts besides an `Executor`: ``"dask"`` (a new Dask
#: ``LocalCluster``), a scheduler address (``"tcp://host:8786"``), a Dask ``Client`` or
#: cluster (``LocalCluster``, any object with a ``scheduler_address``).
ExecutorOption = Any


@contextmanager
def opened(executor: ExecutorOption, n: int) -> Iterator[Executor]:
    """The executor `executor` names, for `n` runs; what this opens it also closes.

    Dask is imported only here, and only for a Dask option; a Dask cluster runs the
    same chunks a process pool does, so the runs are the same whatever runs them.
    """
    from ..errors import SimulationError, UsageError

    if executor is None:
        made, own = default_executor(n)
        try:
            yield made
        finally:
            if own:
                made.shutdown()
        return
    if isinstance(executor, Executor):
        yield executor
        return
    if not (isinstance(executor, str) or hasattr(executor, "get_executor")
            or hasattr(executor, "scheduler_address")):
        raise SimulationError(
            f"executor must be a concurrent.futures.Executor, 'dask', a Dask scheduler "
            f"address ('tcp://host:8786'), a Dask Client or cluster; not "
            f"{type(executor).__name__}")
    if isinstance(executor, str) and executor != "dask" and "://" not in executor:
        raise SimulationError(f"executor {executor!r}: give 'dask' or a scheduler address "
                              "such as 'tcp://127.0.0.1:8786'")
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise UsageError("a Dask executor needs the optional packages dask and distributed, "
                         "not installed here: pip install 'crewbook[dask]'") from None
    closing: list[Any] = []
    try:
        if hasattr(executor, "get_executor"):  # a Client: use it as it is
            client = executor
        elif isinstance(executor, str) and executor == "dask":
            cluster = LocalCluster(  # type: ignore[no-untyped-call]
                n_workers=cores(), threads_per_worker=1, dashboard_address=None)
            closing.append(cluster)
            client = Client(cluster)  # type: ignore[no-untyped-call]
            closing.insert(0, client)
        elif isinstance(executor, str):
            client = Client(executor)  # type: ignore[no-untyped-call]
            closing.append(client)
        else:  # a cluster object
            client = Client(executor)  # type: ignore[no-untyped-call]
            closing.append(client)
        yield client.get_executor()
    finally:
        for thing in closing:
            thing.close()


def progress_bar(total: int, enabled: bool | None, what: str = "runs") -> Any:
    """A progress bar over `total` runs on stderr (tqdm; a widget in a notebook), or
    None. ``enabled=None`` shows it when stderr is a terminal and not under CI, so
    scripts, logs and saved notebook outputs stay quiet unless asked."""
    import sys

    if enabled is None:
        enabled = bool(getattr(sys.stderr, "isatty", lambda: False)()) and \
            not os.environ.get("CI")
    if not enabled or total <= 0:
        return None
    from tqdm.auto import tqdm  # type: ignore[import-untyped]

    return tqdm(total=total, unit=" " + what, file=sys.stderr, smoothing=0.1,
                mininterval=0.5, dynamic_ncols=True)
