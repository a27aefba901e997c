"""Generate big, realistic ledgers for the reader benchmark (fixed seed).

    python benchmarks/make_ledgers.py 100000 1000000

writes ``benchmarks/_data/ledger-<N>.jsonl`` (git-ignored) and prints the paths. The
events are whole synthetic runs (coordinator and crew loops, see
`crewbook.ledger.synthetic`): acts, reports, verdicts with findings, bar measures,
questions, escalations, finishes; about 240 bytes a line. The same N always gives
the same file, and an existing file is reused.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from crewbook.ledger.synthetic import write_big_ledger

SEED = 20261202
DATA = Path(__file__).parent / "_data"


def ledger_path(n: int) -> Path:
    """Where the ledger of `n` events lives (made when missing)."""
    path = DATA / f"ledger-{n}.jsonl"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        write_big_ledger(tmp, n, seed=SEED)
        tmp.replace(path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[100_000, 1_000_000])
    for n in parser.parse_args().sizes:
        print(ledger_path(n))


if __name__ == "__main__":
    main()
