"""OpenHands event lists (a trajectory saved from the UI or by its tests: a JSON list of
events with ``id``, ``timestamp``, ``source`` and ``action`` or ``observation``).

=============================  ================================================
OpenHands                      crewbook event
=============================  ================================================
action (message, run, edit…)   ``act``: role = ``source`` (agent, user,
                               environment), stage = the action
observation with a ``cause``   ``report``: role and stage of its action,
                               verdict ``failed`` (``success`` false, or an
                               ``error`` observation) else ``done``,
                               duration_ms = its time minus the action's
observation without a cause    ``transition``: stage = ``extras.agent_state``
(agent_state_changed)
end of the list                ``finish``: verdict ``finished`` after a
                               ``finish`` action, else the last agent state
                               when it is a resting one (awaiting_user_input,
                               stopped, error, paused, rejected); none while
                               the agent was still running
=============================  ================================================

Tokens: ``tool_call_metadata.model_response.usage`` (prompt/completion tokens). OpenHands
copies one model response onto every event it caused (the action, its observation,
each tool call of a parallel batch): the usage is counted once, on the first event
carrying that response id; the later copies keep ``payload.model_response`` only.
Cost: ``llm_metrics.accumulated_cost`` when the events carry it (a running total, so an
event's cost is the change since the previous one). Times have no offset: read as UTC.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from ..events import LedgerEvent
from ._common import RunBuilder, count, load_log, short, utc

SOURCE: Final = "openhands"
#: Agent states in which a run rests (its last state, when no finish action came).
RESTING: Final = frozenset({"awaiting_user_input", "stopped", "error", "paused",
                            "rejected", "finished"})


def looks_like(value: Any) -> bool:
    """Whether a parsed JSON value is an OpenHands event list."""
    if isinstance(value, dict) and isinstance(value.get("events"), list):
        value = value["events"]
    return (isinstance(value, list) and bool(value) and all(
        isinstance(e, dict) and "id" in e and "timestamp" in e and "source" in e
        and ("action" in e or "observation" in e) for e in value[:20]))


def import_file(path: Path, shown: str) -> list[LedgerEvent]:
    """The events of one OpenHands event list (one run, named after the file)."""
    value = load_log(path, shown, "import_bad_openhands", looks_like,
                     "not an OpenHands event list: expected a JSON list of objects with "
                     "id, timestamp, source and action or observation")
    items: list[dict[str, Any]] = value["events"] if isinstance(value, dict) else value
    run = RunBuilder(SOURCE, SOURCE, path.stem, shown)
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
        if isinstance(metrics, dict) and isinstance(
                metrics.get("accumulated_cost"), int | float):
            total = float(metrics["accumulated_cost"])
            usage["cost"] = max(total - last_cost, 0.0)
            last_cost = max(total, last_cost)
        role = str(item.get("source") or "unknown")
        if "action" in item:
            action = str(item["action"])
            actions[str(item.get("id"))] = {"role": role, "stage": action, "ts": ts}
            if action == "finish":
                finished = "finished"
            run.add("act", ts, record=record, role=role, stage=action,
                    summary=short(item.get("message")), payload=payload, **usage)
            continue
        observation = str(item.get("observation"))
        cause = item.get("cause")
        extras: dict[str, Any] = item["extras"] if isinstance(item.get("extras"), dict) else {}
        if cause is None:
            agent_state = extras.get("agent_state")
            if isinstance(agent_state, str):
                state = (agent_state, record)
            run.add("transition", ts, record=record, stage=str(agent_state or observation),
                    payload={**payload, "observation": observation}, **usage)
            continue
        act = actions.get(str(cause), {})
        begun = act.get("ts")
        duration = (int((ts - begun).total_seconds() * 1000)
                    if ts is not None and begun is not None and ts >= begun else None)
        failed = observation == "error" or item.get("success") is False
        run.add("report", ts, record=record, role=act.get("role", role),
                stage=act.get("stage", observation), verdict="failed" if failed else "done",
                summary=short(item.get("message")), duration_ms=duration,
                payload={**payload, "observation": observation, "cause": cause}, **usage)
    if finished is None and state is not None and state[0] in RESTING:
        finished = state[0]
    if finished is not None:
        run.add("finish", ts, record="(end of list)", verdict=finished)
    return run.events
