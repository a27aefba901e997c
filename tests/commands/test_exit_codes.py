"""Exit codes and `--json` output are the same in every command (issue 12): 0 ok, 1
invalid input or a refusal, 2 usage error (bad arguments, or a path that does not
exist); with `--json`, exactly one JSON document on standard output, errors included.
Run for real, as a user runs them (subprocesses)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from crewbook.commands import main

DATA = Path(__file__).parents[1] / "data"


def crewbook(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).parent / "crewbook"  # the installed console script
    return subprocess.run([str(script), *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120, check=False)


@pytest.mark.parametrize("command", [
    ["validate", "{missing}"],
    ["ledger", "summary", "{missing}"],
    ["review-policy", "{missing}"],
    ["validate", "--rules", "{missing}"],
])
def test_a_missing_path_is_a_usage_error_everywhere(tmp_path: Path,
                                                    command: list[str]) -> None:
    argv = [word.format(missing=tmp_path / "nope.jsonl") for word in command]
    done = crewbook(*argv, "--json")
    assert done.returncode == 2, done
    document = json.loads(done.stdout)
    text = json.dumps(document)
    assert "file_not_found" in text or "no such file" in text


def test_a_usage_error_with_json_is_one_json_document() -> None:
    done = crewbook("validate", "--no-such-option", "x", "--json")
    assert done.returncode == 2
    document = json.loads(done.stdout)
    assert document["error"]["type"] == "UsageError"
    assert "--no-such-option" in document["error"]["message"]
    plain = crewbook("validate", "--no-such-option", "x")
    assert (plain.returncode, plain.stdout) == (2, "")
    assert "unrecognized arguments" in plain.stderr


@pytest.mark.parametrize(("case", "status"), [
    ("yaml-set-key/schema.yaml", 1), ("toml-deep/pipeline.toml", 1),
    ("ledger-utf8-key/run.jsonl", 1), ("ledger-empty/run.jsonl", 0),
])
def test_hostile_files_through_the_real_command(case: str, status: int) -> None:
    done = crewbook("validate", str(DATA / "bad" / case), "--json")
    assert done.returncode == status, done.stderr
    document = json.loads(done.stdout)
    assert document["valid"] is (status == 0)
    assert done.stderr == ""


def test_validate_rules_checks_ledger_conformance(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    lines = [{"v": 1, "ts": f"2025-03-01T09:0{i}:00Z", "run": "r", "seq": s, "loop": "crew",
              "kind": k} for i, (s, k) in enumerate([(0, "init"), (2, "note")])]
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    assert main(["validate", str(path)]) == 0  # every line is a valid event
    capsys.readouterr()
    assert main(["validate", str(path), "--rules", "--json"]) == 1
    problems = json.loads(capsys.readouterr().out)["problems"]
    assert [(p["code"], p["key"]) for p in problems] == [("seq_gap", "run r, seq 2")]
    assert main(["validate", str(DATA / "ledgers" / "history"), "--rules"]) == 0


def test_validate_text_says_the_severity_on_every_line(capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    assert main(["validate", str(DATA / "pipelines" / "broken" / "06-unreachable-stage.toml")
                 ]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("valid, with 1 warning")
    assert all(line.startswith(("  error:   ", "  warning: ")) for line in out[1:])
