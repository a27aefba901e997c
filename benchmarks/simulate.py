"""Monte Carlo simulation speed (issue 13): three goals, each printed met or missed.

1. Simulated acts per second (coordinator tasks, a random policy, in this process)
   against the pure-Python floor measured in the same run: a dict lookup and a tuple
   append per step. Goal: the floor is at most 15x faster.
2. 100,000 coordinator tasks with a random policy on 2 worker processes. Goal: under
   60 s.
3. A sweep of 12 settings x 10,000 runs on 1 worker process, then on 2. Goal: 2
   workers are at least 1.7x faster (needs 2 free cores; the machine's load is shown).

``--scale 0.1`` runs a tenth of goals 2 and 3 (then goal 2's time is extrapolated to
100,000 tasks and says so). Run: ``python benchmarks/simulate.py [--scale S]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

POLICY: dict[str, Any] = {
    "roles": {"qa": {"fail": 0.3}, "reviewer": {"fail": 0.2},
              "developer": {"question": 0.05}},
    "coordinator": {"finalise_early": 0.05},
}
GRID: dict[str, list[Any]] = {"launches.developer": [1, 2, 3, 5],
                              "policy.roles.qa.fail": [0.1, 0.3, 0.5]}


def factory() -> Any:
    from crewbook.simulate import TaskFactory

    return TaskFactory({"id": "csv-export", "description": "Export the report as CSV"})


def floor_rate(steps: int = 2_000_000) -> float:
    """Steps per second of the floor: a dict lookup and a tuple append per step."""
    table = {i: (i + 1) % 7 for i in range(7)}
    best = 0.0
    for _ in range(3):
        state, out = 0, []
        append = out.append
        start = time.perf_counter()
        for i in range(steps):
            state = table[state]
            append((state, i))
        best = max(best, steps / (time.perf_counter() - start))
    return best


def acts_rate(runs: int) -> tuple[float, int]:
    """Accepted acts per second of simulated coordinator tasks, in this process."""
    from crewbook.simulate import InlineExecutor, RandomPolicy, simulate

    policy, make = RandomPolicy(POLICY), factory()
    simulate(make, policy, n=max(1, runs // 10), seed=0, executor=InlineExecutor())  # warm
    best, acts = 0.0, 0
    for seed in (1, 2, 3):
        start = time.perf_counter()
        frame = simulate(make, policy, n=runs, seed=seed, executor=InlineExecutor())
        elapsed = time.perf_counter() - start
        acts = int(frame["acts"].sum())
        best = max(best, acts / elapsed)
    return best, acts


def timed(workers: int, fn: Any) -> float:
    with ProcessPoolExecutor(max_workers=workers) as pool:
        pool.submit(int, 0).result()  # the workers are up before the clock starts
        start = time.perf_counter()
        fn(pool)
        return time.perf_counter() - start


def verdict(ok: bool) -> str:
    return "met" if ok else "missed"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0,
                        help="fraction of goals 2 and 3 to run (default 1: the full goal)")
    parser.add_argument("--acts-runs", type=int, default=2_000,
                        help="tasks per measure of goal 1 (default 2000)")
    args = parser.parse_args(argv)
    from crewbook.simulate import RandomPolicy, simulate, sweep

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"simulation benchmark: {os.cpu_count()} cores, load average {load:.1f}, "
          f"scale {args.scale:g}")

    floor = floor_rate()
    rate, acts = acts_rate(args.acts_runs)
    ratio = floor / rate
    print(f"1. acts/s: floor (dict lookup + tuple append) {floor:,.0f}/s; simulated "
          f"coordinator {rate:,.0f} acts/s ({acts:,} acts in {args.acts_runs:,} tasks): the "
          f"floor is {ratio:,.1f}x faster; goal <= 15x: {verdict(ratio <= 15)}")

    tasks = max(1, round(100_000 * args.scale))
    policy, make = RandomPolicy(POLICY), factory()
    seconds = timed(2, lambda pool: simulate(make, policy, n=tasks, seed=7, executor=pool))
    full = seconds * 100_000 / tasks
    note = "" if tasks == 100_000 else f" (ran {tasks:,}: {seconds:.1f} s, extrapolated)"
    print(f"2. 100,000 coordinator tasks, random policy, 2 worker processes: {full:.1f} s"
          f"{note}; goal < 60 s: {verdict(full < 60)}")

    runs = max(1, round(10_000 * args.scale))

    def run_sweep(pool: Any) -> None:
        sweep(make, policy, GRID, n=runs, seed=3, executor=pool)

    one = timed(1, run_sweep)
    two = timed(2, run_sweep)
    speedup = one / two
    print(f"3. sweep of 12 settings x {runs:,} runs: 1 worker {one:.1f} s, 2 workers "
          f"{two:.1f} s: {speedup:.2f}x; goal >= 1.7x: {verdict(speedup >= 1.7)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
