"""The facts of a Claude Code transcript or a Codex rollout, counted from the raw file
with plain json code (no crewbook): what the importers' frames are compared with."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
from genai_prices import Usage, calc_price


@dataclass
class Facts:
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    tools: int = 0
    first: pd.Timestamp | None = None
    last: pd.Timestamp | None = None
    models: set[str] = field(default_factory=set)
    cost: Decimal | None = None
    lines: int = 0
    #: lines of a type the importer skips as a repeat: Claude Code's progress and
    #: last-prompt lines, by type
    skipped: dict[str, int] = field(default_factory=dict)


def _records(path: Path) -> list[tuple[int, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [(n, json.loads(line)) for n, line in enumerate(handle, 1) if line.strip()]


def _clock(facts: Facts, record: Any) -> None:
    stamp = record.get("timestamp") if isinstance(record, dict) else None
    if isinstance(stamp, str):
        ts = pd.Timestamp(stamp)
        ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
        facts.first = ts if facts.first is None else min(facts.first, ts)
        facts.last = ts if facts.last is None else max(facts.last, ts)


def _price(model: str | None, provider: str, when: datetime | None, total_in: int,
           out: int, read: int, write: int) -> Decimal | None:
    if model is None or when is None:
        return None
    try:
        return calc_price(Usage(input_tokens=total_in, output_tokens=out,
                                cache_read_tokens=read, cache_write_tokens=write),
                          model_ref=model, provider_id=provider,
                          genai_request_timestamp=when).total_price
    except LookupError:
        return None


def claude_facts(path: Path) -> Facts:
    """Model calls counted once per message id (the last line of an id has its usage)."""
    facts = Facts()
    usage: dict[str, tuple[dict[str, int], str | None, str | None]] = {}
    tool_ids: set[str] = set()
    for number, record in _records(path):
        facts.lines += 1
        _clock(facts, record)
        if isinstance(record, dict) and record.get("type") in ("progress", "last-prompt"):
            facts.skipped[record["type"]] = facts.skipped.get(record["type"], 0) + 1
        if not isinstance(record, dict) or record.get("type") != "assistant":
            continue
        message = record.get("message")
        if not isinstance(message, dict):
            continue
        key = message.get("id") or f"line {number}"
        first_ts = usage[key][2] if key in usage else record.get("timestamp")
        usage[key] = (message.get("usage") or {}, message.get("model"), first_ts)
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                tool_ids.add(block.get("id") or f"line {number}")
    facts.calls = len(usage)
    facts.tools = len(tool_ids)
    total = Decimal(0)
    priced = False
    for u, model, stamp in usage.values():
        total_in = (u.get("input_tokens", 0) + u.get("cache_creation_input_tokens", 0)
                    + u.get("cache_read_input_tokens", 0))
        facts.tokens_in += total_in
        facts.tokens_out += u.get("output_tokens", 0)
        if model:
            facts.models.add(model)
        when = pd.Timestamp(stamp).to_pydatetime() if stamp else None
        price = _price(model, "anthropic", when, total_in, u.get("output_tokens", 0),
                       u.get("cache_read_input_tokens", 0),
                       u.get("cache_creation_input_tokens", 0)) if u else None
        if price is not None:
            total += price
            priced = True
    facts.cost = total if priced else None
    return facts


def codex_facts(path: Path) -> Facts:
    """Tokens: the last ``total_token_usage`` of the file; calls: the token counts whose
    total moved; tools: the function and custom tool calls."""
    facts = Facts()
    model: str | None = None
    previous: dict[str, int] | None = None
    total = Decimal(0)
    priced = False
    for _, record in _records(path):
        facts.lines += 1
        _clock(facts, record)
        payload = record.get("payload") if isinstance(record, dict) else None
        if not isinstance(payload, dict):
            continue
        if record.get("type") == "turn_context" and payload.get("model"):
            model = payload["model"]
        if record.get("type") == "response_item" and payload.get("type") in (
                "function_call", "custom_tool_call", "local_shell_call"):
            facts.tools += 1
        info = payload.get("info") if payload.get("type") == "token_count" else None
        if isinstance(info, dict) and isinstance(info.get("total_token_usage"), dict):
            now = info["total_token_usage"]
            if now == previous:
                continue
            before = previous or {}
            facts.calls += 1
            if model:
                facts.models.add(model)
            d_in = now["input_tokens"] - before.get("input_tokens", 0)
            d_out = now["output_tokens"] - before.get("output_tokens", 0)
            d_read = now.get("cached_input_tokens", 0) - before.get("cached_input_tokens", 0)
            facts.tokens_in += d_in
            facts.tokens_out += d_out
            when = pd.Timestamp(record["timestamp"]).to_pydatetime()
            price = _price(model, "openai", when, d_in, d_out, d_read, 0)
            if price is not None:
                total += price
                priced = True
            previous = now
    facts.cost = total if priced else None
    return facts


def gemini_facts(path: Path) -> Facts:
    """A Gemini CLI session (JSON, or JSON Lines where a message's last copy counts):
    calls = ``gemini`` messages, tokens in = input + tool, out = output + thoughts."""
    facts = Facts()
    text = path.read_text(encoding="utf-8")
    stamps: list[str] = []
    if path.suffix == ".jsonl":
        lines = [json.loads(x) for x in text.splitlines() if x.strip()]
        facts.lines = len(lines)
        head = dict(lines[0])
        by_id: dict[str, dict[str, Any]] = {}
        for line in lines[1:]:
            if "$set" in line:
                head.update(line["$set"])
            else:
                by_id[line["id"]] = line  # the last copy wins
        messages = list(by_id.values())
    else:
        head = json.loads(text)
        messages = head["messages"]
    stamps += [head["startTime"], head["lastUpdated"]]
    total = Decimal(0)
    priced = False
    for m in messages:
        stamps.append(m["timestamp"])
        stamps += [c["timestamp"] for c in m.get("toolCalls", []) if "timestamp" in c]
        if m["type"] != "gemini":
            continue
        facts.calls += 1
        facts.tools += len(m.get("toolCalls", []))
        t = m.get("tokens", {})
        t_in = t.get("input", 0) + t.get("tool", 0)
        t_out = t.get("output", 0) + t.get("thoughts", 0)
        facts.tokens_in += t_in
        facts.tokens_out += t_out
        facts.models.add(m["model"])
        if t_in or t_out:
            price = _price(m["model"], "google", pd.Timestamp(m["timestamp"]).to_pydatetime(),
                           t_in, t_out, t.get("cached", 0), 0)
            if price is not None:
                total += price
                priced = True
    times = [pd.Timestamp(s).tz_convert("UTC") for s in stamps]
    facts.first, facts.last = min(times), max(times)
    facts.cost = total if priced else None
    return facts
