"""mini-SWE-agent trajectories (``*.traj.json``: ``"trajectory_format":
"mini-swe-agent-1"``, ``messages`` and ``info``). One run per file, named after the
``instance_id`` when the file has one, else after the file.

==================================  ===========================================
mini-SWE-agent                      crewbook event
==================================  ===========================================
the file                            ``init`` (payload: model, mini_version)
an ``assistant`` message            a model call: role ``agent``, stage ``model``;
                                    tokens from ``extra.response.usage``, cost
                                    from ``extra.cost``, time from
                                    ``extra.timestamp`` (2.x writes them; 1.x
                                    writes none)
each command it runs                a tool call: stage = the tool (``bash``, or
                                    the command's first word), verdict from the
                                    observation's return code, duration = the
                                    observation's time minus the call's
``exit`` message / ``info``         ``finish``: verdict = ``info.exit_status``
==================================  ===========================================

``info.model_stats`` (``instance_cost``, ``api_calls``) are the run's totals: when the
messages carry no per-call cost (1.x), ``instance_cost`` goes on the ``finish`` event, so
a run's cost always equals mini-SWE-agent's own figure. Tokens are only known where 2.x
recorded them (never 0 for unknown).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..calls import TOTALS_KEY
from ..events import LedgerEvent
from ._common import RunBuilder, count, load_log, model_call, short, stage_name, tool_call

if TYPE_CHECKING:
    from . import Sniff

SOURCE: Final = "mini-swe-agent"
CODE: Final = "import_bad_mini_swe_agent"
#: Message roles read (assistant: the calls; system, user, tool: prompts and results;
#: exit: the end, read from ``info``); a message of any other role is a counted unknown.
KNOWN_ROLES: Final = frozenset({"system", "user", "assistant", "tool", "exit"})
#: The command block of a 1.x reply (```bash or ```mswea_bash_command).
BLOCK: Final = re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.DOTALL)
RETURNCODE: Final = re.compile(r"<returncode>(-?\d+)</returncode>")


def looks_like(value: Any) -> bool:
    """Whether a parsed JSON value is a mini-SWE-agent trajectory."""
    return (isinstance(value, dict) and isinstance(value.get("messages"), list)
            and isinstance(value.get("trajectory_format"), str)
            and value["trajectory_format"].startswith("mini-swe-agent"))


def detects(sniff: Sniff) -> bool:
    """Whether a sniffed file is a mini-SWE-agent trajectory."""
    return not sniff.is_dir and looks_like(sniff.value)


def _when(value: Any) -> datetime | None:
    """An epoch-seconds ``timestamp`` as UTC (None when missing or absurd)."""
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not 0 < value < 9e9:
        return None
    return datetime.fromtimestamp(value, UTC)


def import_file(path: Path, shown: str) -> list[LedgerEvent]:
    """The events of one trajectory."""
    value = load_log(path, shown, CODE, looks_like,
                     "not a mini-SWE-agent trajectory: expected a JSON object with "
                     "\"trajectory_format\": \"mini-swe-agent-1\" and 'messages'")
    info: dict[str, Any] = value["info"] if isinstance(value.get("info"), dict) else {}
    stats: dict[str, Any] = (info["model_stats"] if isinstance(info.get("model_stats"), dict)
                             else {})
    config: dict[str, Any] = info["config"] if isinstance(info.get("config"), dict) else {}
    model_cfg: dict[str, Any] = config["model"] if isinstance(config.get("model"), dict) else {}
    model = model_cfg.get("model_name") if isinstance(model_cfg.get("model_name"), str) else None
    name = value.get("instance_id") if isinstance(value.get("instance_id"), str) else None
    run = RunBuilder(SOURCE, SOURCE, name or path.name.split(".")[0], shown)
    messages = [m for m in value["messages"] if isinstance(m, dict)]
    first = next((_when(_extra(m).get("timestamp")) for m in messages
                  if _when(_extra(m).get("timestamp"))), None)
    run.add("init", first, record="info", summary=f"mini-SWE-agent trajectory {run.run}",
            payload={"model": model, "mini_version": info.get("mini_version"),
                     "api_calls": stats.get("api_calls")})
    results = {str(m.get("tool_call_id")): m for m in messages
               if m.get("role") == "tool" and m.get("tool_call_id") is not None}
    priced = False
    ts = first
    for index, message in enumerate(messages):
        record = f"messages[{index}]"
        extra = _extra(message)
        ts = _when(extra.get("timestamp")) or ts
        role = message.get("role")
        if not (isinstance(role, str) and role in KNOWN_ROLES):  # kept, marked, counted
            name = stage_name(role) or "message"
            run.add("note", ts, record=record, stage=name,
                    summary=short(message.get("content")), payload={"unknown_type": name})
        if message.get("role") != "assistant":
            continue
        response: dict[str, Any] = (extra["response"]
                                    if isinstance(extra.get("response"), dict) else {})
        usage: dict[str, Any] = response["usage"] if isinstance(response.get("usage"), dict) else {}
        cost = extra.get("cost")
        cost = float(cost) if isinstance(cost, int | float) and cost >= 0 else None
        priced = priced or cost is not None
        content = message.get("content") if isinstance(message.get("content"), str) else ""
        model_call(run, _when(extra.get("timestamp")), record=record, role="agent",
                   model=response.get("model") or model, summary=short(content), cost=cost,
                   tokens_in=count(usage.get("prompt_tokens")),
                   tokens_out=count(usage.get("completion_tokens")),
                   payload={"response_id": response.get("id")})
        for call_id, command, tool in _commands(message, extra):
            result = results.get(call_id) if call_id else _next_user(messages, index)
            rextra = _extra(result) if result else {}
            code = rextra.get("returncode")
            if code is None and result is not None:
                found = RETURNCODE.search(str(result.get("content") or ""))
                code = int(found.group(1)) if found else None
            verdict = None if code is None else ("done" if code == 0 else "failed")
            begun, ended = _when(extra.get("timestamp")), _when(rextra.get("timestamp"))
            duration = (round((ended - begun).total_seconds() * 1000)
                        if begun and ended and ended >= begun else None)
            tool_call(run, ended or begun, record=record, role="agent", tool=tool,
                      verdict=verdict, summary=short(command), duration_ms=duration,
                      payload={"tool_call_id": call_id, "returncode": code})
    status = info.get("exit_status")
    cost = stats.get("instance_cost")
    total = float(cost) if isinstance(cost, int | float) and cost >= 0 else None
    run.add("finish", ts, record="info.exit_status", verdict=stage_name(status) or "unknown",
            cost=None if priced else total,
            payload={"model_stats": stats, "submission": short(info.get("submission")),
                     **({} if priced else {TOTALS_KEY: True})})
    return run.events


def _extra(message: Any) -> dict[str, Any]:
    extra = message.get("extra") if isinstance(message, dict) else None
    return extra if isinstance(extra, dict) else {}


def _commands(message: dict[str, Any], extra: dict[str, Any]
              ) -> list[tuple[str | None, str, str]]:
    """(tool call id, command, tool) of each command a reply runs: 2.x ``actions`` and
    ``tool_calls``, else the 1.x command block of its text."""
    actions = extra.get("actions")
    if isinstance(actions, list) and actions:
        names = {str(c.get("id")): (c.get("function") or {}).get("name")
                 for c in message.get("tool_calls") or () if isinstance(c, dict)}
        return [(str(a.get("tool_call_id")) if a.get("tool_call_id") is not None else None,
                 str(a.get("command") or ""),
                 stage_name(names.get(str(a.get("tool_call_id")))) or "bash")
                for a in actions if isinstance(a, dict)]
    found = BLOCK.search(message.get("content") or "") if isinstance(
        message.get("content"), str) else None
    if found is None:
        return []
    command = found.group(1)
    return [(None, command, "bash")]


def _next_user(messages: list[dict[str, Any]], index: int) -> dict[str, Any] | None:
    """The message after a 1.x reply (its observation), when it is not the model's."""
    if index + 1 < len(messages) and messages[index + 1].get("role") in ("user", "tool"):
        return messages[index + 1]
    return None
