"""Benchmark how fast the `crewbook` command answers: `--version`, `--help`, and `status`
on the tour project, beside the peer `python -c pass` (the interpreter's own start-up)
measured in the same run.

    python benchmarks/startup.py        # 15 rounds
    python benchmarks/startup.py 40     # more rounds on a busy machine

Targets (a quiet 2-core machine): `--version` and `--help` under 0.15 s, `status` on
the tour under 0.4 s. Each command runs as a user runs it, in a fresh process, with
compiled bytecode cached as after a normal install (in a temporary folder, never in the
checkout) and a private `CREWBOOK_HOME`. The rounds are taken in turns (every command
once, then every command again), so each side sees the same moments of a shared
machine; the fastest round is printed (the one least disturbed), with the children's
CPU time (user + system) of that round, and the load average.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _bench import machine_load

#: (name, the command's arguments after the program, the target in seconds or None)
CASES: list[tuple[str, list[str], float | None]] = [
    ("python -c pass (peer)", [], None),
    ("crewbook --version", ["--version"], 0.15),
    ("crewbook --help", ["--help"], 0.15),
    ("crewbook status (tour)", ["status"], 0.4),
]


def program() -> list[str]:
    """The `crewbook` script beside this interpreter, else the same entry point by `-c`."""
    script = Path(sys.executable).with_name("crewbook")
    if script.is_file():
        return [sys.executable, str(script)]
    return [sys.executable, "-c", "import sys; from crewbook.commands import main; "
            "sys.exit(main())"]


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and children's CPU seconds of one run of `argv`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main(rounds: int = 15) -> int:
    from crewbook.examples import example_project

    work = Path(tempfile.mkdtemp(prefix="crewbook-startup-"))
    try:
        tour = example_project("tour", work / "tour")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(PYTHONPYCACHEPREFIX=str(work / "pycache"),
                   CREWBOOK_HOME=str(work / "home"), NO_COLOR="1")
        crewbook = program()
        argvs = {name: ([sys.executable, "-c", "pass"] if not args else [*crewbook, *args])
                 for name, args, _ in CASES}
        for argv in argvs.values():  # warm-up: compiles and caches the bytecode
            timed(argv, tour, env)
        best: dict[str, tuple[float, float]] = {}
        for _ in range(rounds):
            for name, argv in argvs.items():
                wall, cpu = timed(argv, tour, env)
                if name not in best or wall < best[name][0]:
                    best[name] = (wall, cpu)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    peer = best[CASES[0][0]][0]
    print(f"start-up, fastest of {rounds} rounds taken in turns [{machine_load()}]")
    print(f"  {'':<26}{'wall':>9}{'CPU':>9}{'vs peer':>10}")
    all_met = True
    for name, _, _target in CASES:
        wall, cpu = best[name]
        print(f"  {name:<26}{wall:>8.3f}s{cpu:>8.3f}s{wall / peer:>9.1f}x")
    for name, _, target in CASES:
        if target is None:
            continue
        wall, cpu = best[name]
        met = wall < target
        all_met &= met
        print(f"target {name}: {wall:.3f} s (< {target:.2f} s; python -c pass "
              f"{peer:.3f} s): {'met' if met else 'missed'} [{machine_load()}]")
        # on a loaded machine the wall clock counts other programs' turns; CPU time not
        print(f"target {name} (CPU time): {cpu:.3f} s (< {target:.2f} s; python -c pass "
              f"{best[CASES[0][0]][1]:.3f} s): {'met' if cpu < target else 'missed'}")
    return 0 if all_met else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 15))
