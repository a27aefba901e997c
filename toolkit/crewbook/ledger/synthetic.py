"""Synthetic run histories with a fixed seed: for the notebook, the tests and benchmarks.

Two kinds of loop are simulated, with the shapes of the spec: ``coordinator`` runs
(SPEC C3: the architect plans, the developer builds, the bar is measured, QA judges,
the reviewer judges, send-backs until a cap, then a pull request, "already done",
or a failure) and ``crew`` runs (SPEC D1: analyst, developer and qa take turns over
the tasks of an epic until the scope is covered or the rounds run out). Some runs
stop without a ``finish`` event, as a crash would leave them. Same seed, same
history, byte for byte.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from .writer import Ledger

START: Final = datetime(2025, 3, 3, 8, 0, tzinfo=UTC)

#: (tokens_in range, tokens_out range, seconds range) per role.
_EFFORT: Final[dict[str, tuple[tuple[int, int], tuple[int, int], tuple[int, int]]]] = {
    "analyst": ((2_000, 6_000), (400, 1_500), (40, 240)),
    "architect": ((6_000, 18_000), (1_000, 4_000), (90, 600)),
    "developer": ((8_000, 30_000), (2_000, 9_000), (120, 900)),
    "qa": ((5_000, 15_000), (600, 2_500), (60, 360)),
    "reviewer": ((6_000, 20_000), (500, 2_000), (60, 300)),
}
_PRICE_IN, _PRICE_OUT = 3e-6, 15e-6
_FILES: Final = ("src/export/csv.py", "src/export/writer.py", "src/api/routes.py",
                 "tests/test_export.py", "src/models/report.py")


class _Run:
    """Builds the events of one run, keeping the clock."""

    def __init__(self, rnd: random.Random, run: str, loop: str, start: datetime) -> None:
        self.rnd, self.run, self.loop, self.clock = rnd, run, loop, start
        self.events: list[dict[str, Any]] = []

    def emit(self, kind: str, **fields: Any) -> None:
        event = {"ts": self.clock, "run": self.run, "loop": self.loop, "kind": kind}
        event.update({k: v for k, v in fields.items() if v is not None})
        self.events.append(event)

    def wait(self, low: int, high: int) -> None:
        self.clock += timedelta(seconds=self.rnd.randint(low, high))

    def work(self, role: str, stage: str, kind: str, verdict: str | None, attempt: int,
             version: int | None, summary: str, **payload: Any) -> None:
        """An act: handed out, then reported after a measured time."""
        rnd = self.rnd
        tin, tout, secs = _EFFORT[role]
        self.emit("act", role=role, stage=stage, attempt=attempt, version=version,
                  payload={k: v for k, v in payload.items() if k == "task"})
        seconds = rnd.randint(*secs) * (1.0 if attempt == 1 else 0.6)
        self.clock += timedelta(seconds=seconds)
        tokens_in, tokens_out = rnd.randint(*tin), rnd.randint(*tout)
        self.emit(kind, role=role, stage=stage, verdict=verdict, attempt=attempt,
                  version=version, summary=summary, tokens_in=tokens_in,
                  tokens_out=tokens_out,
                  cost=round(tokens_in * _PRICE_IN + tokens_out * _PRICE_OUT, 6),
                  duration_ms=int(seconds * 1000), payload=payload)
        self.wait(2, 40)

    def bar(self, attempt: int, version: int, task: str) -> bool:
        rnd = self.rnd
        ok = rnd.random() < (0.78 if attempt == 1 else 0.9)
        measures = {"test": {"exit": 0 if ok else 1, "seconds": round(rnd.uniform(8, 90), 1)},
                    "lint": {"exit": 0, "seconds": round(rnd.uniform(1, 6), 1)}}
        seconds = sum(m["seconds"] for m in measures.values())
        self.clock += timedelta(seconds=seconds)
        self.emit("bar", stage="verify", verdict="pass" if ok else "fail", attempt=attempt,
                  version=version, duration_ms=int(seconds * 1000),
                  payload={"task": task, **measures})
        return ok


def _coordinator(r: _Run, task: str) -> None:
    rnd = r.rnd
    r.emit("init", summary=f"deliver {task}", payload={"task": task, "mode": "coordinator",
                                                       "review": "required"})
    r.work("architect", "plan", "plan", None, 1, None, "plan with acceptance criteria",
           task=task, criteria=rnd.randint(2, 6))
    if rnd.random() < 0.06:  # the already-done path: QA checks unchanged code
        r.work("qa", "verify", "verdict", "go", 1, 0, "the code already does it", task=task)
        r.work("reviewer", "review", "verdict", "approved", 1, 0, "nothing to change",
               task=task)
        r.emit("finish", verdict="already_done", summary="QA confirmed, no PR")
        return
    skill = rnd.uniform(0.45, 0.9)
    for attempt in range(1, 5):
        if attempt > 1 and rnd.random() < 0.15:
            r.emit("question", role="developer", stage="build", attempt=attempt,
                   summary="which module owns the CSV dialect?", payload={"task": task})
            r.wait(5, 60)
            r.emit("answer", role="architect", stage="build", attempt=attempt,
                   summary="src/export/csv.py; keep RFC 4180", payload={"task": task})
        r.work("developer", "build", "report", "done", attempt, attempt,
               "implemented" if attempt == 1 else "fixed the findings", task=task,
               files=rnd.randint(1, 6))
        if not r.bar(attempt, attempt, task):
            continue
        if rnd.random() > min(0.97, skill + 0.15 * attempt):
            r.work("qa", "verify", "verdict", "no-go", attempt, attempt, "criteria not met",
                   task=task, findings=_findings(rnd))
            continue
        r.work("qa", "verify", "verdict", "go", attempt, attempt, "all criteria met",
               task=task)
        if rnd.random() < 0.22:
            r.work("reviewer", "review", "verdict", "changes", attempt, attempt,
                   "changes requested", task=task, findings=_findings(rnd))
            continue
        r.work("reviewer", "review", "verdict", "approved", attempt, attempt, "approved",
               task=task)
        if rnd.random() < 0.04:  # crashed before finishing
            return
        r.emit("finish", verdict="pull_request", summary=f"PR for {task}",
               payload={"pr": rnd.randint(100, 999)})
        return
    r.emit("escalate", role="architect", summary="the developer reached its launch cap",
           payload={"task": task, "cap": "launches"})
    r.emit("finish", verdict="failed", summary="failed: QA never passed")


def _crew(r: _Run, epic: int) -> None:
    rnd = r.rnd
    max_rounds = rnd.choice((12, 16, 24))
    r.emit("init", summary=f"epic E{epic}", payload={
        "goal": f"deliver epic E{epic}", "scope": "epic", "max_rounds": max_rounds,
        "bar": {"test": "pytest -q", "lint": "ruff check ."}})
    acts = 0
    for n in range(rnd.randint(2, 4)):
        task = f"E{epic}-S{n + 1}"
        r.work("analyst", "analysis", "report", "done", 1, None, "story refined", task=task)
        acts += 1
        for attempt in range(1, 6):
            if acts + 2 > max_rounds:
                r.emit("finish", verdict="rounds_exhausted", summary=f"{acts} acts")
                return
            r.work("developer", "build", "report", "done", attempt, attempt, "built",
                   task=task)
            acts += 1
            if not r.bar(attempt, attempt, task):
                continue
            good = rnd.random() < (0.6 if attempt == 1 else 0.8)
            r.work("qa", "verify", "verdict", "go" if good else "no-go", attempt, attempt,
                   "go" if good else "tests miss the edge cases", task=task,
                   **({} if good else {"findings": _findings(rnd)}))
            acts += 1
            if good:
                break
    if rnd.random() < 0.05:
        return  # crashed
    r.emit("finish", verdict="scope_covered", summary=f"{acts} acts")


def _findings(rnd: random.Random) -> list[dict[str, Any]]:
    return [{"file": rnd.choice(_FILES), "line": rnd.randint(1, 400),
             "severity": rnd.choice(("minor", "major", "blocker"))}
            for _ in range(rnd.randint(1, 3))]


def synthetic_runs(runs: int = 300, seed: int = 7) -> Iterator[list[dict[str, Any]]]:
    """The events of each run (dicts without `seq`), in run order."""
    rnd = random.Random(seed)
    clock = START
    for i in range(runs):
        clock += timedelta(minutes=rnd.randint(20, 240))
        loop = "coordinator" if rnd.random() < 0.6 else "crew"
        run = _Run(rnd, f"run-{i + 1:04d}", loop, clock)
        if loop == "coordinator":
            _coordinator(run, f"T-{100 + i}")
        else:
            _crew(run, i + 1)
        yield run.events


def write_history(folder: str | Path, runs: int = 300, seed: int = 7) -> list[Path]:
    """Write one ledger per run (``<folder>/<run>.jsonl``) through `Ledger`; the paths."""
    folder = Path(folder)
    paths = []
    for events in synthetic_runs(runs, seed):
        path = folder / f"{events[0]['run']}.jsonl"
        with Ledger(path, run=events[0]["run"]) as ledger:
            for event in events:
                ledger.append(event)
        paths.append(path)
    return paths


def write_big_ledger(path: str | Path, events: int, seed: int = 7) -> Path:
    """One file of about `events` events (whole runs), written directly (fast).

    Lines are what `Ledger` writes (same keys, order and ts format) without taking
    a lock per line, so benchmarks can make a million events in seconds.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    written, batch = 0, 0
    with path.open("w", encoding="utf-8") as out:
        while written < events:
            for run in synthetic_runs(1000, seed + batch):
                for seq, event in enumerate(run):
                    line = {"v": 1, "ts": event["ts"].strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                            "run": f"{event['run']}-{batch}", "seq": seq}
                    line.update((k, v) for k, v in event.items() if k not in line)
                    line["payload"] = event.get("payload", {})
                    out.write(json.dumps(line, separators=(",", ":")) + "\n")
                written += len(run)
                if written >= events:
                    break
            batch += 1
    return path
