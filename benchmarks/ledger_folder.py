"""Benchmark `read_ledger` on a folder of one ledger file per run against named peers,
measured in the same run.

    python benchmarks/ledger_folder.py            # 100,000 events
    python benchmarks/ledger_folder.py 300000     # about 14,500 files

The folder is the ``shuffled`` ledger of `make_ledgers.py` (lines as another writer may
write them: any key order, nulls, spaces, CRLF) cut into one file per run, in file
order (``benchmarks/_data/runs-<N>/``, git-ignored; made once, the same N always gives
the same files): thousands of files of a few events, a layout of run histories that
people keep. It prints the time of ``read_ledger(folder)`` beside (a) the same events in
one file (``read_ledger(file)``: what the layout costs; target: at most 2x), (b)
pyarrow's JSON reader on each file with the schema the reader gives it (``ts`` as text),
the tables joined, then ``to_pandas`` (the floor of reading file by file) and (c)
``pandas.read_json(lines=True)`` on each file, joined by ``pandas.concat``. Each time is
the best of the same number of runs for every side; the load average is printed.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.json as pj

from crewbook.ledger import read_ledger
from crewbook.ledger.columns import READ_SCHEMA

sys.path.insert(0, str(Path(__file__).parent))
from _bench import best
from make_ledgers import DATA, ledger_path


def runs_folder(n: int) -> Path:
    """The ``shuffled`` ledger of `n` events cut into one file per run (made when
    missing); the files are named by their first line's place, so they sort in file
    order."""
    folder = DATA / f"runs-{n}"
    if folder.is_dir():
        return folder
    tmp = DATA / f"runs-{n}.tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    files: dict[bytes, list[bytes]] = {}
    with ledger_path(n, "shuffled").open("rb") as lines:
        for raw in lines:
            at = raw.index(b'"run"')
            start = raw.index(b'"', raw.index(b":", at) + 1) + 1
            files.setdefault(raw[start:raw.index(b'"', start)], []).append(raw)
    for i, lines_of_run in enumerate(files.values()):
        (tmp / f"run-{i:06d}.jsonl").write_bytes(b"".join(lines_of_run))
    tmp.rename(folder)
    return folder


def arrow_files(files: list[Path]) -> pd.DataFrame:
    options = pj.ParseOptions(explicit_schema=READ_SCHEMA, unexpected_field_behavior="ignore")
    return pa.concat_tables([pj.read_json(f, parse_options=options) for f in files]).to_pandas()


def pandas_files(files: list[Path]) -> pd.DataFrame:
    return pd.concat([pd.read_json(f, lines=True) for f in files], ignore_index=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("events", nargs="?", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    folder = runs_folder(args.events)
    files = sorted(folder.glob("*.jsonl"))
    one = ledger_path(args.events, "shuffled")
    events = len(read_ledger(one, payload="none"))  # N, and the ends of the last runs
    assert len(read_ledger(folder, payload="none")) == events
    ours = best(lambda: read_ledger(folder), args.repeat)
    whole = best(lambda: read_ledger(one), args.repeat)
    arrow = best(lambda: arrow_files(files), args.repeat)
    panda = best(lambda: pandas_files(files), 1)
    load = os.getloadavg()[0]
    print(f"{events:,} events in {len(files):,} files (one per run; load average "
          f"{load:.2f} on {os.cpu_count()} CPUs)")
    print(f"  read_ledger(folder)            {ours:7.2f} s")
    print(f"  (a) read_ledger(one file)      {whole:7.2f} s   folder / file "
          f"{ours / whole:.2f}x")
    print(f"  (b) pyarrow per file + concat  {arrow:7.2f} s   read_ledger is "
          f"{arrow / ours:.1f}x faster")
    print(f"  (c) pandas per file + concat   {panda:7.2f} s   read_ledger is "
          f"{panda / ours:.1f}x faster")
    verdict = "met" if ours / whole <= 2 else "missed"
    print(f"target: a folder of one file per run within 2x of the same events in one file: "
          f"{verdict} ({ours / whole:.2f}x; load average {load:.2f})")


if __name__ == "__main__":
    main()
