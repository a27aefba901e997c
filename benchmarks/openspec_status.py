"""Status and validation of a big OpenSpec project, crewbook beside the OpenSpec CLI.

    python benchmarks/openspec_status.py          # 1,000 changes, 200 main specs
    python benchmarks/openspec_status.py 200      # another size

Generates `benchmarks/_data/openspec-<N>-<S>/` (git-ignored; `make_openspec_project`,
fixed seed), then times, best of a few runs:

- crewbook through the Python API: open the project, scan it and compute the status
  of every active change (target: under 1 s for 1,000 changes);
- `validate_project` through the Python API (config, schemas, main specs, every change
  and its deltas);
- the commands `crewbook status --json` and `crewbook validate PROJECT --json`, one
  process each (start-up included; target under 1 s each);
- the peers, `openspec status --all --json` and `openspec validate --all --json` (the
  CLI in `tests/openspec_cli/`), one process per run, so their time includes node.

It prints the times, the ratio to the peer, and the machine load (1-minute average,
CPU count), since other jobs on a shared machine change every figure.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from crewbook.artifacts import Project
from crewbook.artifacts.audit import validate_project
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


def project(n: int, n_specs: int) -> Path:
    """The generated project of `n` changes and `n_specs` main specs (made once)."""
    root = DATA / f"openspec-{n}-{n_specs}"
    if not (root / "openspec" / "changes").is_dir():
        make_openspec_project(root, n, n_specs=n_specs)
    return root


def statuses(root: Path) -> int:
    """Status of every active change through the Python API; the number computed."""
    return len([change.status() for change in Project(root).scan().changes])


def peer(root: Path, *args: str) -> None:
    """`openspec ARGS` in the project."""
    env = dict(os.environ, OPENSPEC_TELEMETRY="0", DO_NOT_TRACK="1", NO_COLOR="1")
    done = subprocess.run([str(CLI), *args], cwd=root, env=env,
                          capture_output=True, timeout=600, check=False)
    if not done.stdout:
        raise SystemExit(f"openspec {' '.join(args)} failed: {done.stderr.decode()[:300]}")


def command(*args: str | Path) -> None:
    """`crewbook ARGS` as a separate process (start-up included)."""
    done = subprocess.run([sys.executable, "-c", "import sys; from crewbook.commands import "
                           "main; sys.exit(main())", *map(str, args)],
                          capture_output=True, timeout=600, check=False)
    if not done.stdout:
        raise SystemExit(f"crewbook {args} failed: {done.stderr.decode()[:300]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=1000, help="number of changes")
    parser.add_argument("--specs", type=int, default=200, help="number of main specs")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    root = project(args.n, args.specs)
    assert statuses(root) == args.n
    few = max(2, args.repeat // 2)
    ours = best(lambda: statuses(root), args.repeat)
    checked = best(lambda: validate_project(root), args.repeat)
    cmd_status = best(lambda: command("--project", root, "status", "--json"), few)
    cmd_validate = best(lambda: command("validate", root, "--json"), few)
    load, cpus = os.getloadavg()[0], os.cpu_count() or 1
    print(f"a generated OpenSpec project of {args.n:,} changes and {args.specs} main specs "
          f"(load {load:.2f} on {cpus} CPUs)")
    rows = [("crewbook status (Python API)", ours), ("crewbook validate (Python API)", checked),
            ("crewbook status --json (command)", cmd_status),
            ("crewbook validate --json (command)", cmd_validate)]
    for label, took in rows:
        print(f"  {label:<40}{took:8.3f} s   target < 1 s: {'met' if took < 1 else 'missed'}")
    if shutil.which("node") is None or not CLI.exists():
        print("  openspec: not installed (cd tests/openspec_cli && npm ci)")
        return
    for took, peer_args in ((cmd_status, ("status", "--all", "--json")),
                            (cmd_validate, ("validate", "--all", "--json"))):
        theirs = best(lambda a=peer_args: peer(root, *a), few)  # type: ignore[misc]
        print(f"  {'openspec ' + ' '.join(peer_args) + ' (peer)':<40}{theirs:8.3f} s   "
              f"crewbook's command is {theirs / took:.1f}x faster")
    print(f"  (load at the end {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
