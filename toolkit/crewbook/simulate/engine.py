"""Monte Carlo runs of any loop: `simulate` (n runs of one setting) and `sweep` (n runs
of every setting of a grid), offline, with no model calls.

Each run builds a fresh loop (``loop_factory(**settings)``), gives it a simulated
clock (`SimClock`: starts at 2025-03-01 09:00 UTC and moves by the reported
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
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, overload

from ..core.loop import Loop
from ..errors import LoopRefused, SimulationError
from .executors import chunks, default_executor, workers_of
from .factories import as_factory
from .policies import Policy, SimClock, as_policy

if TYPE_CHECKING:
    import pandas as pd

#: How a run ended when the loop did not finish it.
STUCK, UNFINISHED = "stuck", "unfinished"
MAX_ACTS, MAX_REFUSALS = 500, 20
LedgerOption = bool | str | os.PathLike[str]


class Simulated(NamedTuple):
    """The outcomes of a simulation and its ledger (``simulate(..., ledger=True)``)."""

    outcomes: pd.DataFrame
    ledger: pd.DataFrame


@dataclass(frozen=True)
class RunSpec:
    """What a worker needs to play runs: everything picklable."""

    factory: Callable[..., Loop[Any, Any]]
    policy: Policy
    settings: tuple[tuple[str, Any], ...] = ()
    seed: int = 0
    ledger: bool = False
    prefix: str = "sim"
    max_acts: int = MAX_ACTS
    max_refusals: int = MAX_REFUSALS
    record: bool = False


@dataclass
class RunResult:
    """One run's outcome (a row of the outcomes frame), its ledger lines and reports."""

    run: int
    finished_reason: str
    finished: bool
    acts: int
    rounds: int
    refusals: int
    tokens_in: int
    tokens_out: int
    cost: float
    duration_ms: int
    attempts: dict[str, int]
    refused: dict[str, int]
    lines: list[str] = field(default_factory=list)
    reports: list[Any] = field(default_factory=list)


class _Discard:
    """A sink that keeps nothing (simulations without a ledger)."""

    __slots__ = ()

    def append(self, event: Any) -> Any:
        return event

    def append_many(self, events: Any) -> Any:
        return events


class _Collect:
    """A sink that keeps the events of one run, numbered."""

    __slots__ = ("events",)

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def append(self, event: Any) -> Any:
        self.events.append({**event, "seq": len(self.events)})
        return event

    def append_many(self, events: Any) -> Any:
        for event in events:
            self.append(event)
        return events


def run_name(prefix: str, index: int) -> str:
    """The ledger's name of run `index`."""
    return f"{prefix}-{index:05d}"


def _rng(seed: int, index: int) -> Any:
    import numpy as np

    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(index,))))


def play(spec: RunSpec, index: int, loop: Loop[Any, Any] | None = None) -> RunResult:
    """Play run `index` of `spec` (on `loop` when given, else a fresh one)."""
    from .lookup import players_of

    if loop is None:
        loop = spec.factory(**dict(spec.settings))
    clock = SimClock()
    loop.clock = clock
    sink = _Collect() if spec.ledger else _Discard()
    loop.ledger = sink
    loop.run = run_name(spec.prefix, index)
    player = spec.policy.start(loop, _rng(spec.seed, index), clock, index)
    attempts: Counter[str] = Counter()
    refused: Counter[str] = Counter()
    tokens_in = tokens_out = duration = 0
    cost = 0.0
    in_a_row = 0
    accepted: list[Any] = []
    reason: str | None = None
    contract = loop.contract()
    report_fn = loop.report
    while not contract.finished:
        if loop.acts >= spec.max_acts:
            reason = UNFINISHED
            break
        report = player.act(contract)
        at = clock.now
        if report is None:
            reason = UNFINISHED
            break
        try:
            after = report_fn(report)
        except LoopRefused as exc:
            refused[exc.code] += 1
            player.refused(contract, report, exc)
            in_a_row += 1
            if in_a_row >= spec.max_refusals:
                reason = STUCK
                break
            continue
        in_a_row = 0
        player.accepted(contract, report)
        if spec.record:
            accepted.append((report, at))
        role = contract.role or "-"
        if contract.attempt > attempts[role]:
            attempts[role] = contract.attempt
        ms = getattr(report, "duration_ms", None)
        if ms:
            duration += ms
            clock.advance(ms=ms)
        tokens_in += getattr(report, "tokens_in", None) or 0
        tokens_out += getattr(report, "tokens_out", None) or 0
        cost += getattr(report, "cost", None) or 0.0
        contract = after
    finished = contract.finished
    if finished:
        reason = str(contract.finished_reason)
    lines: list[str] = []
    if spec.ledger:
        from ..ledger.events import LedgerEvent

        assert isinstance(sink, _Collect)
        lines = [LedgerEvent.model_validate(e).to_line() for e in sink.events]
    return RunResult(index, str(reason), finished, loop.acts, players_of(loop).rounds(loop),
                     sum(refused.values()), tokens_in, tokens_out, round(cost, 6), duration,
                     dict(attempts), dict(refused), lines, accepted)


def run_chunk(spec: RunSpec, start: int, stop: int) -> list[RunResult]:
    """Play runs ``start..stop-1`` of `spec` (what each executor task does)."""
    return [play(spec, i) for i in range(start, stop)]


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


def _run(specs: Sequence[RunSpec], n: int, executor: Executor | None
         ) -> list[list[RunResult]]:
    if n < 0:
        raise SimulationError(f"n must be 0 or more, not {n}")
    own = False
    if executor is None:
        executor, own = default_executor(n * len(specs))
    try:
        ranges = chunks(n, max(1, workers_of(executor) // max(1, len(specs))) or 1)
        futures = [[executor.submit(run_chunk, spec, a, b) for a, b in ranges]
                   for spec in specs]
        return [[r for f in per_spec for r in f.result()] for per_spec in futures]
    finally:
        if own:
            executor.shutdown()


@overload
def simulate(loop_factory: Any, policy: Any, n: int = ..., *, seed: int | None = ...,
             executor: Executor | None = ..., ledger: Literal[False] = ...,
             settings: Mapping[str, Any] | None = ..., max_acts: int = ...,
             max_refusals: int = ...) -> pd.DataFrame: ...


@overload
def simulate(loop_factory: Any, policy: Any, n: int = ..., *, seed: int | None = ...,
             executor: Executor | None = ..., ledger: Literal[True],
             settings: Mapping[str, Any] | None = ..., max_acts: int = ...,
             max_refusals: int = ...) -> Simulated: ...


@overload
def simulate(loop_factory: Any, policy: Any, n: int = ..., *, seed: int | None = ...,
             executor: Executor | None = ..., ledger: str | os.PathLike[str],
             settings: Mapping[str, Any] | None = ..., max_acts: int = ...,
             max_refusals: int = ...) -> pd.DataFrame: ...


def simulate(loop_factory: Any, policy: Any, n: int = 10_000, *, seed: int | None = None,
             executor: Executor | None = None, ledger: LedgerOption = False,
             settings: Mapping[str, Any] | None = None, max_acts: int = MAX_ACTS,
             max_refusals: int = MAX_REFUSALS) -> pd.DataFrame | Simulated:
    """Run `n` simulated runs; one row per run (see `crewbook.simulate.frames`).

    `loop_factory`: ``factory(**settings) -> Loop``, a `Pipeline`, a `Task`, or a file
    (``.toml`` pipeline, ``.yaml`` task). `policy`: a `Policy`, a callable, policy data
    or a ``policy.yaml`` path. `settings`: passed to the factory (``policy.<key>``
    changes the policy). `executor`: any `concurrent.futures.Executor` (default:
    in-process up to 2,000 runs, else a process pool). `ledger`: ``True`` returns
    `Simulated` (outcomes and the events frame); a path writes the events there as a
    JSON Lines ledger. The seed used is in ``frame.attrs["crewbook_seed"]``.
    """
    from .frames import ledger_frame, outcomes_frame

    factory, chosen, loop_settings = _prepare(loop_factory, policy, settings or {})
    used = _seed(seed)
    spec = RunSpec(factory, chosen, tuple(loop_settings.items()), used, ledger is not False,
                   "sim", max_acts, max_refusals)
    results = _run([spec], n, executor)[0]
    frame = outcomes_frame(results)
    frame.attrs["crewbook_seed"] = used
    if ledger is False:
        return frame
    lines = [line for r in results for line in r.lines]
    if ledger is True:
        return Simulated(frame, ledger_frame(lines))
    _write(Path(ledger), lines)
    return frame


def sweep(loop_factory: Any, policy: Any, grid: Mapping[str, Sequence[Any]], n: int = 1_000, *,
          seed: int | None = None, executor: Executor | None = None,
          ledger: str | os.PathLike[str] | None = None, max_acts: int = MAX_ACTS,
          max_refusals: int = MAX_REFUSALS) -> pd.DataFrame:
    """`n` runs of every combination of `grid` (setting → values), as one tidy frame.

    Keys are loop settings (``max_retries``, ``launches.developer``, ``review``…) or
    ``policy.<key>`` (``policy.roles.qa.fail``). Columns: ``setting`` (the
    combination's number), one column per grid key, then the outcome columns of
    `simulate`. Every setting uses the same run seeds. `ledger`: a path to write every
    run's events to (runs named ``sim-s<setting>-<run>``).
    """
    from .frames import sweep_frame

    if not grid:
        raise SimulationError("a sweep needs a grid: setting → list of values")
    keys = list(grid)
    for key, values in grid.items():
        if isinstance(values, str | bytes) or not isinstance(values, Sequence) or not values:
            raise SimulationError(f"grid[{key!r}] must be a non-empty list of values")
    combos = list(itertools.product(*(list(grid[k]) for k in keys)))
    used = _seed(seed)
    specs = []
    for number, combo in enumerate(combos):
        factory, chosen, loop_settings = _prepare(loop_factory, policy, dict(zip(keys, combo,
                                                                                 strict=True)))
        specs.append(RunSpec(factory, chosen, tuple(loop_settings.items()), used,
                             ledger is not None, f"sim-s{number:02d}", max_acts, max_refusals))
    results = _run(specs, n, executor)
    frame = sweep_frame(keys, combos, results)
    frame.attrs["crewbook_seed"] = used
    if ledger is not None:
        _write(Path(ledger), [line for per in results for r in per for line in r.lines])
    return frame


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
    factory = as_factory(loop_factory)
    loop_settings = {k: v for k, v in (settings or {}).items() if not k.startswith("policy.")}
    pairs = run_reports(loop_factory, policy, index, seed=seed, settings=settings, times=True)
    loop = factory(**loop_settings)
    clock = SimClock()
    loop.clock = clock
    loop.run = run_name("sim", index)
    for report, at in pairs:
        clock.catch_up(at)
        loop.report(report)
        ms = getattr(report, "duration_ms", None)
        if ms:
            clock.advance(ms=ms)
    return loop
