"""Status of every change of a big OpenSpec project, crewbook beside the OpenSpec CLI.

    python benchmarks/openspec_status.py          # 1,000 changes
    python benchmarks/openspec_status.py 200      # another size

Generates `benchmarks/_data/openspec-<N>/` (git-ignored; `make_openspec_project`, fixed
seed), then times, best of a few runs in this process:

- crewbook through the Python API: open the project, scan it and compute the status
  of every active change (target: under 1 s for 1,000 changes);
- the same plus delta validation of every change (what `crewbook validate` adds);
- the peer, `openspec status --all --json` (the CLI in `tests/openspec_cli/`), one
  process per run, so its time includes starting node.

It prints the times, the ratio to the peer, and the machine load (1-minute average,
CPU count), since other jobs on a shared machine change every figure.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from crewbook.artifacts import Project
from crewbook.artifacts.delta_checks import delta_problems
from crewbook.artifacts.synthetic import make_openspec_project

DATA = Path(__file__).parent / "_data"
CLI = Path(__file__).parents[1] / "tests" / "openspec_cli" / "node_modules" / ".bin" / "openspec"


def best(fn: Callable[[], Any], repeat: int) -> float:
    """Best wall time of `repeat` calls, in seconds."""
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def project(n: int) -> Path:
    """The generated project of `n` changes (made once)."""
    root = DATA / f"openspec-{n}"
    if not (root / "openspec" / "changes").is_dir():
        make_openspec_project(root, n)
    return root


def statuses(root: Path) -> int:
    """Status of every active change through the Python API; the number computed."""
    return len([change.status() for change in Project(root).scan().changes])


def statuses_and_checks(root: Path) -> int:
    """Status and delta validation of every active change."""
    done = 0
    for change in Project(root).scan().changes:
        change.status()
        delta_problems(change)
        done += 1
    return done


def peer(root: Path) -> None:
    """`openspec status --all --json` in the project."""
    env = dict(os.environ, OPENSPEC_TELEMETRY="0", DO_NOT_TRACK="1", NO_COLOR="1")
    done = subprocess.run([str(CLI), "status", "--all", "--json"], cwd=root, env=env,
                          capture_output=True, timeout=600, check=False)
    if done.returncode != 0 or not done.stdout:
        raise SystemExit(f"openspec status failed: {done.stderr.decode()[:300]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=1000, help="number of changes")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    root = project(args.n)
    assert statuses(root) == args.n
    ours = best(lambda: statuses(root), args.repeat)
    checked = best(lambda: statuses_and_checks(root), max(1, args.repeat // 2))
    load, cpus = os.getloadavg()[0], os.cpu_count() or 1
    print(f"status of every change of a generated {args.n:,}-change OpenSpec project "
          f"(load {load:.2f} on {cpus} CPUs)")
    print(f"  {'crewbook status (Python API)':<40}{ours:8.3f} s   target < 1 s: "
          f"{'met' if ours < 1 else 'missed'}")
    print(f"  {'crewbook status + delta validation':<40}{checked:8.3f} s")
    if shutil.which("node") is None or not CLI.exists():
        print("  openspec status --all --json: not installed (cd tests/openspec_cli && npm ci)")
        return
    theirs = best(lambda: peer(root), max(1, args.repeat // 2))
    print(f"  {'openspec status --all --json (peer)':<40}{theirs:8.3f} s")
    print(f"  crewbook status is {theirs / ours:.1f}x faster than the OpenSpec CLI "
          "(whose time includes starting node)")


if __name__ == "__main__":
    main()
