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
- the start-up part of the validate command: a process that builds the parser and
  imports what validate needs, reading no file;
- the peers, `openspec status --all --json` and `openspec validate --all --json` (the
  CLI in `tests/openspec_cli/`), one process per run, so their time includes node.

The commands and their peers are run in turns (each one's first run, then each one's
second...), so both sides see the same load; the best wall time of each is printed with
the CPU time its process used (which other programs on a shared machine barely change),
whether each target is met (under 1 s, and faster than the peer), the ratio, and the
machine load (1-minute average, CPU count).
"""

from __future__ import annotations

import argparse
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

sys.path.insert(0, str(Path(__file__).parent))
from _bench import best  # noqa: E402


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


#: What `crewbook validate` imports before it reads a file: its start-up part.
STARTUP = ("from crewbook.commands import build_parser; build_parser(); "
           "import crewbook.commands.validate, crewbook.artifacts.audit, "
           "crewbook.artifacts.delta_checks, crewbook.artifacts.spec_checks")


def startup() -> None:
    """A process that starts Python and imports what `crewbook validate` needs."""
    subprocess.run([sys.executable, "-c", STARTUP], timeout=600, check=True)


def timed(run: Callable[[], Any]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child processes) of one `run()`."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def in_turns(runners: dict[str, Callable[[], Any]], repeat: int) -> dict[str, tuple[float, float]]:
    """The best wall time and the best child CPU time of each runner, measured in turns
    (each runner's first run, then each one's second...), so every side sees the same
    moments of a shared machine's load."""
    best_of: dict[str, tuple[float, float]] = {}
    for _ in range(repeat):
        for name, run in runners.items():
            wall, cpu = timed(run)
            old = best_of.get(name, (wall, cpu))
            best_of[name] = (min(old[0], wall), min(old[1], cpu))
    return best_of


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=1000, help="number of changes")
    parser.add_argument("--specs", type=int, default=200, help="number of main specs")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    root = project(args.n, args.specs)
    assert statuses(root) == args.n
    ours = best(lambda: statuses(root), args.repeat)
    checked = best(lambda: validate_project(root), args.repeat)
    load, cpus = os.getloadavg()[0], os.cpu_count() or 1
    print(f"a generated OpenSpec project of {args.n:,} changes and {args.specs} main specs "
          f"(load {load:.2f} on {cpus} CPUs)")
    for label, api in (("crewbook status (Python API)", ours),
                       ("crewbook validate (Python API)", checked)):
        print(f"  {label:<40}{api:8.3f} s   target < 1 s: {'met' if api < 1 else 'missed'}")
    runners: dict[str, Callable[[], Any]] = {
        "status": lambda: command("--project", root, "status", "--json"),
        "validate": lambda: command("validate", root, "--json"),
        "start-up": startup}
    peers = {"status": ("status", "--all", "--json"), "validate": ("validate", "--all", "--json")}
    have_peer = shutil.which("node") is not None and CLI.exists()
    if have_peer:
        for name, peer_args in peers.items():
            runners[f"openspec {name}"] = lambda a=peer_args: peer(root, *a)  # type: ignore[misc]
    took = in_turns(runners, max(3, args.repeat))
    print("  commands, one process each, best of runs taken in turns (wall; CPU of the "
          "process, which the load of other programs barely changes):")
    for name in peers:
        wall, cpu = took[name]
        verdict = "met" if wall < 1 else f"missed (CPU {'under' if cpu < 1 else 'over'} 1 s)"
        line = (f"  crewbook {name + ' --json':<31}{wall:8.3f} s  CPU {cpu:6.3f} s   "
                f"target < 1 s: {verdict}")
        if have_peer:
            p_wall, p_cpu = took[f"openspec {name}"]
            line += (f"; openspec {' '.join(peers[name])} (peer) {p_wall:.3f} s, CPU "
                     f"{p_cpu:.3f} s: crewbook {p_wall / wall:.1f}x faster "
                     f"({'met' if wall < p_wall else 'missed'})")
        print(line)
    wall, cpu = took["start-up"]
    print(f"  of which start-up (Python, the parser, validate's imports): {wall:.3f} s, "
          f"CPU {cpu:.3f} s")
    if not have_peer:
        print("  openspec: not installed (cd tests/openspec_cli && npm ci)")
    print(f"  (load at the end {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
