"""Synthetic Claude Code transcripts: the same seed writes the same bytes, and they
import with the facts counted from the raw files, as the real samples do."""

from __future__ import annotations

from pathlib import Path

from crewbook import import_runs
from crewbook.ledger.importers import model_calls, tool_calls
from crewbook.ledger.synthetic_sessions import write_claude_code_sessions

from .agent_facts import claude_facts


def test_same_seed_same_files(tmp_path: Path) -> None:
    a = write_claude_code_sessions(tmp_path / "a", ["x", "y"], sessions=6)
    b = write_claude_code_sessions(tmp_path / "b", ["x", "y"], sessions=6)
    assert [p.name for p in a] == [p.name for p in b]
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]
    c = write_claude_code_sessions(tmp_path / "c", ["x", "y"], sessions=6, seed=7)
    assert [p.read_bytes() for p in c] != [p.read_bytes() for p in a]


def test_they_import_with_the_raw_facts(tmp_path: Path) -> None:
    paths = write_claude_code_sessions(tmp_path, ["add-export"], sessions=4)
    for path in paths:
        facts = claude_facts(path)
        df = import_runs(path)
        calls = df[model_calls(df)]
        assert len(calls) == facts.calls
        assert calls["tokens_in"].sum() == facts.tokens_in
        assert calls["tokens_out"].sum() == facts.tokens_out
        assert tool_calls(df).sum() == facts.tools
