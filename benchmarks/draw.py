"""Drawing benchmark: crewbook's total time to draw a schema over `dot`'s own time.

    python benchmarks/draw.py [--sizes 100 1000 10000] [--repeat 3] [--full]

For each size, a generated schema (`gen_schema.py`, fixed seed) is loaded, turned
into a graph model, collapsed when it is bigger than
`crewbook.draw.options.collapse_threshold` (as a notebook display would), written as
DOT and rendered to SVG by `dot`. The peer is the `dot` program itself, run on the
very same DOT text: ratio = crewbook total / dot alone (target ≤ 1.1 at 1,000, where
nothing is collapsed). At 10,000 the drawing is collapsed, so its total is the
"collapsed render time". `--full` also times the uncollapsed 10,000-artifact drawing
(dot may need many minutes). Each figure is the best of `--repeat` runs.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from gen_schema import write  # beside this script, which Python puts on sys.path

import crewbook
from crewbook.draw import options, prepare, render, to_dot
from crewbook.draw.render import clear_cache, find_dot


def crewbook_run(folder: Path, collapse: bool | None) -> tuple[dict[str, float], str, int]:
    """Times of load, model + DOT, render; the DOT text; the number of nodes drawn."""
    clear_cache()
    t0 = time.perf_counter()
    schema = crewbook.load_schema(folder)
    t1 = time.perf_counter()
    model = prepare(schema.graph_model(), collapse=collapse)
    text = to_dot(model)
    t2 = time.perf_counter()
    render(text, "svg")
    t3 = time.perf_counter()
    times = {"load": t1 - t0, "model": t2 - t1, "render": t3 - t2, "total": t3 - t0}
    return times, text, len(model)


def dot_alone(dot: str, text: str, timeout: float) -> float:
    """Seconds `dot -Tsvg` takes on `text`, run directly."""
    data = text.encode("utf-8")
    t0 = time.perf_counter()
    subprocess.run([dot, "-Tsvg"], input=data, capture_output=True, check=True, timeout=timeout)
    return time.perf_counter() - t0


def measure(n: int, repeat: int, collapse: bool | None, timeout: float) -> dict[str, float]:
    folder = write(n)
    dot = find_dot()
    assert dot is not None
    best: dict[str, float] = {}
    alone = float("inf")
    nodes = 0
    for _ in range(repeat):
        times, text, nodes = crewbook_run(folder, collapse)
        for key, value in times.items():
            best[key] = min(best.get(key, float("inf")), value)
        alone = min(alone, dot_alone(dot, text, timeout))
    return {**best, "dot": alone, "ratio": best["total"] / alone, "nodes": nodes}


def load_vs_compose(n: int, repeat: int) -> tuple[float, float]:
    """Best CPU seconds of `crewbook.load_schema` and of libyaml's ``yaml.compose`` (the
    peer: parsing the same text into nodes, no Python objects) on the same schema."""
    import yaml

    folder = write(n)
    text = (folder / "schema.yaml").read_text(encoding="utf-8")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    def best(fn: object) -> float:
        times = []
        for _ in range(repeat):
            start = time.process_time()
            fn()  # type: ignore[operator]
            times.append(time.process_time() - start)
        return min(times)

    return (best(lambda: crewbook.load_schema(folder)),
            best(lambda: yaml.compose(text, Loader=loader)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--full", action="store_true",
                        help="also draw the biggest size uncollapsed")
    parser.add_argument("--timeout", type=float, default=1800.0)
    args = parser.parse_args()
    if find_dot() is None:
        print("the Graphviz 'dot' program is needed: apt-get install graphviz", file=sys.stderr)
        return 1
    options.dot_timeout = args.timeout
    version = subprocess.run(["dot", "-V"], capture_output=True, text=True).stderr.strip()
    print(f"crewbook {crewbook.__version__}, {version}, python {sys.version.split()[0]}, "
          f"collapse_threshold {options.collapse_threshold:,}, best of {args.repeat}")
    measure(100, 1, None, args.timeout)  # warm up imports and caches
    head = (f"{'artifacts':>9} {'drawn':>6} {'load s':>8} {'model+DOT s':>11} "
            f"{'render s':>9} {'total s':>8} {'dot alone s':>11} {'ratio':>6}")
    print(head)
    print("-" * len(head))
    runs = [(n, None) for n in args.sizes]
    if args.full:
        runs.append((max(args.sizes), False))
    results = {}
    for n, collapse in runs:
        r = measure(n, 1 if collapse is False else args.repeat, collapse, args.timeout)
        results[(n, collapse)] = r
        label = f"{n:,}" + (" full" if collapse is False else "")
        print(f"{label:>9} {int(r['nodes']):>6,} {r['load']:>8.3f} {r['model']:>11.3f} "
              f"{r['render']:>9.3f} {r['total']:>8.3f} {r['dot']:>11.3f} {r['ratio']:>6.2f}")
    if (1000, None) in results:
        ratio = results[(1000, None)]["ratio"]
        print(f"\nratio at 1,000 artifacts: {ratio:.2f} (target ≤ 1.10: "
              f"{'met' if ratio <= 1.1 else 'NOT met'})")
    print("\nschema load against libyaml's compose of the same file (CPU time, best of "
          f"{max(5, args.repeat)}; target <= 1.50x):")
    for n in args.sizes:
        load, compose = load_vs_compose(n, max(5, args.repeat))
        ratio = load / compose
        print(f"  {n:>6,} artifacts: load {load * 1e3:8.1f} ms, compose {compose * 1e3:8.1f} ms"
              f"  {ratio:5.2f}x  {'met' if ratio <= 1.5 else 'missed'}")
    if (10000, None) in results:
        r = results[(10000, None)]
        print(f"collapsed render at 10,000 artifacts: {r['total']:.2f} s in total "
              f"({int(r['nodes']):,} nodes drawn; load {r['load']:.2f} s, dot {r['render']:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
