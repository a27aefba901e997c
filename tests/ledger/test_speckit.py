"""spec-kit run folders load into the ledger frame with the right steps and statuses."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from crewbook.errors import LedgerError
from crewbook.ledger import (
    LedgerWarning,
    import_speckit_runs,
    read_ledger,
    run_outcomes,
    speckit_events,
    validate_ledger,
)
from crewbook.ledger.reader import COLUMNS
from crewbook.ledger.speckit import find_speckit_runs, speckit_run

from .conftest import SPECKIT_PROJECT, SPECKIT_RUNS

DONE = SPECKIT_RUNS / "3f9a1c2e"
FAILED = SPECKIT_RUNS / "b71e04d9"


def steps(df: pd.DataFrame, run: str) -> list[tuple[str, str | None, str | None, int | None]]:
    rows = df[df["run"] == run]
    return [(str(r.kind), None if pd.isna(r.stage) else str(r.stage),
             None if pd.isna(r.verdict) else str(r.verdict),
             None if pd.isna(r.attempt) else int(r.attempt)) for r in rows.itertuples()]


def test_a_completed_run_with_gates_maps_step_by_step() -> None:
    df = import_speckit_runs(DONE)
    assert tuple(df.columns) == COLUMNS
    assert steps(df, "3f9a1c2e") == [
        ("init", None, None, None),
        ("act", "specify", None, 1), ("report", "specify", "completed", 1),
        ("act", "review-spec", None, 1), ("report", "review-spec", "paused", 1),
        ("pause", None, "paused", None),
        ("act", "review-spec", None, 2), ("report", "review-spec", "completed", 2),
        ("act", "plan", None, 1), ("report", "plan", "completed", 1),
        ("act", "review-plan", None, 1), ("report", "review-plan", "paused", 1),
        ("pause", None, "paused", None),
        ("act", "review-plan", None, 2), ("report", "review-plan", "completed", 2),
        ("act", "tasks", None, 1), ("report", "tasks", "completed", 1),
        ("act", "implement", None, 1), ("report", "implement", "completed", 1),
        ("finish", None, "completed", None),
    ]
    assert df["seq"].tolist() == list(range(20))
    assert set(df["loop"].astype(str)) == {"spec-kit"}
    roles = dict(zip(df["stage"].astype(str), df["role"].astype(str), strict=False))
    assert roles["specify"] == "agent"
    assert roles["review-spec"] == "human"
    init = df.iloc[0]
    assert init["ts"] == pd.Timestamp("2025-04-14T09:12:03.418211Z")
    assert init["payload"]["inputs"] == {"feature_name": "csv-export", "scope": "full"}
    implement = df[(df["kind"] == "report") & (df["stage"] == "implement")].iloc[0]
    assert implement["duration_ms"] == 2_027_626
    act = df[(df["kind"] == "act") & (df["stage"] == "specify")].iloc[0]
    assert act["payload"] == {"event": "step_started", "integration": "copilot",
                              "type": "command"}
    gate = df[(df["kind"] == "report") & (df["stage"] == "review-plan")].iloc[-1]
    assert gate["payload"]["choice"] == "approve"


def test_a_failed_run_ends_failed_with_the_error() -> None:
    df = import_speckit_runs(FAILED)
    assert steps(df, "b71e04d9")[-3:] == [
        ("report", "implement", "failed", 1), ("error", "implement", "failed", 1),
        ("finish", None, "failed", None)]
    error = df[df["kind"] == "error"].iloc[0]
    assert error["summary"] == "Command 'speckit.implement' exited with code 1"
    outcome = run_outcomes(df).loc["b71e04d9"]
    assert outcome["finished_reason"] == "failed"
    assert outcome["acts"] == 6


@pytest.mark.parametrize("where", [SPECKIT_PROJECT, SPECKIT_RUNS, DONE.parent])
def test_runs_are_found_from_the_project_or_the_runs_folder(where: Path) -> None:
    assert find_speckit_runs(where) == [DONE, FAILED]
    df = import_speckit_runs(where)
    assert df["run"].astype(str).unique().tolist() == ["3f9a1c2e", "b71e04d9"]


def test_read_ledger_recognises_spec_kit_runs_in_a_folder() -> None:
    df = read_ledger(SPECKIT_PROJECT)
    assert len(df) == 35
    assert list(validate_ledger(DONE)) == []


def test_events_are_ledger_events() -> None:
    events = speckit_events(FAILED)
    assert [e.seq for e in events] == list(range(15))
    assert events[-1].kind == "finish"
    assert events[-1].verdict == "failed"


def test_nothing_to_import_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(LedgerError, match="no spec-kit run"):
        import_speckit_runs(tmp_path)


def test_bad_log_lines_and_state_are_reported(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "c0ffee00"
    shutil.copytree(DONE, run)
    lines = (run / "log.jsonl").read_text().splitlines()
    lines[3] = '{"event": "step_completed", "step_id": "review-spec"'  # no timestamp, cut
    lines[5] = "not json"
    (run / "log.jsonl").write_text("\n".join(lines) + "\n" + lines[6][:20])
    problems = validate_ledger(run)
    assert [(p.code, p.line) for p in problems] == [
        ("ledger_truncated_line", 4), ("ledger_bad_json", 6), ("ledger_truncated_line", 20)]
    with pytest.raises(LedgerError):
        speckit_events(run)
    with pytest.warns(LedgerWarning):
        df = import_speckit_runs(run, errors="skip")
    assert len(df) == 1 + 19 - 2  # init + the log's 19 entries - the two bad ones
    (run / "state.json").write_text("[]")
    assert next(p.code for p in validate_ledger(run)) == "speckit_bad_state"
    (run / "state.json").write_text(json.dumps({"run_id": "c0ffee00"}))
    events, _ = speckit_run(run)
    assert events[0].kind == "init"
    assert events[0].ts == events[1].ts
