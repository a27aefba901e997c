"""Generate big, realistic artifact schemas for the drawing benchmark (fixed seed).

    python benchmarks/gen_schema.py 100 1000 10000

writes `benchmarks/_data/gen-<N>/schema.yaml` (git-ignored) and prints the paths.
Artifacts come in areas of 50, each a folder (`area-007/...`), like the feature areas
of a large programme: most `requires` point to recent artifacts of the same area,
some to earlier areas; every 10th artifact is a glob, every 25th has a role, and the
apply gate waits for the last artifact of the last three areas. The same N always
gives the same file.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path
from typing import Any

import yaml

SEED = 20261202
AREA_SIZE = 50
DATA = Path(__file__).parent / "_data"


def generate(n: int, seed: int = SEED) -> dict[str, Any]:
    """The schema data of `n` artifacts."""
    rnd = random.Random(seed * 1_000_003 + n)
    artifacts: list[dict[str, Any]] = []
    for i in range(n):
        area, k = divmod(i, AREA_SIZE)
        art_id = f"a{i:05d}"
        generates = (f"area-{area:03d}/{art_id}/*.md" if i % 10 == 9
                     else f"area-{area:03d}/{art_id}.md")
        art: dict[str, Any] = {"id": art_id, "generates": generates}
        deps: set[int] = set()
        start = area * AREA_SIZE
        if k:
            deps.update(rnd.sample(range(max(start, i - 8), i), k=min(k, rnd.randint(1, 2))))
        if start and (k == 0 or rnd.random() < 0.05):
            deps.add(rnd.randrange(0, start))
        if deps:
            art["requires"] = [f"a{d:05d}" for d in sorted(deps)]
        if i % 25 == 0:
            art["role"] = {"id": f"role-{i}", "name": {"en": f"Role {i}"},
                           "question": f"Is {art_id} right?", "done_when": ["It is reviewed"]}
        artifacts.append(art)
    areas = (n - 1) // AREA_SIZE + 1
    gate = sorted({min(n, (a + 1) * AREA_SIZE) - 1 for a in range(max(0, areas - 3), areas)})
    last = artifacts[gate[-1]]["generates"]
    tracks = last if "*" not in last else "tasks.md"
    return {
        "name": f"gen-{n}",
        "description": f"{n:,} generated artifacts in areas of {AREA_SIZE} (seed {seed})",
        "artifacts": artifacts,
        "apply": {"requires": [f"a{g:05d}" for g in gate], "tracks": tracks},
    }


def write(n: int, root: Path = DATA) -> Path:
    """Write `root/gen-<n>/schema.yaml` (if not already identical); returns the folder."""
    folder = root / f"gen-{n}"
    folder.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(generate(n), sort_keys=False, width=200)
    file = folder / "schema.yaml"
    if not file.is_file() or file.read_text("utf-8") != text:
        file.write_text(text, encoding="utf-8")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[100, 1000, 10000])
    for n in parser.parse_args().sizes:
        print(write(n))


if __name__ == "__main__":
    main()
