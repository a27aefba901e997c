"""Monte Carlo runs of any loop: `simulate` (n runs of one setting) and `sweep` (n runs
of every setting of a grid), offline, with no model calls.

Each run builds a fresh loop (``loop_factory(**settings)``), gives it a simulated
clock (a `ManualClock`: starts at 2025-03-01 09:00 UTC and moves by the reported
durations) and asks the policy for a player; then, until the loop finishes, the
player reports on each contract and the loop's own rules accept or refuse. A
refusal changes nothing and is *counted* (per code); after `max_refusals` refusals in
a row the run ends ``stuck``; after `max_acts` accepted acts, or when the player gives
up, ``unfinished``.

Seeds: run *i* draws from ``numpy.random.SeedSequence(seed, spawn_key=(i,))`` (the
i-th child of ``SeedSequence(seed).spawn(n)``), so results depend only on the seed
and the run index: identical whatever the executor or chunking. A sweep gives every
setting the same run seeds (common random numbers), so settings differ only by
what they change.

The optional ledger holds every event of every run in the standard format
(`read_ledger` and every analysis read it); run *i* is named ``sim-000i`` (in a
sweep ``sim-s01-000i``). `run_reports` gives the accepted reports of one run, so a
Stepper (or `replay_run`) can step that run again act by act.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, as_completed
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, overload

from ..core.clock import ManualClock
from ..core.loop import Loop
from ..errors import SimulationError
from .executors import ExecutorOption, chunks, opened, progress_bar, workers_of
from .factories import as_factory
from .policies import Policy, as_policy
from .runs import (
    MAX_ACTS,
    MAX_REFUSALS,
    STUCK,
    UNFINISHED,
    RunResult,
    RunSpec,
    fast_runner,
    outcomes_chunk,
    play,
    run_chunk,
    run_name,
)

if TYPE_CHECKING:
    import pandas as pd

    from .frames import Outcomes
    from .sink import SimulationFolder

LedgerOption = bool | str | os.PathLike[str]


class Simulated(NamedTuple):
    """The outcomes of a simulation and its ledger (``simulate(..., ledger=True)``)."""

    outcomes: pd.DataFrame
    ledger: pd.DataFrame


# ------------------------------------------------------------------------ public API
def _prepare(loop_factory: Any, policy: Any, settings: Mapping[str, Any]
             ) -> tuple[Callable[..., Loop[Any, Any]], Policy, dict[str, Any]]:
    factory = as_factory(loop_factory)
    chosen = as_policy(policy)
    loop_settings: dict[str, Any] = {}
    for key, value in settings.items():
        if key.startswith("policy."):
            chosen = chosen.with_setting(key.split(".", 1)[1], value)
        else:
            loop_settings[key] = value
    probe = factory(**loop_settings)
    if not isinstance(probe, Loop):
        raise SimulationError(f"the loop factory returned {type(probe).__name__}, not a Loop")
    chosen.check(probe)
    return factory, chosen, loop_settings


def _seed(seed: int | None) -> int:
    if seed is None:
        import numpy as np

        return int(np.random.SeedSequence().entropy % (2**63))  # type: ignore[operator]
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise SimulationError(f"seed must be a whole number >= 0, not {seed!r}")
    return seed


def _run(specs: Sequence[RunSpec], n: int, executor: Any, progress: bool | None = None
         ) -> list[list[RunResult]] | list[list[Outcomes]]:
    """Per spec, its runs' results in order: `RunResult` objects when the runs keep
    their ledger lines, else chunks of `Outcomes` (columns: cheap to send back)."""
    if n < 0:
        raise SimulationError(f"n must be 0 or more, not {n}")
    with opened(executor, n * len(specs)) as pool:
        ranges = chunks(n, max(1, workers_of(pool) // max(1, len(specs))) or 1)
        sizes = [b - a for a, b in ranges] * len(specs)
        if not any(spec.ledger or spec.record for spec in specs):
            parts = [[pool.submit(outcomes_chunk, spec, a, b) for a, b in ranges]
                     for spec in specs]
            _follow([f for per in parts for f in per], sizes, n * len(specs), progress)
            return [[f.result() for f in per_spec] for per_spec in parts]
        futures = [[pool.submit(run_chunk, spec, a, b) for a, b in ranges] for spec in specs]
        _follow([f for per in futures for f in per], sizes, n * len(specs), progress)
        return [[r for f in per_spec for r in f.result()] for per_spec in futures]


def _follow(futures: Sequence[Future[Any]], sizes: Sequence[int], total: int,
            progress: bool | None) -> None:
    """Move the progress bar (when there is one) as chunks finish."""
    bar = progress_bar(total, progress)
    if bar is None:
        return
    size = {id(f): s for f, s in zip(futures, sizes, strict=True)}
    try:
        for done in as_completed(futures):
            bar.update(size[id(done)])
    finally:
        bar.close()


@overload
def simulate(loop_factory: Any, policy: Any, n: int = ..., *, seed: int | None = ...,
             executor: ExecutorOption = ..., ledger: Literal[False] = ...,
             settings: Mapping[str, Any] | None = ..., max_acts: int = ...,
             max_refusals: int = ..., progress: bool | None = ..., fast: bool = ...
             ) -> pd.DataFrame: ...


@overload
def simulate(loop_factory: Any, policy: Any, n: int = ..., *, seed: int | None = ...,
             executor: ExecutorOption = ..., ledger: Literal[True],
             settings: Mapping[str, Any] | None = ..., max_acts: int = ...,
             max_refusals: int = ..., progress: bool | None = ..., fast: bool = ...
             ) -> Simulated: ...


@overload
def simulate(loop_factory: Any, policy: Any, n: int = ..., *, seed: int | None = ...,
             executor: ExecutorOption = ..., ledger: str | os.PathLike[str],
             settings: Mapping[str, Any] | None = ..., max_acts: int = ...,
             max_refusals: int = ..., progress: bool | None = ..., fast: bool = ...
             ) -> pd.DataFrame: ...


def simulate(loop_factory: Any, policy: Any, n: int = 10_000, *, seed: int | None = None,
             executor: ExecutorOption = None, ledger: LedgerOption = False,
             settings: Mapping[str, Any] | None = None, max_acts: int = MAX_ACTS,
             max_refusals: int = MAX_REFUSALS, progress: bool | None = None,
             fast: bool = True) -> pd.DataFrame | Simulated:
    """Run `n` simulated runs; one row per run (see `crewbook.simulate.frames`).

    `loop_factory`: ``factory(**settings) -> Loop``, a `Pipeline`, a `Task`, or a file
    (``.toml`` pipeline, ``.yaml`` task). `policy`: a `Policy`, a callable, policy data
    or a ``policy.yaml`` path. `settings`: passed to the factory (``policy.<key>``
    changes the policy). `executor`: any `concurrent.futures.Executor` (default:
    in-process up to 2,000 runs, else a process pool), ``"dask"``, a Dask scheduler
    address, ``Client`` or cluster. `ledger`: ``True`` returns `Simulated` (outcomes
    and the events frame); a path writes the events there as a JSON Lines ledger.
    `progress`: a bar on stderr (default: when stderr is a terminal). `fast`: play on
    plain data where the family can (same outcomes; ``False`` steps the engine). The
    seed used is in ``frame.attrs["crewbook_seed"]``. For more runs than memory holds,
    `simulate_to` streams them to Parquet.
    """
    from .frames import ledger_frame, outcomes_frame

    factory, chosen, loop_settings = _prepare(loop_factory, policy, settings or {})
    used = _seed(seed)
    spec = RunSpec(factory, chosen, tuple(loop_settings.items()), used, ledger is not False,
                   "sim", max_acts, max_refusals, fast=fast)
    results = _run([spec], n, executor, progress)[0]
    frame = outcomes_frame(results)
    frame.attrs["crewbook_seed"] = used
    if ledger is False:
        return frame
    lines = [line for r in results if isinstance(r, RunResult) for line in r.lines]
    if ledger is True:
        return Simulated(frame, ledger_frame(lines))
    _write(Path(ledger), lines)
    return frame


def sweep(loop_factory: Any, policy: Any, grid: Mapping[str, Sequence[Any]], n: int = 1_000, *,
          seed: int | None = None, executor: ExecutorOption = None,
          ledger: str | os.PathLike[str] | None = None, max_acts: int = MAX_ACTS,
          max_refusals: int = MAX_REFUSALS, progress: bool | None = None,
          fast: bool = True) -> pd.DataFrame:
    """`n` runs of every combination of `grid` (setting → values), as one tidy frame.

    Keys are loop settings (``max_retries``, ``launches.developer``, ``review``…) or
    ``policy.<key>`` (``policy.roles.qa.fail``). Columns: ``setting`` (the
    combination's number), one column per grid key, then the outcome columns of
    `simulate`. Every setting uses the same run seeds. `ledger`: a path to write every
    run's events to (runs named ``sim-s<setting>-<run>``). `executor`, `progress`,
    `fast`: as for `simulate`.
    """
    from .frames import sweep_frame

    used = _seed(seed)
    keys, combos, specs = _sweep_specs(loop_factory, policy, grid, used, ledger is not None,
                                       max_acts, max_refusals, fast)
    results = _run(specs, n, executor, progress)
    frame = sweep_frame(keys, combos, results)
    frame.attrs["crewbook_seed"] = used
    if ledger is not None:
        _write(Path(ledger), [line for per in results for r in per
                              if isinstance(r, RunResult) for line in r.lines])
    return frame


def _sweep_specs(loop_factory: Any, policy: Any, grid: Mapping[str, Sequence[Any]], seed: int,
                 ledger: bool, max_acts: int, max_refusals: int, fast: bool
                 ) -> tuple[list[str], list[tuple[Any, ...]], list[RunSpec]]:
    """The grid's keys, its combinations and one spec per combination."""
    if not grid:
        raise SimulationError("a sweep needs a grid: setting → list of values")
    keys = list(grid)
    for key, values in grid.items():
        if isinstance(values, str | bytes) or not isinstance(values, Sequence) or not values:
            raise SimulationError(f"grid[{key!r}] must be a non-empty list of values")
    combos = list(itertools.product(*(list(grid[k]) for k in keys)))
    specs = []
    for number, combo in enumerate(combos):
        factory, chosen, loop_settings = _prepare(loop_factory, policy, dict(zip(keys, combo,
                                                                                 strict=True)))
        specs.append(RunSpec(factory, chosen, tuple(loop_settings.items()), seed, ledger,
                             f"sim-s{number:02d}", max_acts, max_refusals, fast=fast))
    return keys, combos, specs


def chunk_to_folder(spec: RunSpec, start: int, stop: int, folder: str, part: str,
                    front: tuple[tuple[str, Any, Any], ...]) -> tuple[int, int]:
    """Play runs ``start..stop-1`` and write them (and their events) as Parquet parts in
    `folder` (what each executor task does for `simulate_to`); (runs, acts)."""
    from .sink import write_chunk

    results = run_chunk(spec, start, stop)
    write_chunk(Path(folder), part, results, front, spec.ledger)
    return len(results), sum(r.acts for r in results)


def simulate_to(out: str | os.PathLike[str], loop_factory: Any, policy: Any, n: int = 10_000,
                *, grid: Mapping[str, Sequence[Any]] | None = None,
                settings: Mapping[str, Any] | None = None, seed: int | None = None,
                executor: ExecutorOption = None, events: bool = False,
                progress: bool | None = None, max_acts: int = MAX_ACTS,
                max_refusals: int = MAX_REFUSALS, fast: bool = True) -> SimulationFolder:
    """`simulate` (or, with `grid`, `sweep`) streamed to a folder of Parquet files, in
    memory bounded by one chunk of runs whatever `n` (`crewbook.simulate.sink`).

    ``out/runs/`` gets one row per run (``setting`` and the grid's keys first in a
    sweep); with ``events=True``, ``out/events/`` gets every run's ledger events with
    `read_ledger`'s columns (the events need the full engine: slower). Workers write
    their own parts, so a Dask cluster needs `out` on a filesystem they share. Returns
    a `SimulationFolder` (``.outcomes()`` reads the runs back as `simulate`'s frame).
    """
    from .sink import SimulationFolder, arrow_type, check_out

    if n < 0:
        raise SimulationError(f"n must be 0 or more, not {n}")
    folder = Path(out)
    check_out(folder)
    used = _seed(seed)
    if grid is not None:
        if settings:
            grid = {**{k: [v] for k, v in settings.items()}, **grid}
        keys, combos, specs = _sweep_specs(loop_factory, policy, grid, used, events, max_acts,
                                           max_refusals, fast)
        types = [arrow_type([c[i] for c in combos]) for i in range(len(keys))]
        fronts = [(("setting", number, arrow_type([0])),
                   *((k, v, t) for k, v, t in zip(keys, combo, types, strict=True)))
                  for number, combo in enumerate(combos)]
    else:
        factory, chosen, loop_settings = _prepare(loop_factory, policy, settings or {})
        specs = [RunSpec(factory, chosen, tuple(loop_settings.items()), used, events, "sim",
                         max_acts, max_refusals, fast=fast)]
        fronts = [()]
    folder.mkdir(parents=True, exist_ok=True)
    runs = acts = 0
    with opened(executor, n * len(specs)) as pool:
        ranges = chunks(n, max(1, workers_of(pool) // max(1, len(specs))) or 1)
        futures = [pool.submit(chunk_to_folder, spec, a, b, str(folder),
                               f"part-s{number:03d}-{a:09d}", front)
                   for number, (spec, front) in enumerate(zip(specs, fronts, strict=True))
                   for a, b in ranges]
        _follow(futures, [b - a for a, b in ranges] * len(specs), n * len(specs), progress)
        for future in futures:
            done, acted = future.result()
            runs += done
            acts += acted
    return SimulationFolder(folder, runs, acts, events, used, len(specs))


def _write(path: Path, lines: Sequence[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for line in lines:
            out.write(line + "\n")


@overload
def run_reports(loop_factory: Any, policy: Any, index: int, *, seed: int,
                settings: Mapping[str, Any] | None = ..., times: Literal[False] = ...,
                max_acts: int = ..., max_refusals: int = ...) -> list[Any]: ...


@overload
def run_reports(loop_factory: Any, policy: Any, index: int, *, seed: int,
                settings: Mapping[str, Any] | None = ..., times: Literal[True],
                max_acts: int = ..., max_refusals: int = ...) -> list[tuple[Any, datetime]]: ...


def run_reports(loop_factory: Any, policy: Any, index: int, *, seed: int,
                settings: Mapping[str, Any] | None = None, times: bool = False,
                max_acts: int = MAX_ACTS, max_refusals: int = MAX_REFUSALS
                ) -> list[Any] | list[tuple[Any, datetime]]:
    """The accepted reports of run `index` of ``simulate(..., seed=seed)``, in order:
    what a Stepper (or `replay_run`, or ``ReplayPolicy([reports])``) steps through to
    watch that run act by act. With ``times=True``, ``(report, simulated time)`` pairs
    (a delivery timer's ``Expire`` needs its time to be accepted again)."""
    factory, chosen, loop_settings = _prepare(loop_factory, policy, settings or {})
    spec = RunSpec(factory, chosen, tuple(loop_settings.items()), _seed(seed), False, "sim",
                   max_acts, max_refusals, record=True)
    pairs: list[tuple[Any, datetime]] = play(spec, index).reports
    return pairs if times else [report for report, _ in pairs]


def replay_run(loop_factory: Any, policy: Any, index: int, *, seed: int,
               settings: Mapping[str, Any] | None = None) -> Loop[Any, Any]:
    """A fresh loop with run `index`'s accepted reports applied (its ledger in memory):
    the simulated run, rebuilt for a notebook to inspect, draw or step on from."""
    from .lookup import duration_of

    factory = as_factory(loop_factory)
    loop_settings = {k: v for k, v in (settings or {}).items() if not k.startswith("policy.")}
    pairs = run_reports(loop_factory, policy, index, seed=seed, settings=settings, times=True)
    loop = factory(**loop_settings)
    clock = ManualClock()
    loop.clock = clock
    loop.run = run_name("sim", index)
    duration = duration_of(loop)
    for report, at in pairs:
        clock.catch_up(at)
        loop.report(report)
        ms = duration(report)
        if ms:
            clock.advance(ms=ms)
    return loop


#: The public names, with those of `simulate.runs` it re-exports (one run, a chunk).
__all__ = ["MAX_ACTS", "MAX_REFUSALS", "STUCK", "UNFINISHED", "LedgerOption", "RunResult",
           "RunSpec", "Simulated", "chunk_to_folder", "fast_runner", "outcomes_chunk", "play",
           "replay_run", "run_chunk", "run_name", "run_reports", "simulate", "simulate_to",
           "sweep"]
