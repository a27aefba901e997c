"""What the loop benchmarks share: a ledger that drops events, and a median rate."""

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
