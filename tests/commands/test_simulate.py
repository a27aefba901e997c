"""`crewbook simulate`: a pipeline or a task, a policy file, --set, --sweep, --json."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from crewbook.ledger import read_ledger

PIPELINE = Path(__file__).parent.parent / "data" / "pipelines" / "role_pipeline.toml"
POLICY = """\
policy: random
roles:
  analyst: {fail: 0.2}
  reviewer:
    verdicts: {review_report.verdict: {approved: 0.6, changes_requested: 0.4}}
"""


def test_simulate_prints_one_json_document(cli: Callable[..., Any], tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    ledger = tmp_path / "runs.jsonl"
    result = cli("simulate", PIPELINE, "--policy", policy, "-n", "200", "--seed", "3",
                 "--ledger", ledger, "--json")
    assert result.code == 0, result.err
    data = result.json
    assert data["runs"] == 200
    assert data["seed"] == 3
    assert set(data["outcomes"]) <= {"done", "escalated"}
    assert sum(o["runs"] for o in data["outcomes"].values()) == 200
    assert data["summary"]["rounds"] > 0
    assert read_ledger(ledger)["run"].nunique() == 200
    again = cli("simulate", PIPELINE, "--policy", policy, "-n", "200", "--seed", "3",
                "--workers", "2", "--json")
    assert again.json["outcomes"] == data["outcomes"]
    assert again.json["summary"] == data["summary"]


def test_simulate_text_and_settings(cli: Callable[..., Any], tmp_path: Path) -> None:
    task = tmp_path / "task.yaml"
    task.write_text("id: csv\ndescription: Export the report as CSV\n")
    result = cli("simulate", task, "-n", "50", "--set", "policy.roles.qa.fail=0.5",
                 "--set", "launches.developer=1")
    assert result.code == 0, result.err
    assert "task.yaml: 50 simulated runs (seed 0)" in result.out
    assert "failed" in result.out  # one developer launch cannot absorb QA's fails


def test_sweep_reports_every_setting(cli: Callable[..., Any]) -> None:
    result = cli("simulate", PIPELINE, "-n", "60", "--sweep", "max_retries.implementer=0,2",
                 "--sweep", "policy.roles.reviewer.fail=0,0.5", "--json")
    assert result.code == 0, result.err
    data = result.json
    assert [s["values"] for s in data["settings"]] == [
        {"max_retries.implementer": 0, "policy.roles.reviewer.fail": 0},
        {"max_retries.implementer": 0, "policy.roles.reviewer.fail": 0.5},
        {"max_retries.implementer": 2, "policy.roles.reviewer.fail": 0},
        {"max_retries.implementer": 2, "policy.roles.reviewer.fail": 0.5},
    ]
    assert all(s["runs"] == 60 for s in data["settings"])
    # the reviewer's `fail` is a failed try of its stage: they escalate past its retries
    assert data["settings"][1]["summary"]["acts"] > data["settings"][0]["summary"]["acts"]


def test_errors_are_one_json_document(cli: Callable[..., Any], tmp_path: Path) -> None:
    missing = cli("simulate", tmp_path / "nope.toml", "--json")
    assert missing.code == 2
    assert missing.json["error"]["type"] == "NotFoundError"
    bad = tmp_path / "policy.yaml"
    bad.write_text("roles:\n  qa: {fail: 2}\n")
    invalid = cli("simulate", PIPELINE, "--policy", bad, "--json")
    assert invalid.code == 1
    problem = invalid.json["error"]["problems"][0]
    assert (problem["line"], problem["key"]) == (2, "roles.qa.fail")
    setting = cli("simulate", PIPELINE, "--set", "max_retry=1", "--json")
    assert setting.code == 1
    assert "did you mean 'max_retries'" in setting.json["error"]["message"]
    malformed = cli("simulate", PIPELINE, "--sweep", "max_retries", "--json")
    assert malformed.code == 1
    assert "KEY=VALUE" in malformed.json["error"]["message"]


def test_simulate_streams_to_parquet_with_the_same_summary(cli: Callable[..., Any],
                                                            tmp_path: Path) -> None:
    task = tmp_path / "task.yaml"
    task.write_text("id: csv\ndescription: Export the report as CSV\n")
    memory = cli("simulate", task, "-n", "40", "--seed", "2", "--json")
    out = cli("simulate", task, "-n", "40", "--seed", "2", "--out", tmp_path / "out",
              "--executor", "inline", "--json")
    assert out.code == 0, out.err
    assert out.json["summary"] == memory.json["summary"]
    assert out.json["outcomes"] == memory.json["outcomes"]
    assert {p.parent.name for p in (tmp_path / "out").rglob("*.parquet")} == {"runs"}
    swept = cli("simulate", task, "-n", "10", "--sweep", "launches.developer=1,3", "--out",
                tmp_path / "sweep", "--events", "--progress", "--json")
    assert swept.code == 0, swept.err
    assert [s["values"] for s in swept.json["settings"]] == [{"launches.developer": 1},
                                                              {"launches.developer": 3}]
    assert read_ledger(sorted((tmp_path / "sweep" / "events").glob("*.parquet")))[
        "run"].nunique() == 20
    assert "20/20" in swept.err  # the bar, on stderr


def test_simulate_refuses_mixed_output_options(cli: Callable[..., Any], tmp_path: Path) -> None:
    both = cli("simulate", PIPELINE, "--out", tmp_path / "o", "--ledger", tmp_path / "l.jsonl",
               "--json")
    assert both.code == 1
    assert "--events" in both.err + both.out
    alone = cli("simulate", PIPELINE, "--events", "--json")
    assert alone.code == 1
    where = cli("simulate", PIPELINE, "--executor", "threads", "--json")
    assert where.code == 1
    assert "scheduler address" in where.err + where.out
