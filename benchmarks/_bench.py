"""What the benchmarks share: a ledger that drops events, a median rate, the best time,
the ratio table against the peer, the machine's load, and one line per target
(`report_target`) saying met or missed beside the peer measured in the same run."""

from __future__ import annotations

import gc
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any


class NullSink:
    """A ledger that drops every event."""

    def append(self, event: Any) -> Any:
        return event


def rate(run: Callable[[int], int], runs: int, repeat: int = 5, *,
         cpu: dict[str, float] | None = None, name: str = "") -> float:
    """Median units per second of `run(runs)` (which returns the units done), warmed up.

    With `cpu`, also stores ``cpu[name]``: the median units per second of this process's
    CPU time (`time.process_time`, user + system). On a shared, loaded machine the wall
    clock counts the time other programs held the CPU, so a ratio of CPU rates compares
    two sides more fairly than a ratio of wall rates (both are printed)."""
    run(max(1, runs // 10))
    rates: list[float] = []
    cpu_rates: list[float] = []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        done = run(runs)
        rates.append(done / (time.perf_counter() - start))
        cpu_rates.append(done / max(time.process_time() - start_cpu, 1e-9))
    if cpu is not None:
        cpu[name] = statistics.median(cpu_rates)
    return statistics.median(rates)


def rates(runners: dict[str, Callable[[int], int]], runs: int, repeat: int = 5, *,
          cpu: dict[str, float] | None = None) -> dict[str, float]:
    """Units per second of each of `runners` (name: ``run(runs)`` returning the units
    done) in its fastest of `repeat` rounds taken in turns: every runner's first measure,
    then every runner's second, and so on, after one warm-up each.

    Measuring one side's five runs and then the other's (as `rate` does, one at a time)
    lets the load of a shared machine change between the sides, so two runs of the same
    script disagreed (0.26x in one, 0.35x in the next). Taken in turns, both sides see the
    same moments; the fastest round of each is the one least disturbed by other programs
    (the figure `timeit` advises), the same rule for every side. With `cpu`, also stores
    ``cpu[name]``: the best rate of this process's CPU time (see `rate`)."""
    for run in runners.values():
        run(max(1, runs // 10))
    wall: dict[str, list[float]] = {name: [] for name in runners}
    spent: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(repeat):
        for name, run in runners.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            done = run(runs)
            wall[name].append(done / (time.perf_counter() - start))
            spent[name].append(done / max(time.process_time() - start_cpu, 1e-9))
    if cpu is not None:
        cpu.update({name: max(values) for name, values in spent.items()})
    return {name: max(values) for name, values in wall.items()}


def best(fn: Callable[[], Any], repeat: int) -> float:
    """Best wall time of `repeat` calls, in seconds (a collection before each; what a
    call returns is dropped before the next)."""
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        kept = fn()
        times.append(time.perf_counter() - start)
        del kept
    return min(times)


def have_peer() -> bool:
    """Whether the peer library `transitions` is installed (the `bench` extra); says so if not."""
    try:
        import transitions  # noqa: F401
    except ImportError:
        print("this benchmark needs the peer library: pip install transitions", file=sys.stderr)
        return False
    return True


def print_vs_peer(title: str, peer: float, results: dict[str, float], unit: str = "") -> None:
    """A table of rates and their ratio to the peer's (`transitions`)."""
    print(title)
    print(f"  {'transitions (peer)':<26}{peer:>12,.0f}{unit}")
    for name, value in results.items():
        print(f"  {name:<26}{value:>12,.0f}{unit}   {value / peer:5.2f}x transitions")


def machine_load() -> str:
    """The 1/5/15-minute load averages over the number of CPUs, e.g. ``"load 3.10 2.05 1.80
    on 2 CPUs"``: a ratio measured on a busy machine says so beside it."""
    cpus = os.cpu_count() or 1
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:  # not available on this platform
        return f"load unknown on {cpus} CPUs"
    return f"load {one:.2f} {five:.2f} {fifteen:.2f} on {cpus} CPUs"


def report_target(name: str, ours: float, peer: float, target: float, *,
                  higher_is_better: bool = True, peer_name: str = "transitions") -> bool:
    """Print one target line and return whether it is met.

    The ratio is ``ours / peer`` (two figures measured in the same run, in the same unit);
    the target is met when the ratio is ``>= target`` (or ``<= target`` with
    ``higher_is_better=False``, for times and memory). The machine load is printed beside
    it, since the machine may be shared. Example::

        report_target("crew acts/s, no ledger", 12_000, 10_000, 1.0)
        # target crew acts/s, no ledger: 1.20x transitions (>= 1.00x): met [load 0.52 ...]
    """
    ratio = ours / peer if peer else float("inf")
    met = ratio >= target if higher_is_better else ratio <= target
    sign = ">=" if higher_is_better else "<="
    print(f"target {name}: {ratio:.2f}x {peer_name} ({sign} {target:.2f}x): "
          f"{'met' if met else 'missed'} [{machine_load()}]")
    return met


def print_loop_targets(what: str, with_ledger: float, without: float, peer: float,
                       cpu: dict[str, float] | None = None, *,
                       ledger_target: float = 0.5, cpu_only: bool = False) -> None:
    """The loop targets for `what` (e.g. ``"crew acts/s"``), from three rates measured in the
    same run: with a ledger file at least `ledger_target` of the peer's (half unless a loop
    sets its own), with no ledger at least the peer's.

    With `cpu` (``rate(..., cpu=cpu, name=...)`` for the names ``"peer"``, ``"ledger file"``
    and ``"no ledger"``), the same two ratios of CPU-time rates follow, marked as such:
    the figures to compare on a loaded machine. ``cpu_only=True`` (a loop whose targets
    are set in CPU time) judges the CPU-time ratios only."""
    if not cpu_only:
        report_target(f"{what}, ledger file", with_ledger, peer, ledger_target)
        report_target(f"{what}, no ledger", without, peer, 1.0)
    if cpu is not None and {"peer", "ledger file", "no ledger"} <= cpu.keys():
        report_target(f"{what}, ledger file (CPU time)", cpu["ledger file"], cpu["peer"],
                      ledger_target)
        report_target(f"{what}, no ledger (CPU time)", cpu["no ledger"], cpu["peer"], 1.0)
