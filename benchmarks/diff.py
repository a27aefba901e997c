"""Schema diff benchmark: `diff_schemas` on big generated schemas over a line diff of their files.

    python benchmarks/diff.py [--sizes 1000 10000] [--repeat 3]

For each size, a generated schema (`gen_schema.py`, fixed seed) and a redesign of it
(every 20th artifact renamed, every 50th given another output, one new artifact every
100) are loaded once. Timed: `diff_schemas` on the two loaded schemas (artifacts,
renames, edges, gate, build order, and the overlay drawing's model). The peer is what
`git diff` would show, Python's `difflib.unified_diff` over the two `schema.yaml`
texts, measured in the same run: ratio = diff_schemas / difflib (a structured diff
that also finds renames and build-order moves, against a line diff that knows
nothing). Each figure is the best of `--repeat` runs. A worst case follows: a chain of
the same size with every id renamed, where renames are found one link per round.
"""

from __future__ import annotations

import argparse
import difflib
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from gen_schema import generate  # beside this script, which Python puts on sys.path

import crewbook
from crewbook.compare import diff_schemas
from crewbook.compare.core import diff_records


def redesign(data: dict[str, Any]) -> dict[str, Any]:
    """The schema with every 20th artifact renamed (references follow), every 50th given
    another output, and one new artifact every 100."""
    renamed = {a["id"]: f"{a['id']}-v2" for i, a in enumerate(data["artifacts"]) if i % 20 == 7}
    out: list[dict[str, Any]] = []
    for i, art in enumerate(data["artifacts"]):
        new = dict(art, id=renamed.get(art["id"], art["id"]))
        if "requires" in art:
            new["requires"] = [renamed.get(r, r) for r in art["requires"]]
        if i % 50 == 3:
            new["generates"] = art["generates"].replace(".md", ".txt")
        out.append(new)
        if i % 100 == 99:
            out.append({"id": f"extra-{i}", "generates": f"extra/{i}.md", "requires": [new["id"]]})
    apply = dict(data["apply"], requires=[renamed.get(r, r) for r in data["apply"]["requires"]])
    return dict(data, name=f"{data['name']}-v2", artifacts=out, apply=apply)


def best(run: Callable[[], object], repeat: int) -> float:
    """The best wall time of `repeat` runs, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="*", type=int, default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'artifacts':>9}  {'diff_schemas':>12}  {'difflib':>9}  {'ratio':>6}  differences")
    with tempfile.TemporaryDirectory(prefix="crewbook-bench-diff-") as tmp:
        for n in args.sizes:
            texts = []
            for name, data in (("a", generate(n)), ("b", redesign(generate(n)))):
                folder = Path(tmp) / f"{name}-{n}"
                folder.mkdir()
                texts.append(yaml.safe_dump(data, sort_keys=False, width=200))
                (folder / "schema.yaml").write_text(texts[-1], encoding="utf-8")
            a = crewbook.load_schema(Path(tmp) / f"a-{n}")
            b = crewbook.load_schema(Path(tmp) / f"b-{n}")
            result = diff_schemas(a, b)
            ours = best(lambda a=a, b=b: diff_schemas(a, b), args.repeat)
            left, right = texts[0].splitlines(), texts[1].splitlines()
            peer = best(lambda left=left, right=right: list(difflib.unified_diff(left, right)),
                        args.repeat)
            counts = ", ".join(f"{v} {k}" for k, v in result.counts().items())
            print(f"{n:>9,}  {ours:>11.3f}s  {peer:>8.3f}s  {ours / peer:>6.2f}  "
                  f"{len(result.entries):,} ({counts})")
        for n in args.sizes:
            chain_a = {f"a{i}": {"generates": f"f{i}.md", "requires": (f"a{i - 1}",) if i else ()}
                       for i in range(n)}
            chain_b = {f"b{i}": {"generates": f"f{i}.md", "requires": (f"b{i - 1}",) if i else ()}
                       for i in range(n)}
            worst = best(lambda x=chain_a, y=chain_b: diff_records(
                x, y, signature=("generates", "requires"), refs=("requires",)), args.repeat)
            print(f"worst case, a chain of {n:,} with every id renamed: {worst:.3f}s "
                  f"({n:,} rounds of renames)")


if __name__ == "__main__":
    main()
