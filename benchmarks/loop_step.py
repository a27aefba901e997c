"""Accepted reports per second through a 6-stage pipeline, against the `transitions` library.

Three crewbook runs step the same pipeline (six stages in a row, each producing one
JSON artifact validated against its kind's JSON Schema, then ``done``):

- with a ledger written to a file (`crewbook.Ledger`: a locked, flushed line per event);
- with an in-memory ledger (`MemoryLedger`);
- with no ledger at all (events dropped).

The peer is an equivalent `transitions.Machine`: six states and ``done``, one
``report`` trigger per stage whose condition validates the artifact against the
same JSON Schema with the same compiled validator and stores it. Both sides do the
same work per step apart from what crewbook adds (refusal checks, versions, ledger
events); each run ends with the same check, the finished reason read from the loop's
state as the peer reads its ``state`` (not the whole `status()` view), and the contract
`report` returns is built only when read (nobody reads it, as nobody reads the peer's).
A run with a ledger file closes it (its ``fsync``), as in ``coordinator_step.py``.

It then runs ``benchmarks/coordinator_step.py`` (the very same measure, in the same
process): coordinator tasks per second through a full path (plan, build, a QA fail,
send-back, QA pass, review, finalise). Its figures here and alone differ only by the
machine's load: every side is measured in turns with the peer (`_bench.rates`), so a
change of load hits both; measured one side after the other, two runs on a shared
machine gave 0.26x and 0.35x for the same code.

Run: ``python benchmarks/loop_step.py [--runs 300] [--no-coordinator]`` (needs
``pip install transitions``, the ``bench`` extra). Prints reports/s for each and the
ratios; the targets, judged on this process's CPU time (as in crew_step.py: other programs
on a shared machine do not inflate it), are "within 2x of transitions with the ledger on"
and "faster than transitions without"; the wall-clock rates are printed for information.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import NullSink, have_peer, machine_load, print_loop_targets, print_vs_peer, rates

STAGES = 6
SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["summary", "items"],
    "properties": {
        "summary": {"type": "string", "minLength": 1},
        "items": {"type": "array", "minItems": 1, "items": {"type": "string"}},
    },
}


def write_pipeline(folder: Path) -> Path:
    """A 6-stage pipeline, its kinds config, schemas and prompts, in `folder`."""
    (folder / "schemas").mkdir(parents=True)
    (folder / "prompts").mkdir()
    config, stages, transitions = [], [], []
    for i in range(1, STAGES + 1):
        (folder / "schemas" / f"k{i}.json").write_text(json.dumps(SCHEMA))
        (folder / "prompts" / f"s{i}.md").write_text(f"# stage {i}\n")
        config.append(f'[[artifacts]]\nid = "k{i}"\nschema_path = "schemas/k{i}.json"\n')
        needs = f'needs = ["a{i - 1}"]\n' if i > 1 else ""
        stages.append(f'[[stages]]\nid = "s{i}"\nprompt = "prompts/s{i}.md"\n{needs}'
                      f'produces = [{{ name = "a{i}", kind = "k{i}" }}]\nmax_retries = 1\n')
        to = f"s{i + 1}" if i < STAGES else "done"
        transitions.append(f'[[transitions]]\nid = "t{i}"\nfrom = "s{i}"\nto = "{to}"\n'
                           f'condition_type = "artifact_validated"\n'
                           f'condition_artifact_id = "a{i}"\n')
    (folder / "config.toml").write_text("\n".join(config))
    path = folder / "six.toml"
    path.write_text('id = "six"\nstart = "s1"\n\n' + "\n".join(stages + transitions))
    return path


def artifact(i: int) -> dict[str, Any]:
    return {"summary": f"stage {i} done", "items": [f"item {i}.1", f"item {i}.2"]}


REPORTS = [{"stage": f"s{i}", "artifacts": {f"a{i}": artifact(i)}} for i in range(1, STAGES + 1)]



def crewbook_runner(path: Path, sink: Callable[[], Any]) -> Callable[[int], int]:
    from crewbook.pipeline import StageReport, load_pipeline

    pipeline = load_pipeline(path)
    reports = [StageReport(r["stage"], r["artifacts"]) for r in REPORTS]  # type: ignore[arg-type]

    def run(runs: int) -> int:
        ledger = sink()
        for _ in range(runs):
            loop = pipeline.loop(ledger=ledger, run="bench")
            for report in reports:
                loop.report(report)
            # the peer's check (`model.state == "done"`), not the whole status() view
            assert loop.view.finished_reason == "done"
        close = getattr(ledger, "close", None)
        if close is not None:
            close()  # as in coordinator_step: the ledger file's fsync is counted
        return runs * STAGES

    return run


def transitions_runner(path: Path) -> Callable[[int], int]:
    from transitions import Machine

    from crewbook.pipeline import load_pipeline

    kinds = load_pipeline(path).kinds  # the same compiled validators
    validators = [kinds[f"k{i}"].validator for i in range(1, STAGES + 1)]

    class Run:
        def __init__(self) -> None:
            self.artifacts: dict[str, Any] = {}

    states = [f"s{i}" for i in range(1, STAGES + 1)] + ["done"]

    def run(runs: int) -> int:
        for _ in range(runs):
            model = Run()
            table = []
            for i in range(1, STAGES + 1):
                validator = validators[i - 1]

                def ok(report: dict[str, Any], i: int = i, validator: Any = validator,
                       model: Run = model) -> bool:
                    content = report["artifacts"][f"a{i}"]
                    if not validator.is_valid(content):
                        return False
                    model.artifacts[f"a{i}"] = content
                    return True

                table.append({"trigger": "report", "source": f"s{i}", "dest": states[i],
                              "conditions": [ok]})
            Machine(model=model, states=states, transitions=table, initial="s1",
                    auto_transitions=False)
            for report in REPORTS:
                model.report(report)  # type: ignore[attr-defined]
            assert model.state == "done"  # type: ignore[attr-defined]
        return runs * STAGES

    return run



def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=300, help="pipeline runs per measure")
    parser.add_argument("--no-coordinator", action="store_true",
                        help="skip the coordinator tasks (benchmarks/coordinator_step.py)")
    args = parser.parse_args(argv)
    if not have_peer():
        return 2
    from crewbook.core.sinks import MemoryLedger
    from crewbook.ledger import Ledger

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = write_pipeline(folder / "pipe")
        ledger_file = folder / "bench.jsonl"
        cpu: dict[str, float] = {}
        measured = rates({  # taken in turns: the load changes alike for every side
            "peer": transitions_runner(path),
            "ledger file": crewbook_runner(path, lambda: Ledger(ledger_file, run="bench")),
            "memory ledger": crewbook_runner(path, MemoryLedger),
            "no ledger": crewbook_runner(path, NullSink),
        }, args.runs, cpu=cpu)
        peer = measured.pop("peer")
        results = {f"crewbook, {name}": value for name, value in measured.items()}
    print_vs_peer(f"accepted reports/s through a {STAGES}-stage pipeline ({args.runs} runs, "
                  f"best of 5 rounds taken in turns with the peer; {machine_load()})",
                  peer, results)
    print_loop_targets("pipeline reports/s", results["crewbook, ledger file"],  # judged in
                       results["crewbook, no ledger"], peer, cpu, cpu_only=True)  # CPU time
    if not args.no_coordinator:
        # Issue 7: coordinator tasks per second through a full path, ledger on.
        import coordinator_step

        print()
        coordinator_step.main(["--runs", str(args.runs)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
