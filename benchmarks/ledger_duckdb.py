"""Benchmark the analyses on a history bigger than memory: 10 million events in Parquet.

    python benchmarks/ledger_duckdb.py             # 10,000,000 events
    python benchmarks/ledger_duckdb.py 2000000     # fewer

Makes the events in a temporary folder (never committed), with a fixed seed: the
100,000-event ledger of ``make_ledgers.py`` (read once) copied again and again with its
runs renamed and its clock moved one day per copy, streamed day by day (no JSON Lines
in between) to a Parquet folder partitioned by date
(`crewbook.ledger.parquet.write_table`), showing progress. Then, in a fresh process,
runs `run_outcomes`, `usage_by_role`, `rework` and `verdict_funnel` on the folder
through DuckDB (`LedgerFolder`) and prints the time and the peak RSS (target < 4 GB).
The peer, measured in the same run: the same four analyses in pandas on a sample of
1,000,000 events (`read_ledger` of 10 copies), time and memory scaled to the full
size, with the machine's load average.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from crewbook.ledger.parquet import ledger_table, write_table
from crewbook.ledger.reader import read_ledger

sys.path.insert(0, str(Path(__file__).parent))
from make_ledgers import ledger_path

SAMPLE = 100_000
DAY_NS = 86_400 * 1_000_000_000

RUN = """
import re, sys, time
from pathlib import Path
import duckdb, pandas, pyarrow
from crewbook.ledger import (LedgerFolder, read_ledger, rework, run_outcomes,
                             usage_by_role, verdict_funnel)

def high_water():
    return int(re.search(r"VmHWM:\\s+(\\d+) kB", Path("/proc/self/status").read_text())[1]) * 1024

folder = Path(sys.argv[1])
base = high_water()
start = time.perf_counter()
if sys.argv[2] == "duckdb":
    data = LedgerFolder(folder)
else:
    files = sorted(folder.rglob("*.parquet"))
    data = read_ledger(files)
each = []
for f in (run_outcomes, usage_by_role, rework, verdict_funnel):
    t = time.perf_counter()
    f(data)
    each.append(f"{f.__name__} {time.perf_counter() - t:.1f} s")
took = time.perf_counter() - start
events = len(data)
print(took, high_water(), high_water() - base, events, ", ".join(each))
"""


def make_folder(folder: Path, events: int) -> int:
    """Write about `events` events to `folder` (streamed, day by day); the number written.

    The 100,000-event sample is copied with its runs renamed and its clock moved one
    day per copy; the copies are interleaved by day, so each day's events (from every
    copy) reach the writer together and each day is one file of large row groups, as a
    history appended day by day would be. Memory: the sample plus one day.
    """
    frame = read_ledger(ledger_path(SAMPLE))
    table = ledger_table(frame)
    del frame
    copies = max(1, round(events / table.num_rows))
    assert not table.column("ts").null_count, "the sample's events all have a clock"
    day = np.floor_divide(pc.cast(table.column("ts"), pa.int64()).to_numpy(), DAY_NS)
    order = np.argsort(day, kind="stable")
    table, day = table.take(pa.array(order)), day[order]
    first, last = int(day[0]), int(day[-1])
    bounds = np.searchsorted(day, np.arange(first, last + 2))  # rows of day d: [b[d], b[d+1])
    run_at = table.schema.get_field_index("run")
    ts_at = table.schema.get_field_index("ts")
    start = time.perf_counter()
    total_days = last - first + copies

    def batches() -> Iterator[pa.RecordBatch]:
        for n, d in enumerate(range(first, last + copies)):
            parts = []
            for k in range(max(0, d - last), min(copies, d - first + 1)):
                lo, hi = int(bounds[d - k - first]), int(bounds[d - k - first + 1])
                if lo == hi:
                    continue
                piece = table.slice(lo, hi - lo)
                runs = pc.binary_join_element_wise(piece.column(run_at), f"c{k:04d}", "-")
                moved = pc.add(piece.column(ts_at), pa.scalar(k * DAY_NS, pa.duration("ns")))
                parts.append(piece.set_column(run_at, "run", runs).set_column(
                    ts_at, "ts", moved))
            if parts:
                yield from pa.concat_tables(parts).combine_chunks().to_batches()
            if (n + 1) % max(1, total_days // 20) == 0 or n + 1 == total_days:
                print(f"\r  writing: day {n + 1:>4} of {total_days} "
                      f"({time.perf_counter() - start:5.1f} s)", end="", flush=True)

    write_table(batches(), folder, "events")
    print()
    return int(copies * table.num_rows)


def measure(folder: Path, how: str) -> tuple[float, int, int, int, str]:
    """(seconds, peak RSS, peak RSS growth, events, time of each) of the four analyses,
    in a fresh process."""
    out = subprocess.run([sys.executable, "-c", RUN, str(folder), how], check=True,
                         capture_output=True, text=True).stdout.splitlines()[-1].split(
        maxsplit=4)
    return float(out[0]), int(out[1]), int(out[2]), int(out[3]), out[4]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("events", nargs="?", type=int, default=10_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "history"
        written = make_folder(folder, args.events)
        files = len(list(folder.rglob("*.parquet")))
        print(f"{written:,} events in {files:,} Parquet files; load average "
              f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
        took, peak, _, events, each = measure(folder, "duckdb")
        print(f"  DuckDB on the folder ({events:,} events): {took:.1f} s ({each}), peak RSS "
              f"{peak / 2**30:.2f} GiB")
        make_folder(Path(tmp) / "sample", min(args.events, 1_000_000))  # the peer's sample
        p_took, p_peak, p_growth, p_events, _ = measure(Path(tmp) / "sample", "pandas")
        scale = events / p_events
        print(f"  pandas on a sample of {p_events:,} events (peer): {p_took:.1f} s, peak RSS "
              f"{p_peak / 2**30:.2f} GiB; scaled to {events:,}: {p_took * scale:.0f} s, "
              f"{(p_peak - p_growth + p_growth * scale) / 2**30:.1f} GiB")
        print(f"  ratio: DuckDB takes {took / (p_took * scale):.2f}x the (scaled) pandas time")
        met = "met" if peak < 4 * 2**30 else "missed"
        print(f"target: {events:,} events analysed in under 4 GB of memory: {met} "
              f"({peak / 2**30:.2f} GiB; load average {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
