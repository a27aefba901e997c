"""The final check: held-out real logs of each format (tests/data/agent_logs/heldout/,
used by no other test) import with the tool's own tokens, costs, times and exit status.

Expected figures are computed from the raw files here, not by the importers."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pytest

from crewbook import import_runs
from crewbook.ledger.analyses import run_outcomes, timeline, usage_by_role
from crewbook.ledger.importers import detect, model_calls, tool_calls

from .real_facts import mini_facts, sdk_facts
from .test_importers import LOGS, _aider_sessions, _responses

HELD = LOGS / "heldout"


@pytest.mark.parametrize(("folder", "source"), [
    ("openhands", "openhands"), ("swe-agent", "swe-agent"), ("aider", "aider"),
    ("otlp", "otlp"), ("openhands-sdk", "openhands"), ("mini-swe-agent", "mini-swe-agent")])
def test_each_held_out_log_is_detected(folder: str, source: str) -> None:
    (path,) = sorted((HELD / folder).iterdir())
    assert detect(path) == source


def test_held_out_openhands() -> None:
    (path,) = sorted((HELD / "openhands").iterdir())
    raw = json.loads(path.read_text(encoding="utf-8"))
    responses = _responses(raw)
    df = import_runs(path)
    out = run_outcomes(df).loc[path.stem]
    assert out["tokens_in"] == sum(r["prompt_tokens"] for r in responses.values())
    assert out["tokens_out"] == sum(r["completion_tokens"] for r in responses.values())
    stamps = [pd.Timestamp(e["timestamp"], tz="UTC") for e in raw]
    assert out["duration"] == max(stamps) - min(stamps)
    assert any(e.get("action") == "finish" for e in raw)
    assert out["finished_reason"] == "finished"
    # these events carry no llm_metrics: the cost is the price table's estimate, marked
    priced = df[df["cost"].notna()]
    assert out["cost"] == pytest.approx(priced["cost"].sum())
    assert len(priced) > 0
    assert all(p["cost_estimate"]["by"].startswith("genai-prices") for p in priced["payload"])


def test_held_out_swe_agent() -> None:
    (path,) = sorted((HELD / "swe-agent").iterdir())
    raw = json.loads(path.read_text(encoding="utf-8"))
    stats = raw["info"]["model_stats"]
    df = import_runs(path)
    out = run_outcomes(df).loc[path.stem]
    assert (out["tokens_in"], out["tokens_out"]) == (stats["tokens_sent"],
                                                     stats["tokens_received"])
    assert out["cost"] == pytest.approx(stats["instance_cost"], abs=1e-12)
    assert out["finished_reason"] == raw["info"]["exit_status"]
    assert pd.isna(out["duration"])
    # acts: a model call per step and a tool call per action it ran
    assert out["acts"] == len(raw["trajectory"]) + sum(
        1 for s in raw["trajectory"] if s["action"].split())


def test_held_out_aider() -> None:
    (path,) = sorted((HELD / "aider").iterdir())
    expected = _aider_sessions(path)
    outcomes = run_outcomes(import_runs(path))
    assert len(outcomes) == len(expected)
    for start, facts in expected.items():
        out = outcomes.loc[f"{path.name.split('.')[0]}@{start}"]
        assert out["started"] == pd.Timestamp(start, tz="UTC")
        assert pd.isna(out["duration"])
        assert out["cost"] == pytest.approx(facts["cost"], abs=1e-9)
        assert (out["tokens_in"], out["tokens_out"]) == (facts["sent"], facts["received"])


def test_held_out_otlp() -> None:
    (path,) = sorted((HELD / "otlp").iterdir())
    spans = [s for rs in json.loads(path.read_text(encoding="utf-8"))["resourceSpans"]
             for ss in rs["scopeSpans"] for s in ss["spans"]]

    def attr(span: dict[str, Any], key: str) -> int:
        values = {a["key"]: a["value"] for a in span["attributes"]}
        value = values.get(key, {"intValue": "0"})
        return int(value["intValue"])

    df = import_runs(path)
    out = run_outcomes(df).iloc[0]
    assert out["tokens_in"] == sum(attr(s, "gen_ai.usage.input_tokens") for s in spans)
    assert out["tokens_out"] == sum(attr(s, "gen_ai.usage.output_tokens") for s in spans)
    starts = [int(s["startTimeUnixNano"]) for s in spans]
    ends = [int(s["endTimeUnixNano"]) for s in spans]
    assert out["started"] == pd.Timestamp(min(starts), unit="ns", tz="UTC")
    assert out["duration"] == pd.Timedelta(max(ends) - min(starts), unit="ns")
    assert list(timeline(df)["duration"]) == [
        pd.Timedelta(e - s, unit="ns") for s, e in zip(starts, ends, strict=True)]
    assert "get_weather" in usage_by_role(df).index.get_level_values("stage")


def test_held_out_openhands_sdk_conversation() -> None:
    (path,) = sorted((HELD / "openhands-sdk").iterdir())
    facts = sdk_facts(path)
    df = import_runs(path)
    (run,) = df["run"].unique()
    out = run_outcomes(df).loc[run]
    calls = df[model_calls(df)]
    assert len(calls) == facts["calls"]
    assert list(df[tool_calls(df)]["stage"]) == facts["tool_names"]
    assert (out["tokens_in"], out["tokens_out"]) == (facts["tokens_in"], facts["tokens_out"])
    assert out["cost"] == pytest.approx(facts["cost"], abs=1e-12)
    assert (out["started"], out["ended"]) == (facts["first"], facts["last"])
    assert out["finished_reason"] == facts["outcome"]


def test_held_out_mini_swe_agent() -> None:
    (path,) = sorted((HELD / "mini-swe-agent").iterdir())
    facts = mini_facts(path)
    df = import_runs(path)
    out = run_outcomes(df).loc[facts["run"]]
    assert model_calls(df).sum() == facts["calls"]
    assert tool_calls(df).sum() == facts["tools"]
    assert (out["tokens_in"], out["tokens_out"]) == (facts["tokens_in"], facts["tokens_out"])
    assert out["cost"] == pytest.approx(facts["cost"], abs=1e-12)
    assert out["finished_reason"] == facts["outcome"]
    assert df[df["kind"] == "init"].iloc[0]["payload"]["model"] == facts["model"]
