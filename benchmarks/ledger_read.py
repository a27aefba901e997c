"""Benchmark the ledger reader and writer against named peers, measured in the same run.

    python benchmarks/ledger_read.py                      # 300k events, every shape
    python benchmarks/ledger_read.py 1000000 --shape writer  # one size, one shape

For each size and shape of ledger (``make_ledgers.py``, fixed seed: the writer's own
lines, and lines as other valid writers write them: shuffled key order, ``null`` fields,
spaces, CRLF, nested and large payloads with escapes, all mixed; one with a few unknown
keys and one with a few corrupt lines, read with ``errors="skip"``) it prints events/s
and MB/s of `read_ledger` (payload as dicts, the default) and its time as a ratio to (a)
pyarrow's JSON reader with the same explicit schema plus ``to_pandas`` (the floor;
target <= 1.3x; the payload inferred where Arrow can, else skipped: a floor that does
less than the reader), (b) ``pandas.read_json(lines=True)`` (target >= 5x faster) and
(c) validating each line with pydantic (target >= 8x faster); the same ratios for
``payload="none"``, and its time over Arrow's with the payload skipped (the fixed
columns alone on both sides); pyarrow's own ratio to pandas (below 5x, the pandas target
asks read_ledger to beat pyarrow); the peak memory of a fresh process reading the file
over the deep size of the frame it gives (target <= 2.5x), beside the same figure for
the peer ``pandas.read_json(lines=True)``, measured in the same run; and the writer's
append throughput with and without per-event fsync. Where the floor skips the payloads,
it also prints the least time of any reader made of the floor and the payload decode
(their CPU seconds over the CPUs), beside the floor. Every time is the best of the same
number of runs for each side (ours and the peers alike), and the load average is
printed."""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import pandas as pd
import pyarrow as pa
import pyarrow.json as pj

from crewbook.ledger import Ledger, LedgerEvent, read_ledger
from crewbook.ledger.columns import READ_SCHEMA
from crewbook.ledger.known_keys import decoded_pieces

sys.path.insert(0, str(Path(__file__).parent))
from make_ledgers import SHAPES, ledger_path

#: CPU seconds (every thread of this process) of the best run of each `best` call, by
#: label: a figure that a loaded machine stretches less than wall time.
CPU: dict[str, float] = {}


#: The shapes holding invalid lines, read with ``errors="skip"``.
INVALID: Final = ("unknown", "bad")


def best(fn: Callable[[], Any], repeat: int, label: str = "") -> float:
    """Best wall time of `repeat` calls, in seconds (its CPU time goes to `CPU[label]`)."""
    times = []
    for _ in range(repeat):
        gc.collect()
        start, cpu = time.perf_counter(), time.process_time()
        result = fn()
        times.append((time.perf_counter() - start, time.process_time() - cpu))
        del result
    wall, cpu = min(times)
    if label:
        CPU[label] = cpu
    return wall


def floor(path: Path, payload: str = "infer") -> pd.DataFrame:
    """pyarrow's JSON reader with the explicit schema the reader gives it (``ts`` as its
    text: Arrow's own reading of times refuses some the model takes, a lowercase ``z``),
    then to_pandas; the payload (and any other key) inferred (``"infer"``) or skipped
    (``"ignore"``)."""
    options = pj.ParseOptions(explicit_schema=READ_SCHEMA, unexpected_field_behavior=payload)
    frame: pd.DataFrame = pj.read_json(path, parse_options=options).to_pandas()
    return frame


def floor_kind(path: Path) -> str:
    """``"infer"`` when Arrow can infer the payloads of `path`, else ``"ignore"``."""
    try:
        floor(path)
    except pa.ArrowInvalid:  # e.g. a payload key holding a text here, an object there
        return "ignore"
    return "infer"


def decode_payloads(path: Path) -> int:
    """The payload texts of every line of `path` by the reader's msgspec decode (which
    also vouches that every top-level key is a field), nothing else: the part of reading
    that Arrow's floor does not do when it skips the payloads."""
    data = path.read_bytes()
    return sum(len(texts) for _, _, texts in decoded_pieces(data, 0, len(data))
               if texts is not None)


def pydantic_lines(path: Path) -> list[LedgerEvent]:
    """Validate each line with the pydantic model (what a naive loader does)."""
    with path.open("rb") as lines:
        return [LedgerEvent.model_validate_json(line) for line in lines if line.strip()]


# The libraries are imported before the baseline: their code is not data, and it does
# not grow with the file (msgspec, which decodes the blocks, is well under 1 MB).
PEAK = """
import re, sys
from pathlib import Path
import msgspec, pandas, pyarrow
import crewbook.ledger.reader

def high_water():  # VmHWM: peak RSS of this process (ru_maxrss would include the parent's)
    return int(re.search(r"VmHWM:\\s+(\\d+) kB", Path("/proc/self/status").read_text())[1]) * 1024

if len(sys.argv) > 3:  # warm: Arrow's one-time set-up (its default pool's arena, the
    # compute and JSON readers' first use) done by a read of a few lines, then measure
    crewbook.ledger.reader.read_ledger(sys.argv[3], errors=sys.argv[2])
base = high_water()
if sys.argv[2] == "pandas":
    df = pandas.read_json(sys.argv[1], lines=True)
else:
    df = crewbook.ledger.reader.read_ledger(sys.argv[1], errors=sys.argv[2])
print(base, high_water(), int(df.memory_usage(deep=True).sum()))
"""


def peak_memory(path: Path, reader: str = "raise", warm: Path | None = None
                ) -> tuple[int, int]:
    """(peak RSS growth while reading, deep size of the frame) in bytes, in a fresh
    process; `reader` is ``pandas`` (the peer) or read_ledger's `errors`; with
    `warm`, after reading that small ledger first (the figure without Arrow's one-time
    set-up, about 10 MB, which a process pays once whatever it reads)."""
    extra = [str(warm)] if warm is not None else []
    out = subprocess.run([sys.executable, "-c", PEAK, str(path), reader, *extra],
                         check=True, capture_output=True, text=True).stdout.split()
    base, peak, frame = (int(x) for x in out)
    return peak - base, frame


def bench_read(n: int, shape: str = "writer") -> dict[str, Any]:
    path = ledger_path(n, shape)
    size = path.stat().st_size
    errors = "skip" if shape in INVALID else "raise"
    repeat = 2 if n >= 1_000_000 else 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the skipped lines of the invalid shapes
        ours = best(lambda: read_ledger(path, errors=errors), repeat, "ours")  # type: ignore[arg-type]
        bare = best(lambda: read_ledger(path, payload="none", errors=errors), repeat)  # type: ignore[arg-type]
    # the peers refuse a file with a corrupt line: for "bad" they read the same events
    # without the corruption (the "shuffled" ledger), a floor the reader does not have
    peer_path = ledger_path(n, "shuffled") if shape == "bad" else path
    kind = floor_kind(peer_path)
    arrow = best(lambda: floor(peer_path, kind), repeat, "floor")
    # the same work on both sides without the payload: payload="none" beside Arrow
    # skipping it (the floor itself where Arrow cannot infer the payloads)
    if kind == "ignore":
        arrow_bare, CPU["floor_bare"] = arrow, CPU["floor"]
    else:
        arrow_bare = best(lambda: floor(peer_path, "ignore"), repeat, "floor_bare")
    best(lambda: decode_payloads(peer_path), repeat, "decode")
    # the least time of a reader made of these two parts, both cores busy throughout
    parts = (CPU["floor_bare"] + CPU["decode"]) / (os.cpu_count() or 1)
    pandas_json = best(lambda: pd.read_json(peer_path, lines=True), repeat, "pandas")
    pyd = CPU["pydantic"] = float("nan")  # the model refuses lines of the invalid shapes
    if shape not in INVALID:
        pyd = best(lambda: pydantic_lines(path), 1, "pydantic")
    growth, frame = peak_memory(path, errors)
    peer_growth, peer_frame = peak_memory(peer_path, "pandas")
    with tempfile.TemporaryDirectory() as folder:
        few = Path(folder) / "few.jsonl"
        with path.open("rb") as lines:
            few.write_bytes(b"".join(line for _, line in zip(range(50), lines, strict=False)))
        warm_growth, warm_frame = peak_memory(path, errors, warm=few)
    return {"events": n, "shape": shape, "floor": kind, "MB": size / 1e6,
            "peers_read": peer_path.name,
            "read_ledger_s": ours, "events_per_s": n / ours,
            "MB_per_s": size / 1e6 / ours, "vs_arrow_floor": ours / arrow,
            "pandas_read_json_s": pandas_json, "faster_than_pandas": pandas_json / ours,
            "pydantic_s": pyd, "faster_than_pydantic": pyd / ours,
            "cpu_s": CPU["ours"], "cpu_faster_than_pandas": CPU["pandas"] / CPU["ours"],
            "cpu_faster_than_pydantic": CPU["pydantic"] / CPU["ours"],
            "floor_vs_pandas": pandas_json / arrow, "no_payload_vs_arrow": bare / arrow_bare,
            "parts_s": parts, "parts_vs_arrow_floor": parts / arrow,
            "no_payload_s": bare, "no_payload_vs_pandas": pandas_json / bare,
            "no_payload_vs_pydantic": pyd / bare,
            "peak_rss_MB": growth / 1e6, "frame_MB": frame / 1e6,
            "peak_over_frame": growth / frame, "warm_peak_over_frame": warm_growth / warm_frame,
            "pandas_peak_over_frame": peer_growth / peer_frame}


#: (figure, what it is, target, whether a figure meets it) for the summary.
TARGETS: Final[tuple[tuple[str, str, str, Callable[[float], bool]], ...]] = (
    ("vs_arrow_floor", "time / pyarrow", "<= 1.3x", lambda x: x <= 1.3),
    ("faster_than_pandas", "pandas / time", ">= 5x", lambda x: x >= 5),
    ("peak_over_frame", "peak / frame", "<= 2.5x", lambda x: x <= 2.5),
)


def mark_of(r: dict[str, Any]) -> str:
    """``*`` for a shape whose floor skipped the payload (Arrow cannot infer it)."""
    return "*" if r["floor"] != "infer" else ""


def print_targets(results: list[dict[str, Any]]) -> None:
    """Two lines a shape: each of read_ledger's targets met or missed, the CPU seconds'
    ratio to pandas (which a loaded machine stretches less than wall time) and the
    load average after that shape's runs (a ``*`` marks a floor that skipped the
    payload); then what the peers allow in the same run: how much faster than pandas
    pyarrow's floor itself is (when under 5x, the pandas target asks read_ledger to
    beat pyarrow), and the fixed columns alone on both sides (``payload="none"``
    beside Arrow skipping the payload: the same work, whatever the shape)."""
    print(f"\nread_ledger's targets, each against its peer in the same run "
          f"({os.cpu_count()} CPUs):")
    for r in results:
        cells = []
        for key, what, goal, meets in TARGETS:
            mark = mark_of(r) if key == "vs_arrow_floor" else ""
            cells.append(f"{what} {r[key]:.2f}x{mark} ({goal}: "
                         f"{'met' if meets(r[key]) else 'missed'})")
        print(f"  {r['events']:,} {r['shape']:<8} " + "; ".join(cells)
              + f"; in CPU seconds pandas / ours {r['cpu_faster_than_pandas']:.2f}x; "
              f"load {r['load']:.2f}")
        indent = " " * (len(f"{r['events']:,}") + 12)
        print(f"{indent}what the peers allow: pandas / "
              f"pyarrow {r['floor_vs_pandas']:.2f}x{mark_of(r)}, so >= 5x pandas asks for "
              f"time / pyarrow <= {r['floor_vs_pandas'] / 5:.2f}x; without the payload on "
              f"either side, payload='none' / pyarrow skipping it "
              f"{r['no_payload_vs_arrow']:.2f}x")
    if any(r["floor"] != "infer" for r in results):
        print("  * Arrow cannot infer these payloads: the floor skips them (it does less "
              "than read_ledger, which gives each payload)")
        for r in results:
            if r["floor"] == "infer":
                continue
            print(f"    {r['shape']}: Arrow's read of the fixed columns (the floor itself) "
                  f"and the decode of the payloads alone take {r['parts_s']:.2f} s of "
                  f"{os.cpu_count()} CPUs even with every CPU busy throughout, "
                  f"{r['parts_vs_arrow_floor']:.2f}x the floor: a reader made of these "
                  f"parts cannot meet <= 1.3x here")


def bench_append(count: int, fsync: str) -> float:
    """Events per second appended by one `Ledger` (lock + write + flush each)."""
    with tempfile.TemporaryDirectory(dir=Path(__file__).parent / "_data") as folder, \
            Ledger(Path(folder) / "a.jsonl", run="bench", loop="crew",
                   fsync=fsync) as ledger:  # type: ignore[arg-type]
        start = time.perf_counter()
        for i in range(count):
            ledger.append({"kind": "report", "role": "developer", "stage": "build",
                           "verdict": "done", "attempt": 1, "tokens_in": 1000 + i,
                           "tokens_out": 200, "cost": 0.006, "duration_ms": 61_000,
                           "payload": {"task": f"T-{i % 50}"}})
        return count / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[300_000])
    parser.add_argument("--shape", action="append", choices=SHAPES,
                        help="the ledgers' shape (see make_ledgers.py; repeat for several; "
                        "default: every shape)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    print(f"pyarrow {pa.__version__}, pandas {pd.__version__}, python "
          f"{sys.version.split()[0]}", flush=True)
    results = []
    for n, shape in ((n, shape) for n in args.sizes for shape in args.shape or SHAPES):
        r = bench_read(n, shape)
        results.append(r)
        print(f"\n{n:,} events, shape {shape} ({r['MB']:.0f} MB): read_ledger "
              f"{r['read_ledger_s']:.2f} s = {r['events_per_s']:,.0f} events/s, "
              f"{r['MB_per_s']:.0f} MB/s (best of the same number of runs for every side)",
              flush=True)
        what = ("payload inferred" if r["floor"] == "infer" else
                "payload skipped: Arrow cannot infer these payloads")
        if r["peers_read"] != ledger_path(n, shape).name:
            print(f"  (the peers read {r['peers_read']}, the same events without the "
                  "corrupt lines: they refuse a file that holds one)")
        verdict = "met" if r["vs_arrow_floor"] <= 1.3 else "missed"
        print(f"  (a) vs pyarrow read_json + to_pandas (floor, {what}): "
              f"{r['vs_arrow_floor']:.2f}x the time   [target <= 1.3x: {verdict}; load "
              f"average {os.getloadavg()[0]:.2f}]")
        print(f"  (b) pandas.read_json(lines=True) {r['pandas_read_json_s']:.2f} s: "
              f"read_ledger is {r['faster_than_pandas']:.1f}x faster   [target >= 5x]")
        measured = r["pydantic_s"] == r["pydantic_s"]  # nan: the model refuses the lines
        print("  (c) pydantic per line " + (
            f"{r['pydantic_s']:.2f} s: read_ledger is {r['faster_than_pydantic']:.1f}x "
            "faster   [target >= 8x]" if measured else
            "not measured: the model refuses some of these lines"))
        print(f"  in CPU seconds (all threads; read_ledger {r['cpu_s']:.2f}): "
              f"{r['cpu_faster_than_pandas']:.1f}x less than (b)"
              + (f", {r['cpu_faster_than_pydantic']:.1f}x less than (c)" if measured else ""))
        where = f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"
        for what, ratio, goal in (("pandas.read_json", r["faster_than_pandas"], 5),
                                  ("pydantic per line", r["faster_than_pydantic"], 8)):
            if ratio != ratio:  # not measured (an invalid shape)
                continue
            print(f"target: read_ledger at least {goal}x faster than {what}: "
                  f"{'met' if ratio >= goal else 'missed'} ({ratio:.1f}x; {where})")
        print(f"  read_ledger(payload='none') {r['no_payload_s']:.2f} s: "
              f"{r['no_payload_vs_pandas']:.1f}x faster than (b)"
              + (f", {r['no_payload_vs_pydantic']:.1f}x faster than (c)" if measured else ""))
        verdict = "met" if r["peak_over_frame"] <= 2.5 else "missed"
        print(f"  peak memory growth {r['peak_rss_MB']:.0f} MB for a {r['frame_MB']:.0f} MB "
              f"frame ({r['peak_over_frame']:.2f}x); pandas.read_json(lines=True) (peer): "
              f"{r['pandas_peak_over_frame']:.2f}x its frame; ours after Arrow's one-time "
              f"set-up (a read of 50 lines first): {r['warm_peak_over_frame']:.2f}x")
        print(f"target: read_ledger peak memory over the frame <= 2.5x: {verdict} "
              f"({r['peak_over_frame']:.2f}; load average {os.getloadavg()[0]:.2f} on "
              f"{os.cpu_count()} CPUs)", flush=True)
        r["load"] = os.getloadavg()[0]
    print_targets(results)
    plain = bench_append(20_000, "close")
    synced = bench_append(1_000, "always")
    print(f"\nappend: {plain:,.0f} events/s (fsync on close), {synced:,.0f} events/s "
          f"(fsync per event)")
    if args.json:
        print(json.dumps({"read": results, "append_per_s": plain,
                          "append_fsync_per_s": synced}, indent=2))


if __name__ == "__main__":
    main()
