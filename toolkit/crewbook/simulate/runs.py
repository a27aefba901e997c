"""One simulated run, and a chunk of runs (what each executor task does).

`play` steps a fresh loop with a policy's player until the loop finishes, the player
gives up (``unfinished``) or refuses pile up (``stuck``); `fast_runner` is the family's
simulator on plain data when it has one (`LoopFamily.fast_simulator`), used by
`run_chunk` for the same outcomes at a fraction of the cost. Run *i* draws from the i-th
child of the run's seed (`_rng`), so results depend only on the seed and the index.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.clock import ManualClock
from ..core.loop import Loop
from ..errors import LoopRefused
from .policies import Policy

if TYPE_CHECKING:
    from .frames import Outcomes

#: How a run ended when the loop did not finish it.
STUCK, UNFINISHED = "stuck", "unfinished"
MAX_ACTS, MAX_REFUSALS = 500, 20


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
    #: Play on plain data when the family offers it (`fast_runner`): same outcomes.
    fast: bool = True


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
    clock = ManualClock()
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


def fast_runner(spec: RunSpec) -> Callable[[Any], tuple[Any, ...]] | None:
    """The plain-data runner of `spec`'s loop (its family's ``fast_simulator``), or None
    when the runs need the full engine: events or reports to keep, a policy other than
    `RandomPolicy`, a loop its family does not play on plain data."""
    from ..core.family import Declined
    from ..families import family_of
    from .policies import RandomPolicy

    if not spec.fast or spec.ledger or spec.record or type(spec.policy) is not RandomPolicy:
        return None
    loop = spec.factory(**dict(spec.settings))
    family = family_of(loop)
    if family is None or isinstance(family.fast_simulator, Declined):
        return None
    return family.fast_simulator.runner(spec.policy.spec, loop, spec.max_acts,
                                        spec.max_refusals)


def run_chunk(spec: RunSpec, start: int, stop: int) -> list[RunResult]:
    """Play runs ``start..stop-1`` of `spec` (what each executor task does): on plain
    data when the family can (`fast_runner`), else act by act on the engine."""
    runner = fast_runner(spec)
    if runner is None:
        return [play(spec, i) for i in range(start, stop)]
    seed = spec.seed
    return [RunResult(i, *runner(_rng(seed, i))) for i in range(start, stop)]


def outcomes_chunk(spec: RunSpec, start: int, stop: int) -> Outcomes:
    """`run_chunk` as columns (what a worker sends back when no ledger is kept)."""
    from .frames import outcomes_of

    return outcomes_of(run_chunk(spec, start, stop))


__all__ = ["MAX_ACTS", "MAX_REFUSALS", "STUCK", "UNFINISHED", "RunResult", "RunSpec",
           "fast_runner", "outcomes_chunk", "play", "run_chunk", "run_name"]
