"""Benchmark turning a ledger frame's payload column into dicts against a named peer,
measured in the same run.

    python benchmarks/payload_dicts.py            # 300,000 events, writer and nested
    python benchmarks/payload_dicts.py 100000 --shape any

For each ledger (`make_ledgers.py`, fixed seed) it reads the frame, then times
``df["payload"].tolist()`` (every payload a dict, null-valued keys left out),
``list(df["payload"])`` (iterated) and ``read_ledger(payload="flat")`` beside the peer,
``json.loads`` of each payload text into a list (the same parse, keeping the nulls; the
texts taken out of the frame before the clock starts). Target: ``tolist`` within 1.5x of
the peer. Best of 3 runs each; the load average is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from crewbook.ledger import read_ledger

sys.path.insert(0, str(Path(__file__).parent))
from _bench import best
from make_ledgers import SHAPES, ledger_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("events", nargs="?", type=int, default=300_000)
    parser.add_argument("--shape", action="append", choices=SHAPES)
    args = parser.parse_args()
    for shape in args.shape or ["writer", "nested"]:
        measure(args.events, shape)


def measure(events: int, shape: str) -> None:
    """Print the figures of one ledger."""
    path = ledger_path(events, shape)
    frame = read_ledger(path)
    column = frame["payload"]
    texts = column.array._data.to_pylist()
    loads = json.loads
    peer = best(lambda: [loads(text) for text in texts], 3)
    listed = best(column.tolist, 3)
    iterated = best(lambda: list(column), 3)
    flat = best(lambda: read_ledger(path, payload="flat"), 1)
    load = os.getloadavg()[0]
    ratio = listed / peer
    print(f"{len(frame):,} events, shape {shape} (load average {load:.2f} on "
          f"{os.cpu_count()} CPUs)")
    print(f"  json.loads of each text (peer) {peer:6.2f} s")
    print(f"  df['payload'].tolist()         {listed:6.2f} s   {ratio:.2f}x the peer")
    print(f"  list(df['payload'])            {iterated:6.2f} s   {iterated / peer:.2f}x")
    print(f"  read_ledger(payload='flat')    {flat:6.2f} s   (the read included)")
    print(f"target: tolist within 1.5x of json.loads: {'met' if ratio <= 1.5 else 'missed'} "
          f"({ratio:.2f}x; load average {load:.2f})", flush=True)


if __name__ == "__main__":
    main()
