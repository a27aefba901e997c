"""The final check for Claude Code, Codex CLI and Gemini CLI: the held-out real files
(tests/data/agent_logs/heldout/claude-code/, codex/ and gemini-cli/, read by no other
test) import
with the facts counted from the raw files by `agent_facts`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from crewbook import import_runs
from crewbook.ledger.analyses import run_outcomes
from crewbook.ledger.importers import detect, model_calls, tool_calls

from .agent_facts import claude_facts, codex_facts, gemini_facts

HELD = Path(__file__).resolve().parents[1] / "data" / "agent_logs" / "heldout"


def _imported(path: Path, source: str, facts: Any) -> pd.DataFrame:
    """`path` detected as `source` and imported: its model calls, tool calls, tokens, time
    span, models, cost and outcome equal `facts` (counted from the raw file); the
    imported frame."""
    assert detect(path) == source
    df = import_runs(path)
    out = run_outcomes(df).iloc[0]
    calls = df[model_calls(df)]
    assert len(calls) == facts.calls
    assert tool_calls(df).sum() == facts.tools
    assert (out["started"], out["ended"]) == (facts.first, facts.last)
    assert out["finished_reason"] == "session_end"
    if facts.calls == 0:  # no usage: unknown, never 0
        assert pd.isna(out["tokens_in"])
        assert pd.isna(out["cost"])
        return df
    assert (out["tokens_in"], out["tokens_out"]) == (facts.tokens_in, facts.tokens_out)
    assert {p["model"] for p in calls["payload"]} == facts.models
    assert facts.cost is not None
    assert out["cost"] == pytest.approx(float(facts.cost), rel=1e-9)
    return df


def test_held_out_claude_code() -> None:
    (path,) = sorted((HELD / "claude-code").glob("*.jsonl"))
    facts = claude_facts(path)
    assert facts.calls == 3
    _imported(path, "claude-code", facts)


def test_held_out_codex() -> None:
    (path,) = sorted((HELD / "codex").glob("*.jsonl"))
    facts = codex_facts(path)
    assert facts.calls == 0  # no call finished in it
    df = _imported(path, "codex", facts)
    prompts = df[(df["kind"] == "act") & (df["stage"] == "prompt")]
    assert len(prompts) == 1  # the user's question; the AGENTS.md and environment are context
    assert prompts["summary"].iloc[0].startswith("can you analyse the MD files")


def test_held_out_gemini_cli() -> None:
    (path,) = sorted((HELD / "gemini-cli").glob("session-*"))
    facts = gemini_facts(path)
    assert (facts.calls, facts.tools) == (3, 7)
    _imported(path, "gemini-cli", facts)
