"""Every message says what happened: what `crew init` starts on, what `step --run` wrote."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.conftest import SEED, TO_IMPLEMENTER, WORKSPACE


def test_crew_init_says_there_is_no_task_yet_rather_than_none(tour: Path, cli) -> None:
    result = cli("--project", tour, "crew", "init", "Deliver the CSV export",
                 "--bar", "test=python3 -c pass")
    assert result.code == 0, result.err
    assert "None" not in result.out
    assert "no task yet" in result.out


def test_step_without_a_report_says_it_wrote_nothing(tmp_path: Path, cli) -> None:
    run = tmp_path / "runs" / "first"
    result = cli("step", SEED, "--run", run, "--workspace", WORKSPACE)
    assert result.code == 0, result.err
    assert not run.exists()
    assert result.out.splitlines()[-1].startswith(f"nothing written: {run} keeps the run")


def test_step_with_a_report_names_the_files_it_wrote(tmp_path: Path, cli) -> None:
    run = tmp_path / "runs" / "first"
    report = tmp_path / "report.json"
    report.write_text(json.dumps(TO_IMPLEMENTER[0]))
    result = cli("step", SEED, "--run", run, "--workspace", WORKSPACE, "--report", report)
    assert result.code == 0, result.err
    state, ledger = run / "state.json", run / "ledger.jsonl"
    assert state.is_file()
    assert ledger.is_file()
    assert result.out.splitlines()[-1] == f"wrote {ledger} and {state}"
