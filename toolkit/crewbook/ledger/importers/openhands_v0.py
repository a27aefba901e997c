"""OpenHands V0 event lists (events with ``id``, ``timestamp``, ``source`` and ``action``
or ``observation``) as crewbook events; docs/importers.md has the mapping."""

from __future__ import annotations

from typing import Any, Final

from ..calls import TOTALS_KEY
from ..events import LedgerEvent
from ._common import RunBuilder, count, model_call, short, stage_name, tool_call, utc
from .openhands_usage import ms, priced

#: Agent states in which a V0 run rests (its last state, when no finish action came).
RESTING: Final = frozenset({"awaiting_user_input", "stopped", "error", "paused",
                            "rejected", "finished"})


def read_v0(items: list[dict[str, Any]], run: RunBuilder, line: int | None = None,
            records: list[str] | None = None) -> list[LedgerEvent]:
    """The events of one V0 event list; each event's origin is its `records` entry (a
    session's event file) or its id."""
    actions: dict[str, dict[str, Any]] = {}
    seen_responses: set[str] = set()
    itemised = [0, 0]  # prompt and completion tokens of the responses read so far
    counted: dict[str, Any] | None = None  # OpenHands' running token total, the latest
    last_cost = 0.0
    finished: str | None = None
    state: tuple[str, str] | None = None
    ts = None
    for index, item in enumerate(items):
        record = records[index] if records else (
            f"id {item.get('id')}" if item.get("id") is not None else f"[{index}]")
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
                         "tokens_out": count(raw.get("completion_tokens")),
                         **_cache(raw)}
                itemised = [itemised[0] + (usage["tokens_in"] or 0),
                            itemised[1] + (usage["tokens_out"] or 0)]
                if response.get("model"):
                    payload["model"] = response["model"]
        metrics = item.get("llm_metrics")
        if isinstance(metrics, dict) and isinstance(metrics.get("accumulated_token_usage"),
                                                    dict):
            counted = metrics["accumulated_token_usage"]
        if isinstance(metrics, dict) and priced(metrics):
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
                  summary=short(item.get("message")), duration_ms=ms(begun, ts),
                  payload={**payload, "observation": observation, "cause": cause})
    _unlogged(run, itemised, counted, line)
    if finished is None and state is not None and state[0] in RESTING:
        finished = state[0]
    if finished is not None:
        run.add("finish", ts, line=line, record="(end of list)", verdict=finished)
    return run.events


def _cache(usage: dict[str, Any]) -> dict[str, int | None]:
    """The cache tokens of a response's usage as LiteLLM reports them (and OpenHands
    totals them): read = ``prompt_tokens_details.cached_tokens`` (or Anthropic's
    ``cache_read_input_tokens``), written = ``cache_creation_input_tokens``."""
    details = usage.get("prompt_tokens_details")
    read = details.get("cached_tokens") if isinstance(details, dict) else None
    if read is None:
        read = usage.get("cache_read_input_tokens")
    return {"cache_read": count(read),
            "cache_write": count(usage.get("cache_creation_input_tokens"))}


def _unlogged(run: RunBuilder, itemised: list[int], counted: dict[str, Any] | None,
              line: int | None) -> None:
    """A ``usage`` note (flagged ``payload.totals``: no call of its own) with the tokens
    OpenHands' running total (`counted`, the last ``llm_metrics.accumulated_token_usage``)
    holds beyond the responses the list itemises: calls it made without an event in the
    list (a download leaves some events out), so the run's tokens equal OpenHands' own.
    Their cost is already in the running cost's rises."""
    if counted is None:
        return
    extra = [max((count(counted.get(key)) or 0) - seen, 0)
             for key, seen in zip(("prompt_tokens", "completion_tokens"), itemised,
                                  strict=True)]
    if not any(extra):
        return
    last = run.events[-1].ts if run.events else None
    run.add("note", last, line=line, record="(end of list)", stage="usage",
            summary="tokens OpenHands counted for calls the list holds no event of",
            tokens_in=extra[0], tokens_out=extra[1], payload={TOTALS_KEY: True})
