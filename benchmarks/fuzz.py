"""The long fuzz run: mutated files of every format, fed to every reader, for N minutes.

    python benchmarks/fuzz.py --inputs 10000          # the figures in docs/hardening.md
    python benchmarks/fuzz.py --minutes 2 --only ledger schema

Same strategies and mutations as the fast profile in the suite (`tests/fuzz/`); here
without shrinking and with a fixed seed, so the same N minutes make the same inputs
on the same machine speed. The minutes are shared evenly between the formats;
``--inputs N`` feeds exactly N inputs to each format instead. For
each format it prints the inputs fed, the readers' crashes (anything but a
`CrewbookError`; 0 is the goal) and the throughput against a named peer measured on
the same inputs in the same run: the bare parser of the format (`yaml.load`,
`tomllib.loads`, `json.loads` per line; YAML with libyaml's ``CSafeLoader``, the
loader crewbook's reader is built on), with the number of inputs on which the bare
parser raised something other than its own error class (what crewbook must catch).
Every crash found is saved under `benchmarks/_data/fuzz-crashes/` to become a
regression file in `tests/data/bad/`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from tests.fuzz.corpus import Target, mutations, run_cli, run_readers, targets

CRASHES = Path(__file__).parent / "_data" / "fuzz-crashes"
SEED = 20261203


@dataclass
class Stats:
    inputs: int = 0
    cli_runs: int = 0
    ours_s: float = 0.0
    peer_s: float = 0.0
    peer_crashes: int = 0
    crashes: Counter[str] = field(default_factory=Counter)


def _peer(name: str) -> tuple[str, Any, tuple[type[BaseException], ...]]:
    """The bare parser of a format, and the error class it is documented to raise."""
    import tomllib

    import yaml

    if name in ("pipeline", "kinds"):
        return "tomllib.loads", lambda b: tomllib.loads(b.decode("utf-8")), (
            tomllib.TOMLDecodeError, UnicodeDecodeError)
    if name in ("ledger", "json_schema", "payload"):
        def lines(data: bytes) -> None:
            for line in data.splitlines():
                if line.strip():
                    with contextlib.suppress(json.JSONDecodeError):
                        json.loads(line)

        return "json.loads", lines, (json.JSONDecodeError, UnicodeDecodeError)
    if name == "diff":
        return "bytes.decode", lambda b: b.decode("utf-8"), (UnicodeDecodeError,)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the loader crewbook uses
    return "yaml CSafeLoader", lambda b: yaml.load(b, Loader=loader), (yaml.YAMLError,)


def fuzz(target: Target, seconds: float, cli_every: int) -> Stats:
    """Fuzz one format for about `seconds`: a first batch measures the rate, a second
    one of the size that fills the time (a time check inside a hypothesis test would
    make its generation inconsistent)."""
    stats = Stats()
    start = time.monotonic()
    batch(target, stats, 50, cli_every, SEED)
    rate = stats.inputs / (time.monotonic() - start)
    rest = int(rate * (seconds - (time.monotonic() - start)))
    if rest > 0:
        batch(target, stats, rest, cli_every, SEED + 1)
    return stats


def batch(target: Target, stats: Stats, count: int, cli_every: int, seed_: int) -> None:
    _, peer, peer_errors = _peer(target.name)

    @seed(seed_)
    @settings(max_examples=count, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def run(data: st.DataObject) -> None:
        raw = data.draw(mutations(data.draw(target.documents)))
        stats.inputs += 1
        with tempfile.TemporaryDirectory() as folder:
            path = target.write(Path(folder), raw)
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                broken = run_readers(target, path)
            stats.ours_s += time.perf_counter() - start
            if target.cli and stats.inputs % cli_every == 0:
                stats.cli_runs += 1
                _, out, exc = run_cli(path)
                try:
                    json.loads(out)
                except ValueError as bad:
                    broken.append(("validate --json (not one JSON document)", bad))
                if exc is not None:
                    broken.append(("validate --json", exc))
        start = time.perf_counter()
        try:
            peer(raw)
        except peer_errors:
            pass
        except Exception:
            stats.peer_crashes += 1
        stats.peer_s += time.perf_counter() - start
        for label, exc in broken:
            frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
            key = f"{label}: {type(exc).__name__} at {frame.filename.split('/')[-1]}:" \
                  f"{frame.lineno}" if frame else f"{label}: {type(exc).__name__}"
            if not stats.crashes[key]:
                CRASHES.mkdir(parents=True, exist_ok=True)
                stem = f"{target.name}-{len(stats.crashes)}"
                (CRASHES / f"{stem}.bin").write_bytes(raw)
                (CRASHES / f"{stem}.txt").write_text(
                    f"{key}\n{exc!r}\n" + "".join(traceback.format_exception(exc)))
            stats.crashes[key] += 1

    run()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=1.0,
                        help="total time, shared between the formats (default 1)")
    parser.add_argument("--inputs", type=int, metavar="N",
                        help="feed exactly N inputs to each format (overrides --minutes)")
    parser.add_argument("--only", nargs="*", metavar="FORMAT", choices=sorted(targets()),
                        help="formats to fuzz (default: all)")
    parser.add_argument("--cli-every", type=int, default=25, metavar="K",
                        help="also run `crewbook validate --json` on every K-th input")
    args = parser.parse_args(argv)
    names = args.only or sorted(targets())
    seconds = args.minutes * 60 / len(names)
    total = 0
    each = f"{args.inputs:,} inputs" if args.inputs else f"{seconds:.0f} s"
    print(f"fuzzing {len(names)} formats, {each} each (seed {SEED}); ratio = how many "
          "times faster the bare peer parser is than crewbook's readers (which parse, "
          "check and locate every problem)", flush=True)
    print(f"{'format':12} {'inputs':>8} {'cli':>6} {'crashes':>8} {'ours/s':>8} "
          f"{'peer':>15} {'peer/s':>8} {'ratio':>7} {'peer raised':>11}")
    for name in names:
        target = targets()[name]
        if args.inputs:
            stats = Stats()
            batch(target, stats, args.inputs, args.cli_every, SEED)
        else:
            stats = fuzz(target, seconds, args.cli_every)
        peer_name = _peer(name)[0]
        ours = stats.inputs / stats.ours_s if stats.ours_s else float("inf")
        peer = stats.inputs / stats.peer_s if stats.peer_s else float("inf")
        crashes = sum(stats.crashes.values())
        total += crashes
        print(f"{name:12} {stats.inputs:>8,} {stats.cli_runs:>6,} {crashes:>8,} "
              f"{ours:>8,.0f} {peer_name:>15} {peer:>8,.0f} {peer / ours:>6.1f}x "
              f"{stats.peer_crashes:>11,}", flush=True)
        for key, count in stats.crashes.most_common():
            print(f"    {count:>6,} × {key}")
    print(f"\nreader crashes (exceptions other than CrewbookError): {total}"
          + (f"; samples in {CRASHES}" if total else ""))
    return 1 if total else 0


if __name__ == "__main__":
    raise SystemExit(main())
