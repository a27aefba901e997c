"""diff_runs on hand-made ledgers, recorded history, spec-kit imports and stepped loops."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from crewbook import CompareError, Ledger, NotFoundError, UsageError, read_ledger
from crewbook.compare import diff_runs
from crewbook.ledger import import_speckit_runs
from crewbook.pipeline import load_pipeline

DATA = Path(__file__).parent.parent / "data"


def _write(path: Path, run: str, events: list[dict[str, Any]]) -> Path:
    with Ledger(path, run=run, loop="crew") as ledger:
        for i, event in enumerate(events):
            ledger.append({"ts": f"2025-03-01T09:{i:02d}:00Z", **event})
    return path


START = {"kind": "init", "payload": {"goal": "csv"}}
BUILD1 = {"kind": "report", "role": "developer", "stage": "build", "verdict": "done",
          "attempt": 1, "tokens_in": 1000, "tokens_out": 200, "duration_ms": 60000}
QA_GO = {"kind": "verdict", "role": "qa", "stage": "verify", "verdict": "go", "attempt": 1,
         "tokens_in": 300, "tokens_out": 50, "duration_ms": 20000}
QA_NOGO = dict(QA_GO, verdict="no-go")
BUILD2 = dict(BUILD1, attempt=2, tokens_in=800, duration_ms=30000)
QA_GO2 = dict(QA_GO, attempt=2)
FINISH = {"kind": "finish", "verdict": "scope_covered"}


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    a = _write(tmp_path / "a.jsonl", "r-a", [START, BUILD1, QA_GO, FINISH])
    b = _write(tmp_path / "b.jsonl", "r-b", [START, BUILD1, QA_NOGO, BUILD2, QA_GO2, FINISH])
    return a, b


def test_a_run_against_itself_is_empty(pair: tuple[Path, Path]) -> None:
    frame = read_ledger(pair[0])
    d = diff_runs(frame, "r-a", frame, "r-a")
    assert d.empty
    assert d.diverged_at is None
    assert "the runs take the same acts" in d.text()
    assert d.stages_frame()["attempts_delta"].tolist() == [0, 0]


def test_first_differing_act_and_stages_side_by_side(pair: tuple[Path, Path]) -> None:
    d = diff_runs(pair[0], None, pair[1], None)
    assert (d.a, d.b) == ("r-a", "r-b")
    assert d.diverged_at == 1  # acts: build (same), then the qa verdict differs
    assert d.act_a is not None
    assert d.act_a["verdict"] == "go"
    assert d.act_b is not None
    assert d.act_b["verdict"] == "no-go"
    first = d.entries[0]
    assert (first.section, first.field) == ("act", "diverged")
    assert first.before == "verdict qa@verify go (attempt 1)"
    assert first.after == "verdict qa@verify no-go (attempt 1)"
    stages = d.stages_frame().set_index("stage")
    assert stages.loc["build", "attempts_a"] == 1
    assert stages.loc["build", "attempts_b"] == 2
    assert stages.loc["build", "tokens_a"] == 1200
    assert stages.loc["build", "tokens_b"] == 2200
    assert stages.loc["build", "tokens_delta"] == 1000
    assert stages.loc["build", "duration_delta"] == pd.Timedelta(seconds=30)
    assert str(stages["tokens_a"].dtype) == "Int64"
    assert str(stages["duration_a"].dtype) == "timedelta64[ns]"
    got = {(e.section, e.item, e.field): (e.before, e.after) for e in d.entries}
    assert got[("stage", "build", "attempts")] == (1, 2)
    assert got[("run", "run", "acts")] == (2, 4)
    assert ("run", "run", "finished") not in got
    assert set(d.frames()) == {"changes", "stages"}
    assert d.to_dict()["diverged_at"] == 1


def test_one_run_a_prefix_of_the_other(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.jsonl", "r", [START, BUILD1])
    b = _write(tmp_path / "b.jsonl", "r", [START, BUILD1, QA_GO, FINISH])
    d = diff_runs(a, "r", b, "r")
    assert d.diverged_at == 1
    assert d.act_a is None
    assert (d.a, d.b) == ("r (a)", "r (b)")
    stage = [e for e in d.entries if e.section == "stage"]
    assert [(e.change, e.item) for e in stage] == [("added", "verify")]
    assert d.graph_model().nodes["verify"].status == "added"


def test_recorded_history_runs() -> None:
    history = read_ledger(DATA / "ledgers" / "history")
    d = diff_runs(history, "run-0001", history, "run-0003")
    assert d.diverged_at == 4
    assert d.entries[0].before == "bar verify pass (attempt 1)"
    assert d.entries[0].after == "bar verify fail (attempt 1)"
    got = {(e.item, e.field): (e.before, e.after) for e in d.section("run")}
    assert got[("run", "finished")] == ("scope_covered", "rounds_exhausted")


def test_spec_kit_imports() -> None:
    runs = import_speckit_runs(DATA / "ledgers" / "speckit-project")
    d = diff_runs(runs, "3f9a1c2e", runs, "b71e04d9")
    assert d.entries[0].before == "report human@review-spec paused (attempt 1)"
    assert d.entries[0].after == "report human@review-spec completed (attempt 1)"
    got = {(e.item, e.field): (e.before, e.after) for e in d.entries}
    assert got[("review-spec", "attempts")] == (2, 1)
    assert got[("run", "finished")] == ("completed", "failed")


def test_stepped_loops_in_memory() -> None:
    from tests.pipeline.conftest import (
        APPROVE,
        IMPLEMENT,
        REJECT,
        SEED,
        TO_IMPLEMENTER,
        WORKSPACE,
        fixed_clock,
    )

    pipeline = load_pipeline(SEED)
    first = pipeline.loop(WORKSPACE, clock=fixed_clock(), run="approve")
    second = pipeline.loop(WORKSPACE, clock=fixed_clock(), run="reject")
    for report in [*TO_IMPLEMENTER, IMPLEMENT, APPROVE]:
        first.report(report)
    for report in [*TO_IMPLEMENTER, IMPLEMENT, REJECT, IMPLEMENT, APPROVE]:
        second.report(report)
    d = diff_runs(first, None, second, None)
    assert d.act_a is not None
    assert d.act_b is not None
    assert (d.act_a["verdict"], d.act_b["verdict"]) == ("approved", "changes_requested")
    got = {(e.item, e.field): (e.before, e.after) for e in d.section("stage")}
    assert got[("implementer", "attempts")] == (1, 2)
    edge = next(e for e in d.graph_model().edges if (e.source, e.target) ==
                ("reviewer", "implementer"))
    assert edge.kind == "added"


def test_which_run(pair: tuple[Path, Path], tmp_path: Path) -> None:
    both = pd.concat([read_ledger(pair[0]), read_ledger(pair[1])], ignore_index=True)
    with pytest.raises(UsageError, match=r"holds 2 runs \(r-a, r-b\); name one"):
        diff_runs(both, None, both, "r-a")
    with pytest.raises(NotFoundError, match="did you mean 'r-b'"):
        diff_runs(both, "r-a", both, "r-bb")
    with pytest.raises(CompareError, match="cannot read a run from a int"):
        diff_runs(3, None, both, "r-a")


def test_display(pair: tuple[Path, Path]) -> None:
    d = diff_runs(pair[0], None, pair[1], None)
    bundle = d._repr_mimebundle_()
    assert bundle["text/plain"] == repr(d)
    assert "Stages side by side" in bundle["text/html"]
    assert repr(d).startswith("<RunDiff 'r-a' → 'r-b': ")
