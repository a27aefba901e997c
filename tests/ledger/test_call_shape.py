"""One meaning of a model call and of a tool call across every importer: on every
sample under tests/data/agent_logs (held-out files excepted) and on generated files,
each source's model calls and tool calls have the same kind, stage and fields, and
no other event looks like one."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from crewbook import import_runs
from crewbook.ledger.importers import model_calls, skipped_files, tool_calls
from crewbook.ledger.importers._common import STAGE_CHARS, stage_name
from crewbook.ledger.synthetic_sessions import write_claude_code_sessions

from .test_heldout import HELD
from .test_otlp import GENAI_TRACE
from .test_otlp_import import OPENINFERENCE

LOGS = Path(__file__).resolve().parents[1] / "data" / "agent_logs"
#: Sample folders by the source they hold (every one but the held-out folder, read only by
#: its own test).
SAMPLES = sorted(p for p in LOGS.iterdir() if p.is_dir() and p != HELD)
#: The files of a sample folder that are not logs (extract.mjs: the script re-deriving the
#: captured OTLP samples).
NOT_LOGS = ("PROVENANCE.md", "README.md", "extract.mjs")
#: Sample folders whose logs hold no tool call (aider logs none).
NO_TOOLS = ("aider",)
#: Fields a model call may carry besides the common ones; a tool call carries no usage.
USAGE = ("tokens_in", "tokens_out", "cost")


def _frames(tmp_path: Path) -> dict[str, pd.DataFrame]:
    """Every sample imported, plus generated Claude Code sessions and OTLP traces."""
    generated = tmp_path / "generated"
    write_claude_code_sessions(generated / "claude", ["add-export"], sessions=3)
    (generated / "otlp").mkdir()
    (generated / "otlp" / "genai.json").write_text(json.dumps(GENAI_TRACE), encoding="utf-8")
    (generated / "otlp" / "openinference.json").write_text(json.dumps(OPENINFERENCE),
                                                          encoding="utf-8")
    frames = {p.name: import_runs(sorted(f for f in p.iterdir() if f.name not in NOT_LOGS))
              for p in SAMPLES}
    for name, df in frames.items():
        assert skipped_files(df).empty, name  # every log of every folder imports
    frames["generated-claude"] = import_runs(generated / "claude")
    frames["generated-otlp"] = import_runs(generated / "otlp")
    return frames


@pytest.fixture(scope="module")
def frames(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pd.DataFrame]:
    return _frames(tmp_path_factory.mktemp("shape"))


def test_every_sample_folder_is_covered(frames: dict[str, pd.DataFrame]) -> None:
    sources = set().union(*(set(df["source"].astype(str)) for df in frames.values()))
    assert sources >= {"claude-code", "codex", "gemini-cli", "openhands", "swe-agent",
                       "mini-swe-agent", "aider", "otlp"}


@pytest.mark.parametrize("name", [p.name for p in SAMPLES]
                         + ["generated-claude", "generated-otlp"])
def test_model_calls_have_one_shape(frames: dict[str, pd.DataFrame], name: str) -> None:
    df = frames[name]
    calls = df[model_calls(df)]
    assert len(calls), f"{name}: no model call"
    assert set(calls["kind"].astype(str)) == {"report"}
    assert set(calls["stage"].astype(str)) == {"model"}
    assert calls["role"].notna().all()
    assert not calls["role"].astype(str).isin(["user", "human"]).any()
    assert set(calls["verdict"].astype(str)) <= {"done", "error"}
    for payload in calls["payload"]:
        assert payload["origin"]["source"] in set(df["source"].astype(str))
        assert "tool" not in payload  # a model call is never also a tool call
        assert isinstance(payload.get("model", ""), str)
        for key in ("cache_read_tokens", "cache_write_tokens"):
            assert payload.get(key) is None or (isinstance(payload[key], int)
                                                and payload[key] >= 0)
    # nothing else sits at stage ``model`` (an ``act`` there was the other meaning)
    assert (df["stage"].astype(object) == "model").sum() == len(calls)


@pytest.mark.parametrize("name", [p.name for p in SAMPLES if p.name not in NO_TOOLS]
                         + ["generated-claude", "generated-otlp"])
def test_tool_calls_have_one_shape(frames: dict[str, pd.DataFrame], name: str) -> None:
    df = frames[name]
    tools = df[tool_calls(df)]
    assert len(tools), f"{name}: no tool call"
    assert set(tools["kind"].astype(str)) == {"report"}
    assert tools["role"].notna().all()
    for stage, payload in zip(tools["stage"].astype(str), tools["payload"], strict=True):
        assert stage == (stage_name(payload["tool"]) or "tool")
        assert len(stage) <= STAGE_CHARS
        assert "model" not in payload  # not an LLM span, not priced
    for column in USAGE:
        assert tools[column].isna().all(), f"{name}: a tool call carries {column}"
    assert set(tools["verdict"].dropna().astype(str)) <= {"done", "failed", "error",
                                                          "cancelled"}
    # an ``act`` is a hand-off (a prompt, an action started), never a call with usage
    acts = df[df["kind"].astype(str) == "act"]
    for column in USAGE:
        assert acts[column].isna().all(), f"{name}: an act carries {column}"
