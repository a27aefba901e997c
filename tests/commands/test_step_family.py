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


def test_a_family_without_a_store_says_why(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    code, shown = step(capsys, "pipeline", "--run", tmp_path)
    assert code == 1
    assert "name the pipeline file" in shown["reason"]
