"""``crewbook step``: contract without a report, reports from files and stdin, refusals
that leave the run folder byte-identical."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path
from typing import Any

import pytest

from crewbook.commands.step import register
from pipeline.conftest import (
    APPROVE,
    IMPLEMENT,
    REJECT,
    SEED,
    TO_IMPLEMENTER,
    WORKSPACE,
    tree_digest,
)


def parser(with_common: bool) -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    top = argparse.ArgumentParser(prog="crewbook", parents=[common] if with_common else [])
    sub = top.add_subparsers(dest="command", required=True)
    register(sub, common) if with_common else register(sub)
    return top


@pytest.fixture
def step(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Any:
    def run(*argv: str | Path, stdin: str | None = None, common: bool = False) -> Any:
        args = parser(common).parse_args([str(a) for a in argv])
        if stdin is not None:
            import sys

            old, sys.stdin = sys.stdin, io.StringIO(stdin)
        try:
            code = args.func(args)
        finally:
            if stdin is not None:
                sys.stdin = old
        out, err = capsys.readouterr()
        return code, out, err

    return run


def report_file(tmp_path: Path, data: Any, name: str = "report.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_contract_without_report_changes_nothing(step: Any, tmp_path: Path) -> None:
    run = tmp_path / "run"
    code, out, _ = step("step", SEED, "--run", run)
    assert code == 0
    assert "act 1 · stage analyst (attempt 1)" in out
    assert "prompt: prompts/analyst.md" in out
    assert not run.exists()
    code, out, _ = step("step", SEED, "--run", run, "--json")
    data = json.loads(out)
    assert data["contract"]["stage"] == "analyst"
    assert data["accepted"] is None
    assert not run.exists()


def test_stepping_to_done(step: Any, tmp_path: Path) -> None:
    run = tmp_path / "run"
    ws = ("--workspace", WORKSPACE)
    for i, report in enumerate([*TO_IMPLEMENTER, IMPLEMENT, REJECT, IMPLEMENT]):
        code, out, err = step("step", SEED, "--run", run, "--report",
                              report_file(tmp_path, report), *ws)
        assert code == 0, err
        assert out.startswith(f"accepted; next is act {i + 2}")
    digest = tree_digest(run)
    code, out, _ = step("step", SEED, "--run", run, "--json")
    data = json.loads(out)
    assert data["contract"]["stage"] == "reviewer"
    assert data["inputs"]["analysis"]["acceptance_criteria"]
    assert data["status"]["journal"][0]["text"].startswith("review_report.verdict")
    assert tree_digest(run) == digest  # a contract writes nothing
    code, out, _ = step("step", SEED, "--run", run, "--report", "-", "--json",
                        stdin=json.dumps(APPROVE))
    assert code == 0
    assert json.loads(out)["contract"]["finished_reason"] == "done"
    state = json.loads((run / "state.json").read_text())
    assert state["acts"] == 7
    assert state["workspace"] == str(WORKSPACE.resolve())
    lines = [json.loads(x) for x in (run / "ledger.jsonl").read_text().splitlines()]
    assert lines[0]["kind"] == "init"
    assert lines[-1]["verdict"] == "done"
    assert {x["run"] for x in lines} == {state["run"]}
    assert [x["seq"] for x in lines] == list(range(len(lines)))
    code, out, _ = step("step", SEED, "--run", run)
    assert "finished: done" in out


@pytest.mark.parametrize(("report", "code_name"), [
    ({"stage": "reviewer", "artifacts": {"review_report": {"verdict": "approved",
                                                           "findings": []}}}, "wrong_stage"),
    ({"stage": "architect", "artifacts": {"design": {"approach": ""}}}, "invalid_artifact"),
    ({"stage": "architect", "artifacts": {"review_report": {}}}, "not_produced"),
    ({"stage": "architect", "writes": ["src/x.py"]}, "cannot_write"),
    ("{not json", "bad_report"),
])
def test_refused_report_leaves_run_byte_identical(step: Any, tmp_path: Path, report: Any,
                                                  code_name: str) -> None:
    run = tmp_path / "run"
    assert step("step", SEED, "--run", run, "--invalid", "refuse", "--workspace", WORKSPACE,
                "--report", report_file(tmp_path, TO_IMPLEMENTER[0]))[0] == 0
    digest = tree_digest(run)
    names = sorted(p.name for p in run.iterdir())
    code, out, err = step("step", SEED, "--run", run, "--report", report_file(tmp_path, report))
    assert code == 1
    assert f"refused [{code_name}]" in err
    assert tree_digest(run) == digest
    assert sorted(p.name for p in run.iterdir()) == names
    code, out, _ = step("step", SEED, "--run", run, "--json", "--report",
                        report_file(tmp_path, report))
    assert code == 1
    assert json.loads(out)["code"] == code_name
    assert tree_digest(run) == digest


def test_first_report_refused_creates_nothing(step: Any, tmp_path: Path) -> None:
    run = tmp_path / "run"
    code, _, err = step("step", SEED, "--run", run, "--report",
                        report_file(tmp_path, IMPLEMENT))
    assert code == 1
    assert "wrong_stage" in err
    assert not run.exists()


def test_changed_pipeline_is_refused(step: Any, tmp_path: Path) -> None:
    folder = tmp_path / "p"
    folder.mkdir()
    for item in SEED.parent.iterdir():
        if item.name in ("config.toml", "schemas", "prompts"):
            target = folder / item.name
            if item.is_dir():
                import shutil

                shutil.copytree(item, target)
            else:
                target.write_bytes(item.read_bytes())
    pipe = folder / "p.toml"
    pipe.write_text(SEED.read_text())
    run = tmp_path / "run"
    assert step("step", pipe, "--run", run, "--report",
                report_file(tmp_path, TO_IMPLEMENTER[0]))[0] == 0
    digest = tree_digest(run)
    pipe.write_text(SEED.read_text().replace("token_budget = 16384", "token_budget = 8192", 1))
    code, _, err = step("step", pipe, "--run", run, "--report",
                        report_file(tmp_path, TO_IMPLEMENTER[1]))
    assert code == 1
    assert "pipeline_changed" in err
    assert tree_digest(run) == digest


def test_bad_inputs(step: Any, tmp_path: Path) -> None:
    code, _, err = step("step", tmp_path / "none.toml", "--run", tmp_path / "run")
    assert code == 1
    assert "invalid_pipeline" in err
    assert "file_not_found" in err
    run = tmp_path / "run"
    run.mkdir()
    (run / "state.json").write_text("{}")
    code, _, err = step("step", SEED, "--run", run)
    assert code == 1
    assert "bad_run" in err
    code, _, err = step("step", SEED, "--run", tmp_path / "r2", "--report", tmp_path / "no.json")
    assert code == 1
    assert "cannot read the report" in err


def test_registration_with_a_common_parent(step: Any, tmp_path: Path) -> None:
    code, out, _ = step("--json", "step", SEED, "--run", tmp_path / "run", common=True)
    assert code == 0
    assert json.loads(out)["contract"]["stage"] == "analyst"
    code, out, _ = step("step", SEED, "--run", tmp_path / "run", "--json", common=True)
    assert code == 0
    assert json.loads(out)["contract"]["stage"] == "analyst"
