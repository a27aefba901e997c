"""The final check for Claude Code, Codex CLI and Gemini CLI: the held-out real files
(tests/data/agent_logs/heldout/claude-code/, codex/ and gemini-cli/, read by no other
test) import
with the facts counted from the raw files by `agent_facts`."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from crewbook import import_runs
from crewbook.ledger.analyses import run_outcomes
from crewbook.ledger.importers import detect, model_calls, tool_calls

from .agent_facts import claude_facts, codex_facts, gemini_facts

HELD = Path(__file__).resolve().parents[1] / "data" / "agent_logs" / "heldout"


def test_held_out_claude_code() -> None:
    (path,) = sorted((HELD / "claude-code").glob("*.jsonl"))
    assert detect(path) == "claude-code"
    facts = claude_facts(path)
    df = import_runs(path)
    out = run_outcomes(df).iloc[0]
    calls = df[model_calls(df)]
    assert len(calls) == facts.calls == 3
    assert (out["tokens_in"], out["tokens_out"]) == (facts.tokens_in, facts.tokens_out)
    assert tool_calls(df).sum() == facts.tools
    assert (out["started"], out["ended"]) == (facts.first, facts.last)
    assert {p["model"] for p in calls["payload"]} == facts.models
    assert facts.cost is not None
    assert out["cost"] == pytest.approx(float(facts.cost), rel=1e-9)
    assert out["finished_reason"] == "session_end"


def test_held_out_codex() -> None:
    (path,) = sorted((HELD / "codex").glob("*.jsonl"))
    assert detect(path) == "codex"
    facts = codex_facts(path)
    df = import_runs(path)
    out = run_outcomes(df).iloc[0]
    assert (df["stage"] == "model").sum() == facts.calls == 0  # no call finished in it
    assert pd.isna(out["tokens_in"])  # unknown, never 0
    assert pd.isna(out["cost"])
    assert (out["started"], out["ended"]) == (facts.first, facts.last)
    prompts = df[(df["kind"] == "act") & (df["stage"] == "prompt")]
    assert len(prompts) == 1  # the user's question; the AGENTS.md and environment are context
    assert prompts["summary"].iloc[0].startswith("can you analyse the MD files")
    assert out["finished_reason"] == "session_end"


def test_held_out_gemini_cli() -> None:
    (path,) = sorted((HELD / "gemini-cli").glob("session-*"))
    assert detect(path) == "gemini-cli"
    facts = gemini_facts(path)
    df = import_runs(path)
    out = run_outcomes(df).iloc[0]
    calls = df[model_calls(df)]
    assert len(calls) == facts.calls == 3
    assert (out["tokens_in"], out["tokens_out"]) == (facts.tokens_in, facts.tokens_out)
    assert tool_calls(df).sum() == facts.tools == 7
    assert (out["started"], out["ended"]) == (facts.first, facts.last)
    assert {p["model"] for p in calls["payload"]} == facts.models
    assert facts.cost is not None
    assert out["cost"] == pytest.approx(float(facts.cost), rel=1e-9)
    assert out["finished_reason"] == "session_end"
