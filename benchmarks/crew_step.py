"""Crew acts per second against `transitions`, and the bar runner against `subprocess.run`.

1. Accepted crew acts per second. A crew loop (the real engine on a real project: the
   tour copied to a temporary folder, its change given `--stories` sections in
   `tasks.md`, scope ``epic``, no round cap) takes analyst ``done`` → developer ``done``
   → qa ``no-go`` → developer ``done`` → qa ``go`` per story, so every act is checked
   (role, verdict, summary), logged, and a ``go`` moves the pointer to the next story
   read from the backlog. Measured with a ledger file (`crewbook.Ledger`) and with no
   ledger (events dropped); the bar is off here (``run_bar=False``), it is measured in
   part 2. The peer is a `transitions.Machine` running the same three-role machine: one
   ``report`` trigger per role whose condition checks the role and the verdict, ``no-go``
   back to the developer, ``go`` to the next story, each accepted report appended to a
   list as its event.
   Like for like: the project is opened once (its schema loaded once), as the peer's
   transition table is built once, and each measured run starts a new loop on it, as the
   peer starts a new `Machine`; each new loop still reads the backlog (`tasks.md`) itself
   (its parse is remembered by the text, as the schema is by the project: an unchanged
   file is not parsed again), and every act still looks at it (an ``fstat`` of the file
   the loop holds open, `crew.backlog.FileWatch`: a hand edit is seen at the next act).
   The contracts `report` returns are built only when read; nobody reads them here, as
   nobody reads the peer's state after a trigger.
   Every side is measured in turns with the peer (`_bench.rates`: each side's first
   measure, then each side's second...), so a change of the machine's load hits all alike.
   Targets, in CPU time (this process's user + system time, which other programs on a
   shared machine do not inflate as they do the wall clock): with the ledger file at
   least 0.6x the peer's rate; without, at least the peer's. The wall-clock rates are
   printed too, for information.

2. The bar runner's cost per command (`crewbook.crew.run_command`: own process group,
   timeout watch, bounded output, group kill at the end) against a bare
   ``subprocess.run(command, shell=True, capture_output=True)`` of the same command
   (`python -c pass`), interleaved, median per command. Target: at most 1.2x.

Run: ``python benchmarks/crew_step.py [--stories 200] [--commands 30]`` (needs
``pip install transitions``, the ``bench`` extra). Prints the rates, the ratios, and
whether each target is met.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import NullSink, have_peer, machine_load, print_loop_targets, print_vs_peer, rates

#: One story's reports: a send-back, then the go.
SCRIPT = (("analyst", "done"), ("developer", "done"), ("qa", "no-go"), ("developer", "done"),
          ("qa", "go"))


def make_project(folder: Path, stories: int) -> Path:
    """The tour project with `stories` sections of two checkboxes each."""
    import crewbook

    root = crewbook.example_project(dest=folder / "tour")
    lines = ["# Tasks", ""]
    for s in range(1, stories + 1):
        lines += [f"## Story {s}", "", f"- [ ] {s}.1 First task of story {s}",
                  f"- [ ] {s}.2 Second task of story {s}", ""]
    (root / "_codev" / "changes" / "add-csv-export" / "tasks.md").write_text("\n".join(lines))
    return root


def crewbook_runner(root: Path, stories: int, sink: Callable[[int], Any]) -> Callable[[int], int]:
    from crewbook.crew import CrewReport, CrewState
    from crewbook.crew.engine import CrewLoop
    from crewbook.crew.model import BarCommand, CrewConfig

    config = CrewConfig(goal="bench", max_rounds=0, bar={"test": BarCommand(command="true")})
    reports = [CrewReport(role, verdict, f"{role} {verdict}") for role, verdict in SCRIPT]
    project = root_project(root)  # opened once, as a session does (see the docstring)
    counter = [0]

    def run(n_stories: int) -> int:
        n_stories = min(n_stories, stories)
        counter[0] += 1
        state = CrewState(run=f"bench-{counter[0]}", config=config, epic="add-csv-export",
                          story="Story 1")
        loop = CrewLoop(state, project=project, ledger=sink(counter[0]),
                        run_bar=False)
        for _ in range(n_stories):
            for report in reports:
                loop.report(report)
        return n_stories * len(reports)

    return run


def root_project(root: Path) -> Any:
    from crewbook import Project

    return Project(root)


def transitions_runner(stories: int) -> Callable[[int], int]:
    from transitions import Machine

    class Crew:
        def __init__(self) -> None:
            self.story = 1
            self.events: list[dict[str, Any]] = []

        def accept(self, role: str, verdict: str, summary: str) -> None:
            self.events.append({"role": role, "verdict": verdict, "summary": summary,
                                "story": self.story})

        def next_story(self, role: str, verdict: str, summary: str) -> None:
            self.story += 1

    def is_(role: str, verdicts: tuple[str, ...]) -> Callable[..., bool]:
        def check(r: str, verdict: str, summary: str) -> bool:
            return r == role and verdict in verdicts and bool(summary.strip())
        return check

    table = [
        {"trigger": "report", "source": "analyst", "dest": "developer",
         "conditions": [is_("analyst", ("done",))], "after": "accept"},
        {"trigger": "report", "source": "developer", "dest": "qa",
         "conditions": [is_("developer", ("done",))], "after": "accept"},
        {"trigger": "report", "source": "qa", "dest": "developer",
         "conditions": [is_("qa", ("no-go",))], "after": "accept"},
        {"trigger": "report", "source": "qa", "dest": "analyst",
         "conditions": [is_("qa", ("go",))], "after": ["accept", "next_story"]},
    ]

    def run(n_stories: int) -> int:
        n_stories = min(n_stories, stories)
        model = Crew()
        Machine(model=model, states=["analyst", "developer", "qa"], transitions=table,
                initial="analyst", auto_transitions=False)
        for _ in range(n_stories):
            for role, verdict in SCRIPT:
                model.report(role, verdict, f"{role} {verdict}")  # type: ignore[attr-defined]
        assert model.story == n_stories + 1
        return n_stories * len(SCRIPT)

    return run


def bar_overhead(commands: int) -> tuple[float, float]:
    """Median seconds per command: (crewbook's runner, bare subprocess.run)."""
    from crewbook.crew import run_command

    command = f"{shlex.quote(sys.executable)} -c pass"
    root = Path(tempfile.gettempdir())
    ours: list[float] = []
    bare: list[float] = []
    for _ in range(3):  # warm up both
        run_command(command, root=root)
        subprocess.run(command, shell=True, capture_output=True, check=False)
    for _ in range(commands):
        start = time.perf_counter()
        result = run_command(command, root=root)
        ours.append(time.perf_counter() - start)
        assert result.passed
        start = time.perf_counter()
        done = subprocess.run(command, shell=True, capture_output=True, check=False)
        bare.append(time.perf_counter() - start)
        assert done.returncode == 0
    return statistics.median(ours), statistics.median(bare)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stories", type=int, default=200, help="stories per measure")
    parser.add_argument("--commands", type=int, default=30, help="bar commands per side")
    args = parser.parse_args(argv)
    if not have_peer():
        return 2
    from crewbook.ledger import Ledger

    os.environ.setdefault("CREWBOOK_HOME", tempfile.mkdtemp(prefix="crewbook-home-"))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        root = make_project(folder, args.stories)
        cpu: dict[str, float] = {}
        measured = rates({  # taken in turns: the load changes alike for every side
            "peer": transitions_runner(args.stories),
            "ledger file": crewbook_runner(
                root, args.stories, lambda n: Ledger(folder / f"bench-{n}.jsonl")),
            "no ledger": crewbook_runner(root, args.stories, lambda n: NullSink()),
        }, args.stories, cpu=cpu)
        peer = measured.pop("peer")
        results = {f"crewbook, {name}": value for name, value in measured.items()}
    rounds = (f"{args.stories} stories x {len(SCRIPT)} acts, best of 5 rounds taken in "
              f"turns with the peer; {machine_load()}")
    print_vs_peer(f"accepted crew acts per CPU second ({rounds})", cpu["peer"],
                  {f"crewbook, {name}": cpu[name] for name in measured})
    print_vs_peer("the same, per wall-clock second (for information: on a shared machine it "
                  "counts the time other programs held the CPU)", peer, results)
    print_loop_targets("crew acts/s", results["crewbook, ledger file"],
                       results["crewbook, no ledger"], peer, cpu, ledger_target=0.6,
                       cpu_only=True)
    ours, bare = bar_overhead(args.commands)
    ratio = ours / bare
    print()
    print(f"bar runner per command (python -c pass, median of {args.commands})")
    print(f"  {'subprocess.run (peer)':<24}{bare * 1000:>10.2f} ms")
    print(f"  {'crewbook run_command':<24}{ours * 1000:>10.2f} ms   {ratio:5.2f}x subprocess.run")
    print(f"target: runner within 1.2x of subprocess.run: "
          f"{'met' if ratio <= 1.2 else 'NOT met'} ({ratio:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
