"""SWE-agent trajectories (``.traj``: a JSON object with ``trajectory`` and ``info``).

===============================  ==============================================
SWE-agent                        crewbook event
===============================  ==============================================
the file                         ``init`` (payload: the environment, the model
                                 stats' api_calls)
``trajectory[i]`` (or, in a      two events: the model call that wrote it
history-only file, each          (``report``: role ``agent``, stage ``model``,
``assistant`` message)           summary = the thought) and, when the step has an
                                 ``action``, the tool call it ran (``report``:
                                 stage = the command, its first word; summary =
                                 the action; duration_ms = ``execution_time``
                                 when recorded)
``info.exit_status``             ``finish``: verdict = the exit status (e.g.
                                 ``submitted``, ``exit_cost``), carrying the
                                 run's tokens and cost from ``info.model_stats``
===============================  ==============================================

A trajectory has no clock: every `ts` is null, so a run has no start, end or duration
(never 0); steps keep their measured ``execution_time``. It records no tokens per step:
``model_stats`` (``tokens_sent``, ``tokens_received``, ``instance_cost``) are the run's
totals, put on its ``finish`` event (flagged ``payload.totals``: no model call of its
own) so per-run sums equal SWE-agent's own figures.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ...errors import LedgerError, Problem
from ..calls import TOTALS_KEY
from ..events import LedgerEvent
from ._common import RunBuilder, count, load_log, model_call, short, tool_call

if TYPE_CHECKING:
    from . import Sniff

SOURCE: Final = "swe-agent"
ROLE: Final = "agent"


def looks_like(value: Any) -> bool:
    """Whether a parsed JSON value is a SWE-agent trajectory: a ``trajectory`` list with
    ``info`` or ``history``, or (the ``function_calling_simple`` demonstrations) only a
    ``history`` of messages with ``role`` and ``agent``."""
    if not isinstance(value, dict):
        return False
    if isinstance(value.get("trajectory"), list):
        return "info" in value or "history" in value
    history = value.get("history")
    return (isinstance(history, list) and bool(history) and "messages" not in value
            and all(isinstance(m, dict) and "role" in m and "agent" in m
                    for m in history[:20]))


def detects(sniff: Sniff) -> bool:
    """Whether a sniffed file is a SWE-agent trajectory."""
    return not sniff.is_dir and looks_like(sniff.value)


def import_file(path: Path, shown: str) -> list[LedgerEvent]:
    """The events of one trajectory (one run, named after the file)."""
    value = load_log(path, shown, "import_bad_swe_agent", looks_like,
                     "not a SWE-agent trajectory: expected a JSON object with a "
                     "'trajectory' list and 'info', or a 'history' of messages")
    info: dict[str, Any] = value["info"] if isinstance(value.get("info"), dict) else {}
    stats: dict[str, Any] = (info["model_stats"] if isinstance(info.get("model_stats"), dict)
                             else {})
    run = RunBuilder(SOURCE, SOURCE, path.stem, shown)
    run.add("init", None, record="info", payload={
        "environment": value.get("environment"), "api_calls": stats.get("api_calls")},
        summary=f"SWE-agent trajectory {path.stem}")
    steps = value.get("trajectory")
    where = "trajectory"
    if not isinstance(steps, list):
        where = "history(assistant)"  # history only: each assistant message is a step
        steps = [m for m in value["history"] if isinstance(m, dict)
                 and m.get("role") == "assistant"]
    for index, step in enumerate(steps):
        if not isinstance(step, dict):
            raise LedgerError(f"cannot import {shown}", [Problem(
                "import_bad_swe_agent", "each trajectory step must be a JSON object", shown,
                key=f"{where}[{index}]")])
        action: str = step["action"] if isinstance(step.get("action"), str) else ""
        words = action.split()
        record = f"{where}[{index}]"
        # a step is one model call (the thought and the action it wrote) and, when it
        # wrote an action, one tool call (the command run, timed by execution_time)
        model_call(run, None, record=record, role=ROLE,
                   summary=short(step.get("thought")) or short(action))
        if words:
            tool_call(run, None, record=record, role=ROLE, tool=words[0], verdict="done",
                      summary=short(action), duration_ms=_ms(step.get("execution_time")),
                      payload={"action": short(action)})
    status = info.get("exit_status")
    if isinstance(status, str) and status:
        cost = stats.get("instance_cost")
        run.add("finish", None, record="info.exit_status", role=ROLE, verdict=status,
                tokens_in=count(stats.get("tokens_sent")),
                tokens_out=count(stats.get("tokens_received")),
                cost=float(cost) if isinstance(cost, int | float) and cost >= 0 else None,
                payload={"model_stats": stats, TOTALS_KEY: True})
    return run.events


def _ms(value: Any) -> int | None:
    """``execution_time`` (seconds, a number or a numeric text) in ms, else None."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return round(seconds * 1000) if 0 <= seconds < 1e15 else None  # NaN, inf: None
