"""Benchmark opening a big ledger: `Ledger(path)` reads the tail, not the whole file.

    python benchmarks/ledger_open.py          # a 1 GiB ledger (generated, fixed seed)
    python benchmarks/ledger_open.py 200      # a 200 MiB one

The ledger is generated in a temporary folder (never committed) and flushed to disk
before timing: a ledger at rest, as a user opens it (otherwise the `fsync` at `close`
pays for writing the generator's whole gigabyte, about 1 s, which is no cost of opening).
Prints the time and the peak traced memory of opening it (and appending one event to its
last run, the target), then of starting a new run on it (the writer must read the whole
file to know the run is new: a backward byte search), next to the peer: the
naive way to find the last event, reading the file line by line to its end
(``collections.deque(open(path), maxlen=1)``), measured in the same run, with the
machine's load average.
"""

from __future__ import annotations

import collections
import json
import os
import random
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from crewbook.ledger.writer import Ledger


def generate(path: Path, megabytes: int, seed: int = 23) -> None:
    rng = random.Random(seed)
    seqs = [0] * 4
    pad = "x" * 400
    block: list[str] = []
    with open(path, "w", encoding="utf-8") as handle:
        while handle.tell() < megabytes << 20:
            for _ in range(10_000):
                run = rng.randrange(4)
                block.append(json.dumps({"run": f"run-{run}", "seq": seqs[run], "loop": "crew",
                                         "kind": "report", "ts": "2026-01-01T00:00:00Z",
                                         "summary": pad}))
                seqs[run] += 1
            handle.write("\n".join(block) + "\n")
            block.clear()
        handle.flush()
        os.fsync(handle.fileno())  # at rest: the close of the measured Ledger flushes nothing


def measure(label: str, work: Callable[[], None]) -> tuple[float, int]:
    tracemalloc.start()
    start = time.perf_counter()
    work()
    took = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"  {label:<44}{took:8.3f} s   peak {peak / 2**20:8.1f} MiB")
    return took, peak


def main() -> None:
    megabytes = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.jsonl"
        generate(path, megabytes)
        print(f"ledger of {path.stat().st_size / 2**20:,.0f} MiB; load average "
              f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")

        def ours() -> None:
            with Ledger(path) as ledger:
                ledger.append({"kind": "note", "loop": "crew", "summary": "one more"})

        def new_run() -> None:
            with Ledger(path, run="run-new") as ledger:
                ledger.append({"kind": "note", "loop": "crew", "summary": "a new run"})
                assert ledger.next_seq == 1

        def peer() -> None:
            with open(path, "rb") as handle:
                collections.deque(handle, maxlen=1)

        mine, peak = measure("Ledger(path) + one append (crewbook)", ours)
        theirs, _ = measure("deque(open(path), maxlen=1) (peer)", peer)
        measure("Ledger(path, run=<new>) + one append", new_run)
        print(f"  ratio: crewbook takes {mine / theirs:.4f}x the peer's time")
        met = "met" if mine < 0.5 and peak < 100 * 2**20 else "missed"
        print(f"target: opening the ledger in < 0.5 s and < 100 MB: {met} ({mine:.3f} s, "
              f"{peak / 2**20:.1f} MiB; load average {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
