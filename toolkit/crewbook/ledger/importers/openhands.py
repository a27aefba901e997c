"""OpenHands run logs: the V0 event lists, the agent-SDK (V1) event streams and
conversation folders, and the evaluation ``output.jsonl``. docs/importers.md has the
whole mapping; in short:

V0 (a JSON list of events with ``id``, ``timestamp``, ``source`` and ``action`` or
``observation``): an action is an ``act`` (stage: the action), an observation with a
``cause`` the tool call of its action (duration: its time minus the action's), an
observation without one a ``transition`` (stage: the agent state). Each model response
not seen before (``tool_call_metadata.model_response``, its usage counted once per
response id) is a model call; cost from ``llm_metrics.accumulated_cost`` (a running
total: a model call's cost is its rise), unless no call was priced (`_priced`).

SDK / V1 (events with ``kind``: ``ActionEvent``, ``ObservationEvent``, ``MessageEvent``…,
as a JSON list, ``{"items": [...]}``, JSON Lines, one event per file, or a conversation
folder ``base_state.json`` + ``events/``): one model call per response (the actions and
agent messages sharing an ``llm_response_id``; stage ``model``), one tool call per tool
call (stage: ``tool_name``; duration: its observation's time minus the action's), user
messages, system prompts and condensations as ``note``, agent errors as ``error``,
execution-status updates as ``transition``. Tokens, cost, latency and model per call come
from the conversation's ``stats`` (``usage_to_metrics.*.token_usages``, by
``response_id``), in ``base_state.json`` or the last ``stats`` state update.

An evaluation ``output.jsonl`` holds one instance per line (``instance_id``, ``history``,
``metrics``; OpenDevin's: ``id`` and ``[action, observation]`` pairs): each is a run named
after its instance, its history read as above.

Events of a kind not listed are kept as ``note`` with ``payload.unknown_type``. Times
have no offset: read as UTC. ``stage`` is always a short name (`STAGE_CHARS` at most).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ...errors import LedgerError, Problem
from ..calls import TOTALS_KEY
from ..events import LedgerEvent
from ._common import (
    MAX_BYTES,
    RunBuilder,
    count,
    model_call,
    read_json,
    short,
    stage_name,
    tool_call,
    utc,
)

if TYPE_CHECKING:
    from . import Sniff

SOURCE: Final = "openhands"
CODE: Final = "import_bad_openhands"
#: Agent states in which a V0 run rests (its last state, when no finish action came).
RESTING: Final = frozenset({"awaiting_user_input", "stopped", "error", "paused",
                            "rejected", "finished"})
#: SDK execution statuses that end a run (its finish verdict when no finish tool ran).
RESTING_V1: Final = frozenset({"finished", "error", "stuck", "paused",
                               "waiting_for_confirmation"})
#: SDK event kinds with no crewbook equivalent that are still known (kept as notes).
NOTES: Final = {"SystemPromptEvent": "system_prompt",
                "SystemPromptUpdateEvent": "system_prompt",
                "Condensation": "condensation", "CondensationRequest": "condensation",
                "CondensationSummaryEvent": "condensation", "TokenEvent": "tokens",
                "LLMCompletionLogEvent": "llm_log", "HookExecutionEvent": "hook"}


# -- detection -------------------------------------------------------------------------


def looks_like(value: Any) -> bool:
    """Whether a parsed JSON value is a V0 OpenHands event list."""
    if isinstance(value, dict) and isinstance(value.get("events"), list):
        value = value["events"]
    head = value[:20] if isinstance(value, list) else []
    return (bool(head) and all(_v0_event(e) for e in head)
            and any("action" in e or "observation" in e for e in head))


def _v0_event(e: Any) -> bool:
    """Whether a value is shaped like a V0 event (an event with neither action nor
    observation is still one: it is kept as a note)."""
    return (isinstance(e, dict) and "id" in e and "timestamp" in e and "source" in e
            and not _sdk_event(e))


def _sdk_event(e: Any) -> bool:
    """Whether a value is one agent-SDK event (``kind`` ``…Event``, ``Condensation``…)."""
    return (isinstance(e, dict) and isinstance(e.get("kind"), str)
            and "id" in e and "timestamp" in e
            and (e["kind"].endswith(("Event", "Observation")) or e["kind"] in NOTES))


def _sdk_events(value: Any) -> list[Any] | None:
    """The SDK events a parsed JSON value holds (a list, ``items``/``events``, one
    event), or None when it is not an SDK event stream."""
    if isinstance(value, dict) and not _sdk_event(value):
        value = value.get("items", value.get("events"))
    if _sdk_event(value):
        return [value]
    if isinstance(value, list) and value and all(_sdk_event(e) for e in value[:20]):
        return value
    return None


def _instance(value: Any) -> bool:
    """Whether a value is one evaluation instance: ``instance_id`` and ``history``, or (as
    OpenDevin's evaluations wrote them, 2024) ``id``, ``instruction`` and ``history``."""
    return (isinstance(value, dict) and isinstance(value.get("history"), list)
            and ("instance_id" in value or ("id" in value and "instruction" in value)))


def _flat_history(history: list[Any]) -> list[Any]:
    """An evaluation history as one event list. OpenDevin wrote it as ``[action,
    observation]`` pairs, the observation a placeholder (``"observation": "null"``, no id)
    when the action had none: the pairs are unpaired and the placeholders left out."""
    if not any(isinstance(e, list) for e in history):
        return history
    flat: list[Any] = []
    for entry in history:
        for e in entry if isinstance(entry, list) else [entry]:
            if not (isinstance(e, dict) and e.get("observation") == "null" and "id" not in e):
                flat.append(e)
    return flat


def is_conversation(folder: Path) -> bool:
    """Whether a folder is an SDK conversation (``base_state.json`` and ``events/``)."""
    return (folder / "base_state.json").is_file() and (folder / "events").is_dir()


def find_conversations(root: Path) -> list[Path]:
    """The SDK conversation folders at or under `root`, sorted (the ``events/`` folder of
    a conversation designates its conversation)."""
    if is_conversation(root):
        return [root]
    if root.name == "events" and is_conversation(root.parent):
        return [root.parent]
    return sorted(p.parent for p in root.rglob("base_state.json") if is_conversation(p.parent))


def detects(sniff: Sniff) -> bool:
    """Whether a sniffed file or folder is an OpenHands log of any kind above."""
    if sniff.is_dir:
        return is_conversation(sniff.path)
    value = sniff.value
    if value is not None:
        return looks_like(value) or _sdk_events(value) is not None or _instance(value)
    first = sniff.first
    return _sdk_event(first) or _instance(first)


# -- import ----------------------------------------------------------------------------


def import_file(path: Path, shown: str) -> list[LedgerEvent]:
    """The events of one OpenHands log (one run per file, conversation or instance)."""
    if path.is_dir():
        return _conversation(path, shown)
    if _is_lines(path):
        return _lines(path, shown)
    value = read_json(path, CODE)
    if looks_like(value):
        items = value["events"] if isinstance(value, dict) else value
        return _v0(items, RunBuilder(SOURCE, SOURCE, path.stem, shown))
    events = _sdk_events(value)
    if events is not None:
        return _sdk(events, RunBuilder(SOURCE, SOURCE, path.stem, shown), None)
    if _instance(value):
        return _eval(value, shown, None)
    raise LedgerError(f"cannot import {shown}", [Problem(
        CODE, "not an OpenHands log: expected a JSON list of events (id, timestamp, "
        "source, action/observation; or agent-SDK events with kind), an evaluation "
        "instance with instance_id and history, or a conversation folder", shown)])


def _is_lines(path: Path) -> bool:
    """Whether a file is JSON Lines (its first line is a whole JSON object)."""
    with path.open("rb") as handle:
        for raw in handle:
            if raw.strip():
                try:
                    value = json.loads(raw)
                except ValueError:
                    return False
                return isinstance(value, dict) and (_sdk_event(value) or _instance(value))
    return False


def _records(path: Path, shown: str) -> Iterator[tuple[int, Any]]:
    """(line number, JSON value) of each non-blank line, read one line at a time."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            if len(raw) > MAX_BYTES:
                raise LedgerError(f"cannot import {shown}", [Problem(
                    CODE, "a line longer than an import reads; split the file", shown,
                    number)])
            if not raw.strip():
                continue
            try:
                yield number, json.loads(raw)
            except (ValueError, UnicodeDecodeError) as exc:
                raise LedgerError(f"cannot import {shown}", [Problem(
                    CODE, f"line is not JSON: {exc}", shown, number)]) from None


def _lines(path: Path, shown: str) -> list[LedgerEvent]:
    """A JSON Lines file: SDK events (one run) or evaluation instances (one run each)."""
    stream: list[tuple[int, Any]] = []
    out: list[LedgerEvent] = []
    for number, value in _records(path, shown):
        if _instance(value):
            out.extend(_eval(value, shown, number))
        else:
            stream.append((number, value))
    if stream:
        run = RunBuilder(SOURCE, SOURCE, path.stem, shown)
        out.extend(_sdk([v for _, v in stream], run, None, [n for n, _ in stream]))
    return out


def _conversation(folder: Path, shown: str) -> list[LedgerEvent]:
    """An SDK conversation folder: ``base_state.json`` and one event per file."""
    state = read_json(folder / "base_state.json", CODE)
    state = state if isinstance(state, dict) else {}
    files = sorted((folder / "events").glob("event-*.json"))
    events = [read_json(f, CODE) for f in files]
    run = RunBuilder(SOURCE, SOURCE, str(state.get("id") or folder.name), shown)
    records = [f"events/{f.name}" for f in files]
    return _sdk(events, run, state, records=records)


def _eval(value: dict[str, Any], shown: str, line: int | None) -> list[LedgerEvent]:
    """One evaluation instance: its history as a run named after the instance."""
    history = _flat_history(value["history"])
    instance = value["instance_id"] if "instance_id" in value else value["id"]
    run = RunBuilder(SOURCE, SOURCE, str(instance), shown)
    metrics = value["metrics"] if isinstance(value.get("metrics"), dict) else None
    if history and all(_sdk_event(e) for e in history[:20]):
        _sdk(history, run, {"stats": {"usage_to_metrics": {"agent": metrics}}}
             if metrics else None, line=line)
    else:
        _v0([e for e in history if isinstance(e, dict)], run, line=line)
        if metrics and not any(e.cost is not None for e in run.events):
            # the history's calls already carry their tokens: only the cost is missing
            itemised = any(e.tokens_in is not None or e.tokens_out is not None
                           for e in run.events)
            _totals(run, [metrics], line=line, record="metrics", tokens=not itemised)
    if not run.events:
        run.add("note", None, line=line, record="history", stage="empty",
                summary=f"instance {instance} has an empty history")
    return run.events


# -- V0 ----------------------------------------------------------------------------------


def _v0(items: list[dict[str, Any]], run: RunBuilder, line: int | None = None
        ) -> list[LedgerEvent]:
    """The events of one V0 event list."""
    actions: dict[str, dict[str, Any]] = {}
    seen_responses: set[str] = set()
    last_cost = 0.0
    finished: str | None = None
    state: tuple[str, str] | None = None
    ts = None
    for index, item in enumerate(items):
        record = f"id {item.get('id')}" if item.get("id") is not None else f"[{index}]"
        ts = utc(item.get("timestamp"))
        payload: dict[str, Any] = {"id": item.get("id")}
        usage: dict[str, Any] = {}
        meta = item.get("tool_call_metadata")
        response = meta.get("model_response") if isinstance(meta, dict) else None
        if isinstance(response, dict) and response.get("id") is not None:
            rid = str(response["id"])
            payload["model_response"] = rid
            if rid not in seen_responses:
                seen_responses.add(rid)
                raw = response["usage"] if isinstance(response.get("usage"), dict) else {}
                usage = {"tokens_in": count(raw.get("prompt_tokens")),
                         "tokens_out": count(raw.get("completion_tokens"))}
                if response.get("model"):
                    payload["model"] = response["model"]
        metrics = item.get("llm_metrics")
        if isinstance(metrics, dict) and _priced(metrics):
            total = float(metrics["accumulated_cost"])
            usage["cost"] = max(total - last_cost, 0.0)
            last_cost = max(total, last_cost)
        role = stage_name(item.get("source")) or "unknown"
        if "tokens_in" in usage or usage.get("cost"):
            # a new model response (or a rise of the running cost): its model call
            args: dict[str, Any] = item["args"] if isinstance(item.get("args"), dict) else {}
            model_call(run, ts, line=line, record=record, role=role,
                       model=payload.pop("model", None), **usage, payload=dict(payload),
                       summary=short(args.get("thought")) or short(item.get("message")))
        usage = {}  # the action or observation itself carries no usage
        if "action" in item:
            action = stage_name(item["action"]) or "action"
            actions[str(item.get("id"))] = {"role": role, "stage": action, "ts": ts}
            if action == "finish":
                finished = "finished"
            run.add("act", ts, line=line, record=record, role=role, stage=action,
                    summary=short(item.get("message")), payload=payload, **usage)
            continue
        if "observation" not in item:
            run.add("note", ts, line=line, record=record, role=role,
                    summary=short(item.get("message")),
                    payload={**payload, "unknown_type": "event without action or "
                             "observation"}, **usage)
            continue
        observation = stage_name(item.get("observation")) or "observation"
        cause = item.get("cause")
        extras: dict[str, Any] = item["extras"] if isinstance(item.get("extras"), dict) else {}
        if cause is None:
            agent_state = extras.get("agent_state")
            if isinstance(agent_state, str):
                state = (agent_state, record)
            run.add("transition", ts, line=line, record=record,
                    stage=stage_name(agent_state) or observation,
                    payload={**payload, "observation": observation}, **usage)
            continue
        act = actions.get(str(cause), {})
        begun = act.get("ts")
        failed = observation == "error" or item.get("success") is False
        tool_call(run, ts, line=line, record=record, role=act.get("role", role),
                  tool=act.get("stage", observation), verdict="failed" if failed else "done",
                  summary=short(item.get("message")), duration_ms=_ms(begun, ts),
                  payload={**payload, "observation": observation, "cause": cause})
    if finished is None and state is not None and state[0] in RESTING:
        finished = state[0]
    if finished is not None:
        run.add("finish", ts, line=line, record="(end of list)", verdict=finished)
    return run.events


def _ms(begun: datetime | None, ended: datetime | None) -> int | None:
    """Milliseconds from `begun` to `ended` (None when either is missing or reversed)."""
    if begun is None or ended is None or ended < begun:
        return None
    return int((ended - begun).total_seconds() * 1000)


# -- SDK / V1 ----------------------------------------------------------------------------


@dataclass
class _Call:
    """One model call: the first event of its response id, and its usage."""

    ts: datetime | None
    record: str
    line: int | None
    tools: list[str] = field(default_factory=list)
    summary: str | None = None


def _usage_by_response(stats: Any) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """(usage per response id, every metrics block) from a ``stats`` value."""
    metrics_blocks: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    per = stats.get("usage_to_metrics") if isinstance(stats, dict) else None
    for metrics in (per.values() if isinstance(per, dict) else ()):
        if not isinstance(metrics, dict):
            continue
        metrics_blocks.append(metrics)
        latencies = {str(x.get("response_id")): x.get("latency")
                     for x in metrics.get("response_latencies") or () if isinstance(x, dict)}
        usages = [u for u in metrics.get("token_usages") or () if isinstance(u, dict)]
        costs = [c for c in metrics.get("costs") or () if isinstance(c, dict)]
        paired = len(costs) == len(usages)
        for index, usage in enumerate(usages):
            rid = str(usage.get("response_id") or "")
            if not rid:
                continue
            cost = costs[index].get("cost") if paired else None
            latency = latencies.get(rid)
            by_id[rid] = {
                "tokens_in": count(usage.get("prompt_tokens")),
                "tokens_out": count(usage.get("completion_tokens")),
                "cost": float(cost) if isinstance(cost, int | float) and cost >= 0 else None,
                "duration_ms": round(latency * 1000) if isinstance(latency, int | float)
                and 0 <= latency < 1e9 else None,
                "payload": {"model": usage.get("model") or metrics.get("model_name"),
                            "cache_read_tokens": count(usage.get("cache_read_tokens")),
                            "cache_write_tokens": count(usage.get("cache_write_tokens")),
                            "reasoning_tokens": count(usage.get("reasoning_tokens"))}}
    return by_id, metrics_blocks


def _priced(metrics: dict[str, Any]) -> bool:
    """Whether an OpenHands metrics block records a cost. Its ``accumulated_cost`` starts
    at 0.0 and each priced call adds an entry to ``costs``: an empty ``costs`` with a zero
    total means no call was priced (a model LiteLLM has no price for), not a free run."""
    total = metrics.get("accumulated_cost")
    if not isinstance(total, int | float) or isinstance(total, bool) or total < 0:
        return False
    return bool(total) or metrics.get("costs") != []


def _totals(run: RunBuilder, blocks: list[dict[str, Any]], *, line: int | None = None,
            record: str, tokens: bool = True) -> None:
    """A ``note`` carrying the run's total usage (flagged ``payload.totals``: no call of
    its own) when no call could be tied to its own
    (dated like the run's last event: the totals are known at its end); without
    `tokens`, only its cost (the calls already carry theirs). No block priced: no cost."""
    priced = [float(b["accumulated_cost"]) for b in blocks if _priced(b)]
    cost = sum(priced) if priced else None
    acc = [b["accumulated_token_usage"] for b in blocks
           if tokens and isinstance(b.get("accumulated_token_usage"), dict)]
    tokens_in = sum(count(a.get("prompt_tokens")) or 0 for a in acc)
    tokens_out = sum(count(a.get("completion_tokens")) or 0 for a in acc)
    if not (priced or tokens_in or tokens_out):
        return
    models = sorted({str(b.get("model_name")) for b in blocks if b.get("model_name")})
    last = run.events[-1].ts if run.events else None
    run.add("note", last, line=line, record=record, stage="usage",
            summary="the run's total usage (its calls are not itemised)" if tokens
            else "the run's total cost (its calls record tokens, no cost)",
            tokens_in=tokens_in if tokens else None, tokens_out=tokens_out if tokens else None,
            cost=cost,
            payload={"model": models[0] if len(models) == 1 else models, TOTALS_KEY: True})


def _sdk_call(run: RunBuilder, ts: datetime | None, usage: dict[str, Any],
              where: dict[str, Any], *, summary: str | None,
              payload: dict[str, Any]) -> None:
    """One SDK model call with its usage from the conversation's stats (`_usage_by_response`;
    empty when the stats do not itemise it: null tokens and cost)."""
    more: dict[str, Any] = dict(usage.get("payload", {}))
    model_call(run, ts, **where, role="agent", model=more.pop("model", None),
               cache_read=more.pop("cache_read_tokens", None),
               cache_write=more.pop("cache_write_tokens", None), summary=summary,
               tokens_in=usage.get("tokens_in"), tokens_out=usage.get("tokens_out"),
               cost=usage.get("cost"), duration_ms=usage.get("duration_ms"),
               payload={**payload, **more})


def _sdk(events: list[Any], run: RunBuilder, state: dict[str, Any] | None,
         lines: list[int] | None = None, *, line: int | None = None,
         records: list[str] | None = None) -> list[LedgerEvent]:
    """The events of one SDK event stream (`state`: the conversation's base state)."""
    stats = state.get("stats") if state else None
    for event in events:  # the last stats update holds the whole conversation's
        if isinstance(event, dict) and event.get("kind") == "ConversationStateUpdateEvent" \
                and event.get("key") == "stats":
            stats = event.get("value")
    by_id, blocks = _usage_by_response(stats)
    observed = {str(e["action_id"]) for e in events
                if isinstance(e, dict) and e.get("action_id") is not None}
    pending: dict[str, dict[str, Any]] = {}
    calls_done: set[str] = set()
    used: set[str] = set()
    finished: str | None = None
    status: str | None = state.get("execution_status") if state and isinstance(
        state.get("execution_status"), str) else None
    ts: datetime | None = None
    for index, event in enumerate(events):
        where: dict[str, Any] = {"line": lines[index] if lines else line,
                 "record": records[index] if records else f"[{index}]"}
        if not isinstance(event, dict):
            raise LedgerError(f"cannot import {run.file}", [Problem(
                CODE, "each event must be a JSON object", run.file, where["line"],
                key=where["record"])])
        kind = str(event.get("kind"))
        ts = utc(event.get("timestamp")) or ts
        role = stage_name(event.get("source")) or "unknown"
        base = {"id": event.get("id"), "kind": kind}
        rid = event.get("llm_response_id")
        if rid is not None and str(rid) not in calls_done and role == "agent":
            calls_done.add(str(rid))
            usage = by_id.get(str(rid), {})
            used.add(str(rid))
            _sdk_call(run, ts, usage, where, summary=short(
                event.get("thought") if isinstance(event.get("thought"), str) else None)
                or _text(event), payload={**base, "llm_response_id": rid})
        if kind == "ActionEvent":
            tool = stage_name(event.get("tool_name")) or _action_kind(event) or "action"
            if tool == "finish":
                finished = "finished"
            call: dict[str, Any] = {"role": "agent", "stage": tool, "ts": ts,
                    "summary": short(event.get("summary")) or _text(event),
                    "payload": {**base, "tool_call_id": event.get("tool_call_id"),
                                "llm_response_id": rid}}
            if str(event.get("id")) in observed:  # reported when its result comes
                pending[str(event.get("id"))] = call
            else:  # never observed: reported now, with no verdict nor duration
                tool_call(run, ts, **where, role="agent", tool=tool,
                          summary=call["summary"], payload=call["payload"])
        elif kind in ("ObservationEvent", "UserRejectObservation") \
                or (kind == "AgentErrorEvent" and event.get("action_id") is not None):
            verdict = "failed" if _failed(event) else "done"
            done = pending.pop(str(event.get("action_id")), None)
            if done is not None:  # the tool call's report: at its result, timed from its call
                tool_call(run, ts, **where, role="agent", tool=done["stage"],
                          verdict=verdict, summary=done["summary"],
                          duration_ms=_ms(done["ts"], ts),
                          payload={**done["payload"], "observation": event.get("id"),
                                   "observation_kind": kind})
            else:  # its action is not in the log (or was reported already)
                tool_call(run, ts, **where, role="agent",
                          tool=stage_name(event.get("tool_name")) or "observation",
                          verdict=verdict, payload={**base, "action_id": event.get("action_id")})
        elif kind == "MessageEvent":
            if role != "agent" or rid is None:
                run.add("note", ts, **where, role=role, stage="message",
                        summary=_text(event), payload=base)
        elif kind == "AgentErrorEvent":
            run.add("error", ts, **where, role=role, stage="error",
                    summary=short(event.get("error")) or "agent error", payload=base)
        elif kind == "ConversationStateUpdateEvent":
            key, value = event.get("key"), event.get("value")
            if key == "execution_status" and isinstance(value, str):
                status = value
                run.add("transition", ts, **where, stage=stage_name(value) or "status",
                        payload=base)
            # a stats update is folded into the calls' usage
        elif kind == "PauseEvent":
            run.add("pause", ts, **where, role=role, payload=base)
        elif kind in NOTES:
            run.add("note", ts, **where, role=role, stage=NOTES[kind], payload=base)
        elif rid is None or str(rid) not in calls_done:
            run.add("note", ts, **where, role=role, payload={**base, "unknown_type": kind})
    for left in pending.values():  # its result came before it: reported at its call
        tool_call(run, left["ts"], record="(unmatched action)", role="agent",
                  tool=left["stage"], summary=left["summary"], payload=left["payload"])
    leftover = [u for r, u in by_id.items() if r not in used]
    if leftover and not used:
        _totals(run, blocks, line=line, record="stats")
    elif leftover:
        for usage in leftover:
            _sdk_call(run, None, usage, {"line": line, "record": "stats"},
                      summary="a model call with no event in the log", payload={})
    elif not by_id and blocks:
        _totals(run, blocks, line=line, record="stats")
    if finished is None and status in RESTING_V1:
        finished = status
    if finished is not None:
        run.add("finish", ts, line=line, record="(end of events)", verdict=finished)
    return run.events


def _failed(observation: dict[str, Any]) -> bool:
    """Whether an observation says its tool call failed."""
    if observation.get("kind") in ("AgentErrorEvent", "UserRejectObservation"):
        return True
    body = observation.get("observation")
    return isinstance(body, dict) and (body.get("is_error") is True or (
        isinstance(body.get("exit_code"), int) and body["exit_code"] not in (0, -1)))


def _action_kind(event: dict[str, Any]) -> str | None:
    action = event.get("action")
    return stage_name(action.get("kind")) if isinstance(action, dict) else None


def _text(event: dict[str, Any]) -> str | None:
    """The first text of an event's ``llm_message`` (a short summary), else None."""
    message = event.get("llm_message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return short(content)
    for part in content if isinstance(content, list) else ():
        if isinstance(part, dict) and isinstance(part.get("text"), str) and part["text"].strip():
            return short(part["text"])
    return None
