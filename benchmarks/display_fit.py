"""What fitting a drawing to the cell costs: a display's drawing over one `dot` run.

    python benchmarks/display_fit.py [--sizes 100 2000 10000] [--repeat 3]

For each size, a generated schema (`gen_schema.py`, fixed seed) is drawn the way a
notebook display draws it (`draw.display.drawing_bundle`: collapsed when big, laid out
again while its text would be under 10 px at the cell's width, see `draw/layout.py`),
with an empty render cache. The peer is the `dot` program run once on the DOT text of
the drawing before any fitting (`prepare(model)`), which is what a display cost before
drawings were fitted: ratio = display / dot alone. Each figure is the best of
`--repeat` runs; the machine's load (1 min) is printed beside it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
from pathlib import Path

from gen_schema import write  # beside this script, which Python puts on sys.path

import crewbook
from crewbook.draw import prepare, to_dot
from crewbook.draw.display import drawing_bundle
from crewbook.draw.render import clear_cache, find_dot


def best(times: list[float]) -> float:
    """The fastest run (the least disturbed by other work)."""
    return min(times)


def main() -> None:
    """Print, per size, the display's time, `dot`'s time and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 2000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    program = find_dot()
    if program is None:
        raise SystemExit("the Graphviz 'dot' program is not on PATH")
    data = Path(__file__).parent / "_data"
    print(f"{'artifacts':>9} {'display s':>10} {'dot s':>8} {'ratio':>6}  load")
    for size in args.sizes:
        model = crewbook.load_schema(write(size, data)).graph_model()
        text = to_dot(prepare(model))
        shown, alone = [], []
        for _ in range(args.repeat):
            clear_cache()
            start = time.perf_counter()
            drawing_bundle(model)
            shown.append(time.perf_counter() - start)
            start = time.perf_counter()
            subprocess.run([program, "-Tsvg"], input=text.encode(), capture_output=True,
                           check=True)
            alone.append(time.perf_counter() - start)
        ratio = best(shown) / best(alone)
        print(f"{size:>9,} {best(shown):>10.2f} {best(alone):>8.2f} {ratio:>6.1f}  "
              f"{os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
