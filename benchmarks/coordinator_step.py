"""Coordinator tasks per second through a full path with a send-back, against `transitions`.

Each task takes the path of SPEC C6 with one send-back, twelve accepted acts:
plan → developer builds v1 → QA fails v1 → sent back → developer builds v2 → QA
passes v2 → the reviewer approves v2 → finalise (a pull request). Three crewbook
runs step it on `CoordinatorLoop` with a fixed clock:

- with a ledger written to a file (`crewbook.Ledger`: one locked, flushed write per act);
- with an in-memory ledger (`MemoryLedger`);
- with no ledger at all (events dropped).

The peer is an equivalent `transitions.Machine`: coordinator and agent states, one
trigger per move or report, guard conditions for the same rules crewbook checks on
this path (only the role at work reports, only QA and the reviewer judge, finalising
needs QA's pass and the reviewer's approval on the exact version that ships), and the
same facts kept (versions, verdicts, launches). crewbook also writes the PR description
and the ledger events. Like for like: each task ends with a check that it reached the pull
request, the outcome read from the loop's state (`loop.view.outcome`) as the peer reads
its ``state``; the full `status()` view (caps, counters) is not built per task, and
neither are the contracts `report` returns, which are built only when read (nobody reads
them here, as nobody reads the peer's).

Every side is measured in turns with the peer (`_bench.rates`: each side's first
measure, then each side's second...), so a change of the machine's load hits all alike;
``benchmarks/loop_step.py`` runs this same measure after its pipeline's.

Run: ``python benchmarks/coordinator_step.py [--runs 300]`` (needs ``pip install
transitions``). Prints tasks/s and acts/s for each and the ratio to the peer.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import NullSink, have_peer, machine_load, print_loop_targets, rates

ACTS = 12


def reports() -> list[Any]:
    """The twelve acts of one task."""
    from crewbook.delivery import Built, Delegate, Finalise, Judgement, Plan

    return [
        Plan(("the report downloads as CSV", "the columns match the table")),
        Delegate("developer", "add the CSV export"),
        Built(("app/export.py", "tests/test_export.py"), duration_ms=900_000),
        Delegate("qa", "verify version 1"),
        Judgement("qa", "fail", findings=("the header row is missing",), duration_ms=300_000),
        Delegate("developer", "write the header row", fixes=("header first",)),
        Built(("app/export.py",), duration_ms=300_000),
        Delegate("qa", "verify version 2"),
        Judgement("qa", "pass", duration_ms=300_000),
        Delegate("reviewer", "review version 2"),
        Judgement("reviewer", "approved", duration_ms=300_000),
        Finalise(),
    ]



def crewbook_runner(sink: Callable[[], Any]) -> Callable[[int], int]:
    from crewbook.delivery import CoordinatorLoop, ManualClock, Task

    task = Task(id="csv-export", description="Export the report as CSV")
    steps = reports()

    def run(runs: int) -> int:
        ledger = sink()
        for _ in range(runs):
            loop = CoordinatorLoop(task, ledger=ledger, run="bench", clock=ManualClock())
            for report in steps:
                loop.report(report)
            outcome = loop.view.outcome  # the peer's check: `m.state == "pull_request"`
            assert outcome is not None
            assert outcome.kind == "pull_request"
        close = getattr(ledger, "close", None)
        if close is not None:
            close()
        return runs

    return run


def transitions_runner() -> Callable[[int], int]:
    from transitions import Machine

    class Task:
        def __init__(self) -> None:
            self.version = 0
            self.verdicts: list[tuple[str, str, int]] = []
            self.launches: dict[str, int] = {}
            self.criteria: tuple[str, ...] = ()

        def passed(self, role: str, verdict: str) -> bool:
            return any(r == role and v == verdict and n == self.version
                       for r, v, n in self.verdicts)

    states = ["coordinate", "developer", "qa", "reviewer", "pull_request"]

    def table(model: Task) -> list[dict[str, Any]]:
        def plan(criteria: tuple[str, ...]) -> bool:
            model.criteria = criteria
            return bool(criteria)

        def launch(role: str) -> Callable[[str], bool]:
            def go(instructions: str) -> bool:
                if role == "reviewer" and not model.passed("qa", "pass"):
                    return False
                model.launches[role] = model.launches.get(role, 0) + 1
                return bool(model.criteria) and model.launches[role] <= 5
            return go

        def built(files: tuple[str, ...]) -> bool:
            model.version += 1 if files else 0
            return True

        def judged(role: str) -> Callable[[str], bool]:
            def judge(verdict: str) -> bool:
                if role not in ("qa", "reviewer"):
                    return False
                model.verdicts.append((role, verdict, model.version))
                return True
            return judge

        def can_finalise() -> bool:
            return model.passed("qa", "pass") and model.passed("reviewer", "approved")

        rows: list[dict[str, Any]] = [
            {"trigger": "plan", "source": "coordinate", "dest": "coordinate",
             "conditions": [plan]},
            {"trigger": "built", "source": "developer", "dest": "coordinate",
             "conditions": [built]},
            {"trigger": "finalise", "source": "coordinate", "dest": "pull_request",
             "conditions": [can_finalise]},
        ]
        for role in ("developer", "qa", "reviewer"):
            rows.append({"trigger": f"delegate_{role}", "source": "coordinate", "dest": role,
                         "conditions": [launch(role)]})
        for role in ("qa", "reviewer"):
            rows.append({"trigger": f"judge_{role}", "source": role, "dest": "coordinate",
                         "conditions": [judged(role)]})
        return rows

    def run(runs: int) -> int:
        for _ in range(runs):
            model = Task()
            Machine(model=model, states=states, transitions=table(model), initial="coordinate",
                    auto_transitions=False)
            m: Any = model
            m.plan(("the report downloads as CSV", "the columns match the table"))
            m.delegate_developer("add the CSV export")
            m.built(("app/export.py", "tests/test_export.py"))
            m.delegate_qa("verify version 1")
            m.judge_qa("fail")
            m.delegate_developer("write the header row")
            m.built(("app/export.py",))
            m.delegate_qa("verify version 2")
            m.judge_qa("pass")
            m.delegate_reviewer("review version 2")
            m.judge_reviewer("approved")
            m.finalise()
            assert m.state == "pull_request"
        return runs

    return run



def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=300, help="tasks per measure")
    args = parser.parse_args(argv)
    if not have_peer():
        return 2
    from crewbook.core.sinks import MemoryLedger
    from crewbook.ledger import Ledger

    with tempfile.TemporaryDirectory() as tmp:
        ledger_file = Path(tmp) / "bench.jsonl"
        cpu: dict[str, float] = {}
        measured = rates({  # taken in turns: the load changes alike for every side
            "peer": transitions_runner(),
            "ledger file": crewbook_runner(lambda: Ledger(ledger_file, run="bench")),
            "memory ledger": crewbook_runner(MemoryLedger),
            "no ledger": crewbook_runner(NullSink),
        }, args.runs, cpu=cpu)
        peer = measured.pop("peer")
        results = {f"crewbook, {name}": value for name, value in measured.items()}
    print(f"coordinator tasks/s through a full path with one send-back ({ACTS} acts per task; "
          f"{args.runs} tasks, best of 5 rounds taken in turns with the peer; {machine_load()})")
    print(f"  {'transitions (peer)':<26}{peer:>10,.0f} tasks/s {peer * ACTS:>10,.0f} acts/s")
    for name, value in results.items():
        print(f"  {name:<26}{value:>10,.0f} tasks/s {value * ACTS:>10,.0f} acts/s   "
              f"{value / peer:5.2f}x transitions")
    print_loop_targets("coordinator tasks/s", results["crewbook, ledger file"],  # judged in
                       results["crewbook, no ledger"], peer, cpu, cpu_only=True)  # CPU time
    return 0


if __name__ == "__main__":
    sys.exit(main())
