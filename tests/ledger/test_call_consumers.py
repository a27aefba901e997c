"""What reads an imported ledger gives the same answers for every source now that a model
call and a tool call have one shape: the timeline, usage by stage, the run outcomes and
the OTLP export (an LLM span per model call, a TOOL span per tool call). Expected figures
come from the raw files (`agent_facts`, plain json)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from crewbook import import_runs
from crewbook.ledger.analyses import run_outcomes, timeline, usage_by_role
from crewbook.ledger.conformance import check_conformance
from crewbook.ledger.importers import model_calls, tool_calls
from crewbook.ledger.otlp_export import to_otlp

from .agent_facts import claude_facts, codex_facts, gemini_facts

LOGS = Path(__file__).resolve().parents[1] / "data" / "agent_logs"
CLAUDE = LOGS / "claude-code" / "spotter-tool_heavy.jsonl"
SWE = LOGS / "swe-agent" / "6e44b9__sweagenttestrepo-1c2844.traj"
GEMINI = LOGS / "gemini-cli" / "session-2026-04-23T12-52-0ab84937.head8.jsonl"
#: One sample of each source with model and tool calls.
SAMPLES = [CLAUDE, SWE, LOGS / "codex" / "agent-history-codex-golden.jsonl",
           GEMINI,
           LOGS / "mini-swe-agent" / "django__django-16255.traj.json",
           LOGS / "openhands" / "basic_gui_mode.json",
           LOGS / "openhands-sdk" / "cd94562403b9487ebdd4018e3f531dfd"]


def _swe_steps() -> tuple[int, int]:
    """(model calls, tool calls) of the SWE-agent sample: a step, and its action if any."""
    steps = json.loads(SWE.read_text(encoding="utf-8"))["trajectory"]
    return len(steps), sum(1 for s in steps if s["action"].split())


def test_timeline_has_every_tool_call_of_a_claude_code_session_with_its_duration() -> None:
    facts = claude_facts(CLAUDE)
    df = import_runs(CLAUDE)
    spans = timeline(df)
    tools = df[tool_calls(df)]
    assert facts.tools > 0
    got = spans[spans["stage"].isin(set(tools["stage"].astype(str)))]
    assert len(got) == facts.tools
    measured = tools["duration_ms"].dropna()
    assert sorted(got["duration"].dropna().dt.total_seconds().mul(1000).round()) == sorted(
        measured.astype(float))
    assert (spans["stage"] == "model").sum() == facts.calls


def test_timeline_and_usage_count_a_swe_agent_step_s_model_call() -> None:
    calls, tools = _swe_steps()
    df = import_runs(SWE)
    spans = timeline(df)
    assert (spans["stage"] == "model").sum() == calls
    by_stage = usage_by_role(df, by="stage")
    assert by_stage.loc["model", "acts"] == calls
    assert by_stage["acts"].sum() == calls + tools
    assert run_outcomes(df).iloc[0]["acts"] == calls + tools


@pytest.mark.parametrize("path", [CLAUDE, LOGS / "codex" / "agent-history-codex-golden.jsonl",
                                  GEMINI],
                         ids=lambda p: p.parent.name)
def test_usage_by_stage_counts_each_tool_call_as_an_act(path: Path) -> None:
    facts = {"claude-code": claude_facts, "codex": codex_facts,
             "gemini-cli": gemini_facts}[path.parent.name](path)
    df = import_runs(path)
    by_stage = usage_by_role(df, by="stage")
    tool_stages = set(df.loc[tool_calls(df), "stage"].astype(str))
    assert facts.tools > 0
    assert int(by_stage.loc[sorted(tool_stages), "acts"].sum()) == facts.tools
    assert by_stage.loc["model", "tokens_in"] == facts.tokens_in


def _spans(document: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
    """(run, seq) → the attributes of the span of that event."""
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                attrs = {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}
                if "crewbook.seq" in attrs:
                    out[(str(attrs["crewbook.run"]), int(attrs["crewbook.seq"]))] = attrs
    return out


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.parent.name)
def test_otlp_export_makes_each_model_call_an_llm_span_and_each_tool_call_a_tool_span(
        path: Path) -> None:
    df = import_runs(path)
    spans = _spans(to_otlp(df, clockless_at=datetime(2025, 1, 1, tzinfo=UTC)))
    calls, tools = df[model_calls(df)], df[tool_calls(df)]
    assert len(calls)
    assert len(tools)
    for run, seq in zip(calls["run"].astype(str), calls["seq"], strict=True):
        attrs = spans[(run, int(seq))]
        assert attrs["openinference.span.kind"] == "LLM"
        assert attrs["gen_ai.operation.name"] == "chat"
    for run, seq, stage in zip(tools["run"].astype(str), tools["seq"],
                               tools["stage"].astype(str), strict=True):
        attrs = spans[(run, int(seq))]
        assert attrs["openinference.span.kind"] == "TOOL"
        assert attrs["gen_ai.tool.name"] == stage
    llm = sum(1 for a in spans.values() if a["openinference.span.kind"] == "LLM")
    assert llm == len(calls)  # a run's totals (a finish with tokens) are no model call


def _roots(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Run → the attributes of its run span (the trace's root)."""
    return {a["session.id"]: a for a in (
        {x["key"]: next(iter(x["value"].values())) for x in span["attributes"]}
        for resource in document["resourceSpans"] for scope in resource["scopeSpans"]
        for span in scope["spans"] if "parentSpanId" not in span)}


def test_swe_agent_export_has_one_llm_span_per_step_and_its_totals_on_the_run() -> None:
    calls, tools = _swe_steps()
    document = to_otlp(import_runs(SWE), clockless_at=datetime(2025, 1, 1, tzinfo=UTC))
    spans = _spans(document)
    kinds = pd.Series([a["openinference.span.kind"] for a in spans.values()])
    assert (kinds == "TOOL").sum() == tools
    assert (kinds == "LLM").sum() == calls  # one per step, none for the run's totals
    stats = json.loads(SWE.read_text(encoding="utf-8"))["info"]["model_stats"]
    root, = _roots(document).values()
    assert int(root["crewbook.run.tokens_in"]) == stats["tokens_sent"] > 0
    assert int(root["crewbook.run.tokens_out"]) == stats["tokens_received"]
    assert root["crewbook.run.cost"] == pytest.approx(stats["instance_cost"])
    # no token on any span a viewer counts (SWE-agent records none per step)
    assert not any("llm.token_count.prompt" in a or "gen_ai.usage.input_tokens" in a
                   for a in spans.values())


def test_openhands_usage_totals_are_run_attributes_not_a_model_call() -> None:
    """An OpenHands stream whose stats itemise no call keeps the run's usage on a note:
    exported, it is an attribute of the run, not an LLM span counting the tokens again."""
    path = LOGS / "openhands-sdk" / "goal_events.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
               if line.strip()]
    stats = [r["value"] for r in records if r.get("key") == "stats"][-1]
    blocks = stats["usage_to_metrics"].values()
    prompt = sum(b["accumulated_token_usage"]["prompt_tokens"] for b in blocks)
    df = import_runs(path)
    document = to_otlp(df)
    spans = _spans(document)
    llm = [a for a in spans.values() if a["openinference.span.kind"] == "LLM"]
    assert len(llm) == int(model_calls(df).sum())
    assert sum(int(a.get("llm.token_count.prompt", 0)) for a in llm) == 0  # none itemised
    root, = _roots(document).values()
    assert int(root["crewbook.run.tokens_in"]) == prompt > 0


def _raw_tool_times(path: Path) -> dict[str, tuple[pd.Timestamp, pd.Timestamp]]:
    """Call id → (time of the call, time of its result), from the raw JSON Lines: Claude
    Code ``tool_use`` / ``tool_result`` blocks, Codex ``function_call`` / its output."""
    calls: dict[str, pd.Timestamp] = {}
    out: dict[str, tuple[pd.Timestamp, pd.Timestamp]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line) if line.strip() else None
        if not isinstance(record, dict) or "timestamp" not in record:
            continue
        ts = pd.Timestamp(record["timestamp"])
        content = (record.get("message") or {}).get("content") if isinstance(
            record.get("message"), dict) else None
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use":
                calls[block["id"]] = ts
            elif block.get("type") == "tool_result" and block["tool_use_id"] in calls \
                    and block["tool_use_id"] not in out:
                out[block["tool_use_id"]] = (calls[block["tool_use_id"]], ts)
        payload = record.get("payload")
        if isinstance(payload, dict) and payload.get("type") == "function_call":
            calls[payload["call_id"]] = ts
        elif isinstance(payload, dict) and payload.get("type") == "function_call_output" \
                and payload["call_id"] in calls and payload["call_id"] not in out:
            out[payload["call_id"]] = (calls[payload["call_id"]], ts)
    return out


@pytest.mark.parametrize("path", [CLAUDE, LOGS / "codex" / "agent-history-codex-golden.jsonl"],
                         ids=lambda p: p.parent.name)
def test_a_tool_call_s_span_runs_from_its_call_to_its_result(path: Path) -> None:
    """The timeline and the OTLP export end a span at its event's time: a tool call is
    reported at its result, so its span covers call to result (it ended at the call)."""
    raw = _raw_tool_times(path)
    assert raw
    df = import_runs(path)
    tools = df[tool_calls(df)]
    spans = timeline(df)
    keys = tools["payload"].map(lambda p: p.get("tool_use_id") or p.get("call_id"))
    assert set(raw) <= set(keys)  # every answered call of the log
    for (_, row), key in zip(tools.iterrows(), keys, strict=True):
        if key not in raw:
            continue
        begun, ended = raw[key]
        assert row["ts"] == ended
        got = spans[(spans["end"] == ended) & (spans["stage"] == row["stage"])]
        assert begun in set(got["start"])
    # the run's clock only goes forward, but for the log's own jitter: a Claude Code
    # progress line is stamped a millisecond after the tool_result written after it
    problems = check_conformance(df)
    assert set(problems["code"]) <= {"time_backwards"}
    ts = df.set_index("seq")["ts"]
    for seq in problems["seq"]:
        assert ts.loc[:seq - 1].max() - ts.loc[seq] <= pd.Timedelta(milliseconds=10)
