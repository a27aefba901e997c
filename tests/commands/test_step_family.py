"""``crewbook step FAMILY``: any family whose store keeps runs is stepped from the shell,
one report per call, through the family registry; refusals change nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from crewbook.commands import main

TASK = "id: csv-export\ndescription: Export the report as CSV\nmode: coordinator\n"


def step(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, Any]:
    code = main(["step", *(str(a) for a in argv), "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else None


def test_a_delivery_run_is_stepped_across_calls(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    task, run = tmp_path / "task.yaml", tmp_path / "run"
    task.write_text(TASK, "utf-8")
    code, shown = step(capsys, "delivery", task, "--run", run)
    assert code == 0
    assert shown["contract"]["moves"][0] == "plan"
    assert not run.exists()  # showing the contract writes nothing
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"move": "plan", "criteria": ["it exports"]}), "utf-8")
    code, shown = step(capsys, "delivery", task, "--run", run, "--report", plan)
    assert (code, shown["accepted"], shown["status"]["acts"]) == (0, True, 1)
    delegate = tmp_path / "delegate.json"
    delegate.write_text(json.dumps({"move": "delegate", "role": "developer",
                                    "instructions": "write it"}), "utf-8")
    code, shown = step(capsys, "delivery", "--run", run, "--report", delegate)  # reloaded
    assert (code, shown["contract"]["role"], shown["status"]["acts"]) == (0, "developer", 2)
    before = (run / "run.json").read_bytes()
    finalise = tmp_path / "finalise.json"
    finalise.write_text(json.dumps({"move": "finalise"}), "utf-8")
    code, shown = step(capsys, "delivery", "--run", run, "--report", finalise)
    assert code == 1
    assert shown["refused"] is True
    assert (run / "run.json").read_bytes() == before


def test_a_new_pipeline_run_needs_its_file(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    code, shown = step(capsys, "pipeline", "--run", tmp_path)
    assert code == 1
    assert "name the pipeline file" in shown["reason"]


def test_a_pipeline_run_is_named_by_family_and_reloads_its_own_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pipeline.conftest import SEED, TO_IMPLEMENTER, WORKSPACE

    run = tmp_path / "run"
    report = tmp_path / "r.json"
    report.write_text(json.dumps(TO_IMPLEMENTER[0]), "utf-8")
    code, shown = step(capsys, "pipeline", SEED, "--run", run, "--report", report,
                       "--workspace", WORKSPACE)
    assert (code, shown["contract"]["stage"]) == (0, "architect")
    code, shown = step(capsys, "pipeline", "--run", run)  # the file the run started with
    assert (code, shown["contract"]["stage"], shown["status"]["acts"]) == (0, "architect", 1)
    assert "inputs" in shown


def test_a_task_file_finds_its_family(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    task = tmp_path / "task.yaml"
    task.write_text(TASK, "utf-8")
    code, shown = step(capsys, task, "--run", tmp_path / "run")
    assert (code, shown["contract"]["moves"][0]) == (0, "plan")


def test_settings_a_store_does_not_take_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    task = tmp_path / "task.yaml"
    task.write_text(TASK, "utf-8")
    code, shown = step(capsys, "delivery", task, "--run", tmp_path / "run",
                       "--workspace", tmp_path)
    assert code == 1
    assert shown["code"] == "usage"
    assert "takes no --workspace" in shown["reason"]


def test_a_file_no_family_reads_is_refused(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    code, shown = step(capsys, tmp_path / "notes.txt", "--run", tmp_path / "run")
    assert code == 1
    assert "no loop family steps" in shown["reason"]


def test_the_autonomous_loop_has_one_command_path(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """`crewbook step autonomous` is refused, naming `crewbook autonomous step`: a JSON
    report could claim a recette's test run that nobody ran."""
    code, shown = step(capsys, "autonomous", "--run", tmp_path)
    assert (code, shown["code"]) == (1, "not_steppable")
    assert "crewbook autonomous step" in shown["reason"]
