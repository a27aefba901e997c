"""Monte Carlo simulation speed and memory (issues 13 and 25): each target printed met or
missed beside the peer measured in the same run, with the machine's load.

1. Simulated coordinator acts per second (a random policy, in this process: the
   plain-data path, and the engine act by act for reference) against `transitions`
   driving the same machine in the same run: a `transitions.Machine` with the
   coordinator's states, triggers and guards, played by the same random policy (the
   same draws: duration and tokens of each act, QA's and the reviewer's verdicts,
   questions). Target: simulated acts/s >= transitions' acts/s.
2. 100,000 coordinator tasks with a random policy on 2 worker processes. Target: < 60 s.
3. A sweep of 12 settings x 10,000 runs on 1 worker process, then on 2. Target: 2 workers
   at least 1.7x faster (needs 2 free cores: the load is printed beside it).
4. Bounded memory: `simulate_to` streams N/10 then N runs to Parquet (in a fresh
   process each, 2 workers); the peak RSS of the caller and of a worker must not grow
   with N (target: the N run peaks within 1.25x of the N/10 run's, + 20 MB).

``--scale 0.1`` runs a tenth of targets 2 and 3 (target 2's time is then extrapolated
and says so); ``--stream-runs 1000000`` streams a million runs in target 4 (default
100,000). Run: ``python benchmarks/simulate.py [--scale S] [--stream-runs N]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import have_peer

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


def load() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def target(name: str, ok: bool, detail: str) -> None:
    """One target's line, in the style of `_bench.print_loop_targets`."""
    print(f"target: {name}: {'met' if ok else 'missed'} ({detail}; load {load():.1f})")


def acts_rate(runs: int, fast: bool) -> float:
    """Best accepted acts per second of simulated coordinator tasks, in this process."""
    from crewbook.simulate import InlineExecutor, RandomPolicy, simulate

    policy, make = RandomPolicy(POLICY), factory()
    simulate(make, policy, n=max(1, runs // 10), seed=0, executor=InlineExecutor(), fast=fast)
    best = 0.0
    for seed in (1, 2, 3):
        start = time.perf_counter()
        frame = simulate(make, policy, n=runs, seed=seed, executor=InlineExecutor(), fast=fast)
        best = max(best, int(frame["acts"].sum()) / (time.perf_counter() - start))
    return best


def transitions_rate(runs: int) -> float:
    """Best acts per second of `transitions` driving the coordinator, same random policy."""
    import numpy as np
    from transitions import Machine

    states = ["coordinate", "developer", "qa", "reviewer", "done"]
    rows: list[dict[str, Any]] = [
        {"trigger": "plan", "source": "coordinate", "dest": "coordinate",
         "conditions": "planned"},
        {"trigger": "built", "source": "developer", "dest": "coordinate"},
        {"trigger": "ask", "source": ["developer", "qa", "reviewer"], "dest": "coordinate"},
        {"trigger": "answer", "source": "coordinate", "dest": "developer",
         "conditions": "asked"},
        {"trigger": "finalise", "source": "coordinate", "dest": "done",
         "conditions": "can_finalise"},
        {"trigger": "fail", "source": "coordinate", "dest": "done"},
        *({"trigger": f"delegate_{r}", "source": "coordinate", "dest": r,
           "conditions": f"may_{r}"} for r in ("developer", "qa", "reviewer")),
        *({"trigger": f"judge_{r}", "source": r, "dest": "coordinate"}
          for r in ("qa", "reviewer")),
    ]

    class Task:
        def __init__(self) -> None:
            self.version = 0
            self.launches = {"developer": 0, "qa": 0, "reviewer": 0}
            self.limits = {"developer": 5, "qa": 5, "reviewer": 3}
            self.verdicts: dict[tuple[str, int], str] = {}
            self.question: str | None = None
            self.has_plan = False

        def planned(self) -> bool:
            self.has_plan = True
            return True

        def asked(self) -> bool:
            return self.question is not None

        def may(self, role: str) -> bool:
            ok = self.has_plan and self.launches[role] < self.limits[role] and (
                role != "reviewer" or self.verdicts.get(("qa", self.version)) == "pass")
            if ok:
                self.launches[role] += 1
            return ok

        def may_developer(self) -> bool:
            return self.may("developer")

        def may_qa(self) -> bool:
            return self.may("qa")

        def may_reviewer(self) -> bool:
            return self.may("reviewer")

        def can_finalise(self) -> bool:
            v = self.version
            return self.verdicts.get(("qa", v)) == "pass" and \
                self.verdicts.get(("reviewer", v)) == "approved"

    def play(rng: Any) -> int:
        """One task: the random coordinator's choices, each a trigger; returns its acts."""
        model = Task()
        Machine(model=model, states=states, transitions=rows, initial="coordinate",
                auto_transitions=False)
        m: Any = model
        acts = 0

        def measures() -> None:
            rng.lognormal(math.log(300_000), 0.5)
            rng.lognormal(math.log(8_000), 0.5)

        while m.state != "done":
            measures()
            acts += 1
            if m.state == "coordinate":
                v = m.version
                if m.question is not None:
                    m.answer()  # back to the developer who asked
                    m.question = None
                elif not m.has_plan:
                    m.plan()
                elif m.can_finalise() or rng.random() < 0.05:  # early: the guard refuses
                    m.finalise()
                elif v == 0 or m.verdicts.get(("qa", v)) == "fail" or \
                        m.verdicts.get(("reviewer", v)) == "changes":
                    if not m.delegate_developer():
                        m.fail()
                elif ("qa", v) not in m.verdicts:
                    if not m.delegate_qa():
                        m.fail()
                elif not m.delegate_reviewer():
                    m.fail()
            elif m.state == "developer":
                if rng.random() < 0.05:
                    m.question = "which criterion matters most?"
                    m.ask()
                else:
                    m.version += 1
                    m.built()
            else:
                role = m.state
                verdict = rng.random() < (0.3 if role == "qa" else 0.2)
                m.verdicts[(role, m.version)] = ("fail" if verdict else "pass") \
                    if role == "qa" else ("changes" if verdict else "approved")
                getattr(m, f"judge_{role}")()
        return acts

    best = 0.0
    for seed in (1, 2, 3):
        rngs = [np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(i,))))
                for i in range(runs)]
        start = time.perf_counter()
        acts = sum(play(rng) for rng in rngs)
        best = max(best, acts / (time.perf_counter() - start))
    return best


def timed(workers: int, fn: Callable[[Any], Any]) -> tuple[float, float, float]:
    """Wall seconds of `fn(pool)` on `workers` processes, the CPU seconds they used
    (on a loaded machine the wall time stretches, the CPU time does not), and the CPU
    seconds of this process meanwhile (the serial part: sending, collecting, framing)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        pool.submit(int, 0).result()  # the workers are up before the clock starts
        start, own = time.perf_counter(), time.process_time()
        fn(pool)
        seconds, own = time.perf_counter() - start, time.process_time() - own
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), own


def stream_child(runs: int, folder: str) -> None:
    """Target 4's measure, in a fresh process: stream `runs` to `folder`, print peaks."""
    from crewbook.simulate import RandomPolicy, simulate_to

    with ProcessPoolExecutor(max_workers=2) as pool:
        start = time.perf_counter()
        out = simulate_to(folder, factory(), RandomPolicy(POLICY), n=runs, seed=5,
                          executor=pool, progress=None)
        seconds = time.perf_counter() - start
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"runs": out.runs, "seconds": seconds, "caller_mb": own,
                      "worker_mb": workers}))


def stream(runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([sys.executable, __file__, "--stream-child", str(runs),
                               str(Path(tmp) / "out")], check=True, capture_output=True,
                              text=True)
        data: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
        return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0,
                        help="fraction of targets 2 and 3 to run (default 1: the full goal)")
    parser.add_argument("--acts-runs", type=int, default=2_000,
                        help="tasks per measure of target 1 (default 2000)")
    parser.add_argument("--stream-runs", type=int, default=100_000,
                        help="runs streamed to Parquet in target 4 (default 100,000; up to "
                        "1,000,000)")
    parser.add_argument("--stream-child", nargs=2, metavar=("RUNS", "FOLDER"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.stream_child:
        stream_child(int(args.stream_child[0]), args.stream_child[1])
        return 0
    if not have_peer():
        return 2
    from crewbook.simulate import RandomPolicy, simulate, sweep

    print(f"simulation benchmark: {os.cpu_count()} cores, load average {load():.1f}, "
          f"scale {args.scale:g}")

    peer = transitions_rate(args.acts_runs)
    fast = acts_rate(args.acts_runs, fast=True)
    engine = acts_rate(max(1, args.acts_runs // 4), fast=False)
    print("1. acts/s of coordinator tasks, random policy, in this process:")
    print(f"  {'transitions (peer)':<34}{peer:>10,.0f} acts/s")
    print(f"  {'crewbook simulate (plain data)':<34}{fast:>10,.0f} acts/s   "
          f"{fast / peer:5.2f}x transitions")
    print(f"  {'crewbook simulate (engine, fast=False)':<34}{engine:>10,.0f} acts/s   "
          f"{engine / peer:5.2f}x transitions")
    target("simulated acts/s at least transitions' (ratio >= 1)", fast >= peer,
           f"{fast / peer:.2f}")

    tasks = max(1, round(100_000 * args.scale))
    policy, make = RandomPolicy(POLICY), factory()
    seconds, cpu, _ = timed(2, lambda pool: simulate(make, policy, n=tasks, seed=7,
                                                      executor=pool))
    full = seconds * 100_000 / tasks
    note = "" if tasks == 100_000 else f"; ran {tasks:,}: {seconds:.1f} s, extrapolated"
    print(f"2. 100,000 coordinator tasks, random policy, 2 worker processes: {full:.1f} s{note} "
          f"(the workers used {cpu * 100_000 / tasks:.1f} CPU s)")
    target("100,000 tasks on 2 workers under 60 s", full < 60, f"{full:.1f} s")

    runs = max(1, round(10_000 * args.scale))

    def run_sweep(pool: Any) -> None:
        sweep(make, policy, GRID, n=runs, seed=3, executor=pool)

    before = load()
    one, one_cpu, one_own = timed(1, run_sweep)
    two, two_cpu, two_own = timed(2, run_sweep)
    speedup = one / two
    print(f"3. sweep of 12 settings x {runs:,} runs: 1 worker {one:.1f} s ({one_cpu:.1f} CPU s; "
          f"caller {one_own:.2f} CPU s), 2 workers {two:.1f} s ({two_cpu:.1f} CPU s; caller "
          f"{two_own:.2f} CPU s): {speedup:.2f}x (load {before:.1f} before, {load():.1f} "
          "after)")
    serial = two_own / (two_own + two_cpu) if two_own + two_cpu else 0.0
    print(f"  the caller's share of the CPU with 2 workers: {serial:.1%}, so at most "
          f"{2 / (1 + serial):.2f}x on 2 free cores (Amdahl); the rest is the machine's load")
    target("sweep 1 -> 2 workers at least 1.7x", speedup >= 1.7, f"{speedup:.2f}x")

    small = stream(max(1, args.stream_runs // 10))
    big = stream(args.stream_runs)
    print(f"4. simulate_to Parquet, 2 workers: {small['runs']:,.0f} runs in "
          f"{small['seconds']:.1f} s, peak RSS caller {small['caller_mb']:.0f} MB, worker "
          f"{small['worker_mb']:.0f} MB; {big['runs']:,.0f} runs in {big['seconds']:.1f} s, "
          f"caller {big['caller_mb']:.0f} MB, worker {big['worker_mb']:.0f} MB")
    bounded = all(big[k] <= small[k] * 1.25 + 20 for k in ("caller_mb", "worker_mb"))
    target(f"memory flat from {small['runs']:,.0f} to {big['runs']:,.0f} runs", bounded,
           f"caller {big['caller_mb'] / small['caller_mb']:.2f}x, worker "
           f"{big['worker_mb'] / small['worker_mb']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
