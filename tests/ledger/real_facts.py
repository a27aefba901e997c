"""Facts of real agent logs computed from the raw files with plain ``json`` code, never
by the importers: what `tests/ledger/test_real_logs.py` and `test_heldout.py` compare
the imported frames with."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd


def mini_facts(path: Path) -> dict[str, Any]:
    """Model calls, tokens, cost, tool calls, first/last time, model and outcome of a
    mini-SWE-agent trajectory."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    info = raw["info"]
    replies = [m for m in raw["messages"] if m["role"] == "assistant"]
    usages = [m["extra"]["response"]["usage"] for m in replies
              if "usage" in m.get("extra", {}).get("response", {})]
    costs = [m["extra"]["cost"] for m in replies if "cost" in m.get("extra", {})]
    tools = 0
    for m in replies:
        actions = m.get("extra", {}).get("actions")
        tools += len(actions) if actions else len(re.findall(
            r"```(?:bash|mswea_bash_command)\s*\n", m["content"]))
    stamps = [m["extra"]["timestamp"] for m in raw["messages"]
              if "timestamp" in m.get("extra", {})]
    return {
        "calls": len(replies),
        "tokens_in": sum(u["prompt_tokens"] for u in usages) if usages else None,
        "tokens_out": sum(u["completion_tokens"] for u in usages) if usages else None,
        "cost": sum(costs) if costs else info["model_stats"]["instance_cost"],
        "tools": tools,
        "first": pd.Timestamp(datetime.fromtimestamp(min(stamps), UTC)) if stamps else None,
        "last": pd.Timestamp(datetime.fromtimestamp(max(stamps), UTC)) if stamps else None,
        "model": info["config"]["model"]["model_name"],
        "outcome": info["exit_status"],
        "run": raw.get("instance_id") or path.name.split(".")[0],
    }


def sdk_facts(path: Path) -> dict[str, Any]:
    """The same facts of an OpenHands agent-SDK conversation folder or event stream."""
    if path.is_dir():
        state = json.loads((path / "base_state.json").read_text(encoding="utf-8"))
        events = [json.loads(p.read_text(encoding="utf-8"))
                  for p in sorted((path / "events").glob("event-*.json"))]
        stats = state["stats"]
        status = state.get("execution_status")
    else:
        events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                  if line.strip()]
        updates = [e for e in events if e["kind"] == "ConversationStateUpdateEvent"]
        stats = [e["value"] for e in updates if e["key"] == "stats"][-1]
        statuses = [e["value"] for e in updates if e["key"] == "execution_status"]
        status = statuses[-1] if statuses else None
    blocks = list(stats["usage_to_metrics"].values())
    itemised = [u for b in blocks for u in b.get("token_usages", [])]
    if itemised:
        tokens_in = sum(u["prompt_tokens"] for u in itemised)
        tokens_out = sum(u["completion_tokens"] for u in itemised)
    elif blocks:
        tokens_in = sum(b["accumulated_token_usage"]["prompt_tokens"] for b in blocks)
        tokens_out = sum(b["accumulated_token_usage"]["completion_tokens"] for b in blocks)
    else:  # the stats record no usage at all (a stubbed model)
        tokens_in = tokens_out = None
    stamps = [pd.Timestamp(e["timestamp"], tz="UTC") for e in events]
    actions = [e for e in events if e["kind"] == "ActionEvent"]
    ids = {e["id"] for e in actions}
    # a tool call is an action, or an observation whose action the log does not hold
    tool_events = [e for e in events if e["kind"] == "ActionEvent" or (
        e["kind"] == "ObservationEvent" and e["action_id"] not in ids)]
    finished = any(e["tool_name"] == "finish" for e in actions)
    return {
        "calls": len({e["llm_response_id"] for e in events
                      if e.get("llm_response_id") and e["source"] == "agent"}),
        "tokens_in": tokens_in, "tokens_out": tokens_out,
        "cost": sum(b["accumulated_cost"] for b in blocks) if blocks else None,
        "tools": len(tool_events),
        "tool_names": [e["tool_name"] for e in tool_events],
        "first": min(stamps), "last": max(stamps),
        "model": sorted({b["model_name"] for b in blocks}),
        # a run still "running" at the end of its log has no outcome (no finish event)
        "outcome": "finished" if finished else (None if status in (None, "running", "idle")
                                                else status),
    }


def eval_facts(path: Path) -> dict[str, dict[str, Any]]:
    """Per instance of an OpenHands evaluation ``output.jsonl`` whose histories are
    agent-SDK events: model calls, tool calls, first/last time, outcome and cost."""
    out: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        events = row["history"]
        actions = [e for e in events if e["kind"] == "ActionEvent"]
        ids = {e["id"] for e in actions}
        tools = [e for e in events if e["kind"] == "ActionEvent" or (
            e["kind"] == "ObservationEvent" and e["action_id"] not in ids)]
        stamps = [pd.Timestamp(e["timestamp"], tz="UTC") for e in events]
        metrics = row.get("metrics") or {}
        out[row["instance_id"]] = {
            "calls": len({e["llm_response_id"] for e in events
                          if e.get("llm_response_id") and e["source"] == "agent"}),
            "tools": len(tools), "tool_names": [e["tool_name"] for e in tools],
            "first": min(stamps), "last": max(stamps),
            "outcome": "finished" if any(e["tool_name"] == "finish" for e in actions)
            else None,
            "cost": metrics.get("accumulated_cost"),
        }
    return out


def v0_history(path: Path) -> list[dict[str, Any]]:
    """The events of an OpenHands V0 trajectory file (a list, or ``{"trajectory": [...]}``
    as OpenHands' trajectory download writes it), or of a V0 session folder (one event
    per file, ``events/<id>.json``), in id order."""
    if path.is_file():  # a list, or OpenHands' download: {"trajectory": [...]}
        raw = json.loads(path.read_text(encoding="utf-8"))
        events: list[dict[str, Any]] = raw["trajectory"] if isinstance(raw, dict) else raw
        return events
    files = sorted((path / "events").glob("*.json"), key=lambda p: int(p.stem))
    return [json.loads(p.read_text(encoding="utf-8")) for p in files]


def v0_facts(history: list[dict[str, Any]]) -> dict[str, Any]:
    """The same facts of an OpenHands V0 event list (a trajectory, or the ``history`` of an
    evaluation line): a model call is a ``model_response`` id, its usage counted once however
    many events repeat it; a tool call is an observation answering an action (``cause``);
    the cost is the last ``llm_metrics.accumulated_cost`` (a running total), None when no
    event has one or its block priced nothing (a zero total and no ``costs``); the tokens
    the last ``llm_metrics.accumulated_token_usage`` when there is one."""
    responses: dict[str, dict[str, Any]] = {}
    for e in history:
        response = (e.get("tool_call_metadata") or {}).get("model_response")
        if response and response["id"] not in responses:
            responses[response["id"]] = response
    actions = {e["id"]: e["action"] for e in history if "action" in e}
    answered = [actions[e["cause"]] for e in history
                if "observation" in e and e.get("cause") in actions]
    stamps = [pd.Timestamp(e["timestamp"], tz="UTC") for e in history]
    blocks = [e["llm_metrics"] for e in history if e.get("llm_metrics")]
    states = [e["extras"]["agent_state"] for e in history
              if e.get("observation") == "agent_state_changed"]
    priced = [b for b in blocks if b["accumulated_cost"] or b.get("costs")]
    counted = [b["accumulated_token_usage"] for b in blocks if "accumulated_token_usage" in b]
    return {
        "calls": len(responses),
        "cost": priced[-1]["accumulated_cost"] if priced else None,
        # OpenHands' own running token total where its events carry one (it counts calls
        # a downloaded list may hold no event of), else the responses' usage
        "tokens_in": counted[-1]["prompt_tokens"] if counted else
        sum(r["usage"]["prompt_tokens"] for r in responses.values()) if responses else None,
        "tokens_out": counted[-1]["completion_tokens"] if counted else
        sum(r["usage"]["completion_tokens"] for r in responses.values()) if responses
        else None,
        "tool_names": answered,
        "first": min(stamps), "last": max(stamps),
        "model": sorted({r["model"] for r in responses.values()}),
        # a finish action, else the state the agent rests in at the end of the log (one
        # still at work there, loading or running, has no outcome)
        "outcome": "finished" if "finish" in actions.values() else next(
            (state for state in states[-1:] if state not in ("loading", "running")), None),
    }


#: Where a captured span counts its tokens (the GenAI conventions, their names before 1.27,
#: OpenInference) and records a cost, a model, a tool.
SPAN_IN = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt")
SPAN_OUT = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens",
            "llm.token_count.completion")
SPAN_COST = ("gen_ai.usage.cost", "llm.cost.total")
SPAN_MODEL = ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name")
SPAN_TOOL = ("gen_ai.tool.name", "tool.name", "ai.toolCall.name")


def otlp_facts(path: Path) -> dict[str, Any]:
    """The facts of a captured OTLP JSON file (one trace): a model call is a span counting
    tokens of its own (none of its descendants counts any) or an OpenInference LLM span;
    a tool call a span naming a tool with no tokens; times the spans' start and end."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    spans = [s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    attrs = {s["spanId"]: {a["key"]: next(iter(a["value"].values()))
                           for a in s.get("attributes", [])} for s in spans}
    parent = {s["spanId"]: s.get("parentSpanId") for s in spans}

    def first(a: dict[str, Any], keys: tuple[str, ...]) -> Any:
        return next((a[k] for k in keys if k in a), None)

    counting = {sid for sid, a in attrs.items() if first(a, SPAN_IN + SPAN_OUT) is not None}
    summing = set()
    for sid in counting:
        up = parent[sid]
        while up in parent:
            summing.add(up)
            up = parent[up]
    calls = [sid for sid, a in attrs.items() if (sid in counting and sid not in summing)
             or a.get("openinference.span.kind") == "LLM"]
    tools = [sid for sid, a in attrs.items() if sid not in counting
             and first(a, SPAN_TOOL) is not None]
    nanos = [int(s[k]) for s in spans for k in ("startTimeUnixNano", "endTimeUnixNano")]

    def total(keys: tuple[str, ...]) -> int | None:
        values = [first(attrs[sid], keys) for sid in calls]
        return sum(int(v) for v in values if v is not None) if any(
            v is not None for v in values) else None

    return {
        "calls": len(calls),
        "tokens_in": total(SPAN_IN), "tokens_out": total(SPAN_OUT),
        "costs": sorted(float(first(attrs[sid], SPAN_COST)) for sid in calls
                        if first(attrs[sid], SPAN_COST) is not None),
        "models": sorted(str(first(attrs[sid], SPAN_MODEL)) for sid in calls),
        "tools": sorted(str(first(attrs[sid], SPAN_TOOL)) for sid in tools),
        "first": pd.Timestamp(min(nanos), tz="UTC").floor("us"),
        "last": pd.Timestamp(max(nanos), tz="UTC").floor("us"),
        "run": spans[0]["traceId"],
    }
