"""Analyses on a small hand-made history whose answers are known, and on the synthetic one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from crewbook.ledger import (
    Ledger,
    read_ledger,
    rework,
    run_outcomes,
    timeline,
    usage_by_role,
    verdict_funnel,
)
from crewbook.ledger.synthetic import synthetic_runs, write_big_ledger, write_history

from .conftest import HISTORY


def at(hhmm: str) -> str:
    return f"2025-03-01T{hhmm}:00Z"


A: list[dict[str, Any]] = [
    {"ts": at("09:00"), "kind": "init", "payload": {"task": "T-1"}},
    {"ts": at("09:00"), "kind": "act", "role": "architect", "stage": "plan"},
    {"ts": at("09:05"), "kind": "plan", "role": "architect", "stage": "plan",
     "duration_ms": 300_000, "tokens_in": 1000, "tokens_out": 200, "cost": 0.006},
    {"ts": at("09:05"), "kind": "act", "role": "developer", "stage": "build", "attempt": 1},
    {"ts": at("09:15"), "kind": "report", "role": "developer", "stage": "build",
     "verdict": "done", "attempt": 1, "duration_ms": 600_000, "tokens_in": 5000,
     "tokens_out": 1000, "cost": 0.03, "payload": {"task": "T-1"}},
    {"ts": at("09:16"), "kind": "bar", "stage": "verify", "verdict": "fail", "attempt": 1,
     "duration_ms": 60_000, "payload": {"task": "T-1"}},
    {"ts": at("09:16"), "kind": "act", "role": "developer", "stage": "build", "attempt": 2},
    {"ts": at("09:20"), "kind": "report", "role": "developer", "stage": "build",
     "verdict": "done", "attempt": 2, "duration_ms": 240_000, "tokens_in": 3000,
     "tokens_out": 500, "cost": 0.0165, "payload": {"task": "T-1"}},
    {"ts": at("09:21"), "kind": "bar", "stage": "verify", "verdict": "pass", "attempt": 2,
     "payload": {"task": "T-1"}},
    {"ts": at("09:21"), "kind": "act", "role": "qa", "stage": "verify", "attempt": 2},
    {"ts": at("09:25"), "kind": "verdict", "role": "qa", "stage": "verify",
     "verdict": "no-go", "attempt": 2, "duration_ms": 240_000, "tokens_in": 2000,
     "tokens_out": 100, "cost": 0.0075, "payload": {"task": "T-1"}},
    {"ts": at("09:25"), "kind": "act", "role": "developer", "stage": "build", "attempt": 3},
    {"ts": at("09:30"), "kind": "report", "role": "developer", "stage": "build",
     "verdict": "done", "attempt": 3, "payload": {"task": "T-1"}},
    {"ts": at("09:31"), "kind": "verdict", "role": "qa", "stage": "verify", "verdict": "go",
     "attempt": 3, "payload": {"task": "T-1"}},
    {"ts": at("09:32"), "kind": "verdict", "role": "reviewer", "stage": "review",
     "verdict": "approved", "attempt": 3, "payload": {"task": "T-1"}},
    {"ts": at("09:33"), "kind": "finish", "verdict": "pull_request"},
]
B: list[dict[str, Any]] = [
    {"ts": at("10:00"), "kind": "init"},
    {"ts": at("10:01"), "kind": "report", "role": "analyst", "stage": "analysis",
     "verdict": "done", "payload": {"task": "S1"}},
    {"ts": at("10:05"), "kind": "report", "role": "developer", "stage": "build",
     "verdict": "done", "attempt": 1, "payload": {"task": "S1"}},
    {"ts": at("10:06"), "kind": "verdict", "role": "qa", "stage": "verify", "verdict": "go",
     "attempt": 1, "payload": {"task": "S1"}},
    {"ts": at("10:10"), "kind": "report", "role": "developer", "stage": "build",
     "verdict": "done", "attempt": 1, "payload": {"task": "S2"}},
    {"ts": at("10:11"), "kind": "verdict", "role": "qa", "stage": "verify",
     "verdict": "no-go", "attempt": 1, "payload": {"task": "S2"}},
    {"ts": at("10:12"), "kind": "escalate", "summary": "rounds cap reached"},
]


@pytest.fixture
def history(tmp_path: Path) -> pd.DataFrame:
    with Ledger(tmp_path / "A.jsonl", run="A", loop="coordinator") as a:
        for e in A:
            a.append(e)
    with Ledger(tmp_path / "B.jsonl", run="B", loop="crew") as b:
        for e in B:
            b.append(e)
    return read_ledger(tmp_path)


def test_run_outcomes(history: pd.DataFrame) -> None:
    out = run_outcomes(history)
    assert out.index.tolist() == ["A", "B"]
    a, b = out.loc["A"], out.loc["B"]
    assert (a["loop"], a["events"], a["acts"], a["rounds"]) == ("coordinator", 16, 6, 3)
    assert a["duration"] == pd.Timedelta(minutes=33)
    assert bool(a["finished"])
    assert a["finished_reason"] == "pull_request"
    assert not bool(a["escalated"])
    assert (a["tokens_in"], a["tokens_out"], a["tokens"]) == (11_000, 1_800, 12_800)
    assert a["cost"] == pytest.approx(0.06)
    assert (b["events"], b["acts"], b["rounds"]) == (7, 5, 1)
    assert not bool(b["finished"])
    assert pd.isna(b["finished_reason"])
    assert bool(b["escalated"])
    assert pd.isna(b["tokens_in"])
    assert pd.isna(b["cost"])
    assert str(out["finished_reason"].dtype) == "category"
    assert list(out["finished_reason"].cat.categories) == ["pull_request"]


def test_usage_by_role_and_stage(history: pd.DataFrame) -> None:
    out = usage_by_role(history[history["run"] == "A"])
    dev = out.loc[("developer", "build")]
    assert (dev["events"], dev["acts"]) == (6, 3)
    assert dev["time"] == pd.Timedelta(minutes=14)
    assert (dev["tokens_in"], dev["tokens_out"], dev["tokens"]) == (8000, 1500, 9500)
    assert dev["cost"] == pytest.approx(0.0465)
    assert out.index[0] == ("developer", "build")  # most time first
    assert out["time_share"].sum() == pytest.approx(1.0)
    assert dev["tokens_share"] == pytest.approx(9500 / 12_800, abs=1e-4)
    by_role = usage_by_role(history, by="role")
    assert set(by_role.index) == {"analyst", "architect", "developer", "qa", "reviewer"}


def test_rework_per_task_and_cause(history: pd.DataFrame) -> None:
    out = rework(history)
    assert out.index.tolist() == [("A", "T-1"), ("B", "S1"), ("B", "S2")]
    assert out.columns.tolist() == ["bar fail", "qa no-go", "sendbacks", "rounds"]
    assert out.loc[("A", "T-1")].tolist() == [1, 1, 2, 3]
    assert out.loc[("B", "S2")].tolist() == [0, 1, 1, 1]
    assert out.loc[("B", "S1"), "sendbacks"] == 0
    assert out.sum()["sendbacks"] == 3


def test_verdict_funnel(history: pd.DataFrame) -> None:
    out = verdict_funnel(history)
    assert out.index.tolist() == [1, 2, 3]
    assert out.columns.tolist() == [("qa", "go"), ("qa", "no-go"), ("qa", "pass rate"),
                                    ("reviewer", "approved"), ("reviewer", "pass rate")]
    assert out[("qa", "go")].tolist() == [1, 0, 1]
    assert out[("qa", "no-go")].tolist() == [1, 1, 0]
    assert out[("qa", "pass rate")].tolist() == [0.5, 0.0, 1.0]
    assert out[("reviewer", "approved")].tolist() == [0, 0, 1]
    assert pd.isna(out.loc[1, ("reviewer", "pass rate")])


def test_timeline_spans(history: pd.DataFrame) -> None:
    out = timeline(history, "A")
    assert len(out) == 9
    t = pd.Timestamp

    def span(kind: str, role: str, attempt: int) -> tuple[pd.Timestamp, pd.Timestamp]:
        row = out[(out["kind"] == kind) & (out["role"] == role)
                  & (out["attempt"] == attempt)].iloc[0]
        return row["start"], row["end"]

    assert span("report", "developer", 1) == (t(at("09:05")), t(at("09:15")))  # measured
    assert span("report", "developer", 3) == (t(at("09:25")), t(at("09:30")))  # from its act
    assert span("bar", "bar", 1) == (t(at("09:15")), t(at("09:16")))
    assert span("verdict", "qa", 3) == (t(at("09:31")), t(at("09:31")))  # act already used
    assert (out["duration"] >= pd.Timedelta(0)).all()
    assert len(timeline(history)) == 9 + 5


def test_analyses_name_missing_columns() -> None:
    with pytest.raises(ValueError, match="no column 'attempt'"):
        run_outcomes(pd.DataFrame({"run": [], "ts": [], "kind": [], "loop": [],
                                   "verdict": []}))


def test_analyses_accept_a_flat_payload(history: pd.DataFrame, tmp_path: Path) -> None:
    flat = read_ledger(tmp_path, payload="flat")
    pd.testing.assert_frame_equal(rework(flat), rework(history))


def test_the_synthetic_history_is_deterministic_and_plausible(tmp_path: Path) -> None:
    first = [e for run in synthetic_runs(40, seed=3) for e in run]
    assert first == [e for run in synthetic_runs(40, seed=3) for e in run]
    assert first != [e for run in synthetic_runs(40, seed=4) for e in run]
    paths = write_history(tmp_path / "h", runs=40, seed=3)
    assert len(paths) == 40
    df = read_ledger(tmp_path / "h")
    out = run_outcomes(df)
    assert len(out) == 40
    assert set(out["loop"]) == {"coordinator", "crew"}
    assert out["rounds"].min() >= 1
    assert (out["acts"] > 0).all()
    funnel = verdict_funnel(df)
    assert funnel.loc[1, ("qa", "pass rate")] < funnel.loc[2, ("qa", "pass rate")] + 0.3
    big = write_big_ledger(tmp_path / "big.jsonl", 3000, seed=5)
    assert len(read_ledger(big)) >= 3000


def test_bundled_history_summary() -> None:
    out = run_outcomes(read_ledger(HISTORY))
    assert out["loop"].tolist() == ["crew", "coordinator", "crew"]
    assert bool(out.loc["run-0002", "escalated"])


def test_run_outcomes_past_127_runs_without_a_finish(tmp_path: Path) -> None:
    """Issue 12: the category codes of a subset (int8) and of all runs (int16) differ."""
    import json

    path = tmp_path / "many.jsonl"
    path.write_text("".join(json.dumps(
        {"v": 1, "ts": "2025-03-01T09:00:00Z", "run": f"r{i:03d}", "seq": s, "loop": "crew",
         "kind": kind, **({"role": "qa"} if kind == "report" else {})}) + "\n"
        for i in range(130) for s, kind in enumerate(["init", "report"] if i % 2 else ["init"])))
    outcomes = run_outcomes(read_ledger(path))
    assert len(outcomes) == 130
    assert not outcomes["finished"].any()
    assert outcomes.loc["r001", "acts"] == 1
    assert outcomes.loc["r000", "acts"] == 0
    assert str(outcomes["acts"].dtype) == "Int64"
