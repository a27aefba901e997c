"""What the loop benchmarks share: a ledger that drops events, a median rate, and the
ratio table against the peer with its two targets."""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from typing import Any


class NullSink:
    """A ledger that drops every event."""

    def append(self, event: Any) -> Any:
        return event


def rate(run: Callable[[int], int], runs: int, repeat: int = 5) -> float:
    """Median units per second of `run(runs)` (which returns the units done), warmed up."""
    run(max(1, runs // 10))
    rates: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = run(runs)
        rates.append(done / (time.perf_counter() - start))
    return statistics.median(rates)


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


def print_loop_targets(with_ledger: float, without: float) -> None:
    """The loop targets: within 2x of the peer with a ledger file, faster without one."""
    print(f"target: ledger on within 2x of transitions (ratio >= 0.50): "
          f"{'met' if with_ledger >= 0.5 else 'missed'} ({with_ledger:.2f})")
    print(f"target: no ledger at least as fast as transitions (ratio >= 1): "
          f"{'met' if without >= 1 else 'missed'} ({without:.2f})")
