"""OpenHands agent-SDK (V1) event streams (events with ``kind``: ``ActionEvent``,
``ObservationEvent``, ``MessageEvent``…) as crewbook events, their usage from the
conversation's ``stats``; docs/importers.md has the mapping."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from ...errors import LedgerError, Problem
from ..events import LedgerEvent
from ._common import RunBuilder, model_call, short, stage_name, tool_call, utc
from .openhands_usage import CODE, ms, totals, usage_by_response

#: SDK execution statuses that end a run (its finish verdict when no finish tool ran).
RESTING_V1: Final = frozenset({"finished", "error", "stuck", "paused",
                               "waiting_for_confirmation"})
#: SDK event kinds with no crewbook equivalent that are still known (kept as notes).
NOTES: Final = {"SystemPromptEvent": "system_prompt",
                "SystemPromptUpdateEvent": "system_prompt",
                "Condensation": "condensation", "CondensationRequest": "condensation",
                "CondensationSummaryEvent": "condensation", "TokenEvent": "tokens",
                "LLMCompletionLogEvent": "llm_log", "HookExecutionEvent": "hook"}


def _sdk_call(run: RunBuilder, ts: datetime | None, usage: dict[str, Any],
              where: dict[str, Any], *, summary: str | None,
              payload: dict[str, Any]) -> None:
    """One SDK model call with its usage from the conversation's stats (`usage_by_response`;
    empty when the stats do not itemise it: null tokens and cost)."""
    more: dict[str, Any] = dict(usage.get("payload", {}))
    model_call(run, ts, **where, role="agent", model=more.pop("model", None),
               cache_read=more.pop("cache_read_tokens", None),
               cache_write=more.pop("cache_write_tokens", None), summary=summary,
               tokens_in=usage.get("tokens_in"), tokens_out=usage.get("tokens_out"),
               cost=usage.get("cost"), duration_ms=usage.get("duration_ms"),
               payload={**payload, **more})


def read_sdk(events: list[Any], run: RunBuilder, state: dict[str, Any] | None,
             lines: list[int] | None = None, *, line: int | None = None,
             records: list[str] | None = None) -> list[LedgerEvent]:
    """The events of one SDK event stream (`state`: the conversation's base state)."""
    stats = state.get("stats") if state else None
    for event in events:  # the last stats update holds the whole conversation's
        if isinstance(event, dict) and event.get("kind") == "ConversationStateUpdateEvent" \
                and event.get("key") == "stats":
            stats = event.get("value")
    by_id, blocks = usage_by_response(stats)
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
                          duration_ms=ms(done["ts"], ts),
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
        totals(run, blocks, line=line, record="stats")
    elif leftover:
        for usage in leftover:
            _sdk_call(run, None, usage, {"line": line, "record": "stats"},
                      summary="a model call with no event in the log", payload={})
    elif not by_id and blocks:
        totals(run, blocks, line=line, record="stats")
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
