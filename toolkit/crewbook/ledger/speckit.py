"""Import spec-kit workflow runs (``.specify/workflows/runs/<run_id>/``) as ledger events.

spec-kit's workflow engine keeps, per run, ``state.json`` (run_id, workflow_id,
status, inputs, created_at, step_results...) and ``log.jsonl``: one object per line
with ``event`` and ``timestamp`` (and ``step_id``, ``type``, ``status``, ``error``).
The mapping (documented in docs/ledger.md):

=========================  =====================================================
spec-kit                   crewbook event
=========================  =====================================================
state.json                 ``init`` at ``created_at`` (payload: workflow, inputs)
step_started               ``act``: stage = step_id, role from the step type,
                           attempt = how many times the step started so far
step_completed             ``report``: verdict = status (completed, failed,
                           paused, skipped), duration_ms since its start
step_failed                ``error``: verdict ``failed``, summary = error
step_continue_on_error     ``error``: verdict ``continued``
workflow_aborted           ``error``: verdict ``aborted``
workflow_finished          ``finish`` (verdict = status), or ``pause`` when the
                           status is ``paused`` (a gate waits for a person)
workflow_failed,           ``finish``: verdict ``failed``, summary = error
resume_failed
workflow_interrupted       ``pause``: verdict ``interrupted``
anything else              ``note`` (the whole entry in payload)
=========================  =====================================================

Roles: command and prompt steps → ``agent``, gate → ``human``, shell → ``shell``,
control flow (if, switch, while, fan-out, workflow...) → ``engine``. The loop is
``spec-kit``; every payload keeps the original ``event`` name and extra fields.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from pydantic import ValidationError

from ..errors import LedgerError, Problem
from .events import LedgerEvent, validation_problems

LOOP: Final = "spec-kit"
ROLE_OF_STEP_TYPE: Final[dict[str, str]] = {
    "command": "agent", "prompt": "agent", "gate": "human", "shell": "shell",
}
_KNOWN_KEYS: Final = frozenset({"event", "timestamp", "step_id", "status", "error", "type"})


def find_speckit_runs(path: str | os.PathLike[str]) -> list[Path]:
    """Run folders under `path`: a run folder itself, a ``runs/`` folder, or a project."""
    root = Path(path)
    if _is_run(root):
        return [root]
    for runs in (root / ".specify" / "workflows" / "runs", root / "workflows" / "runs", root):
        if runs.is_dir():
            found = sorted(p for p in runs.iterdir() if _is_run(p))
            if found:
                return found
    return []


def speckit_events(run_dir: str | os.PathLike[str]) -> list[LedgerEvent]:
    """The events of one spec-kit run folder; raises `LedgerError` listing every bad line.

    A cut last line of ``log.jsonl`` is left out (it is not an error); use
    `read_ledger` or `validate_ledger` to see it reported.
    """
    events, problems = speckit_run(Path(run_dir))
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise LedgerError(f"cannot import the spec-kit run {run_dir}", errors)
    return events


def speckit_run(run_dir: Path) -> tuple[list[LedgerEvent], list[Problem]]:
    """Events and problems of one run folder (the work behind `speckit_events`)."""
    problems: list[Problem] = []
    state_path, log_path = run_dir / "state.json", run_dir / "log.jsonl"
    state = _read_state(state_path, problems)
    entries = _read_log(log_path, problems)
    if state is None:
        return [], problems
    mapper = _Mapper(run_dir, state, str(log_path))
    for line, entry in entries:
        mapper.add(line, entry, problems)
    return mapper.events, problems


def _is_run(path: Path) -> bool:
    return (path / "log.jsonl").is_file() and (path / "state.json").is_file()


def _read_state(path: Path, problems: list[Problem]) -> dict[str, Any] | None:
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        problems.append(Problem("speckit_bad_state", f"cannot read state.json: {exc}",
                                str(path)))
        return None
    if not isinstance(state, dict):
        problems.append(Problem("speckit_bad_state", "state.json must hold a JSON object",
                                str(path)))
        return None
    return state


def _read_log(path: Path, problems: list[Problem]) -> list[tuple[int, dict[str, Any]]]:
    from .lines import BAD_EVENT, BAD_JSON, cut_short, truncated

    try:
        data = path.read_bytes()
    except OSError as exc:
        problems.append(Problem("unreadable", f"cannot read log.jsonl: {exc.strerror}",
                                str(path)))
        return []
    lines = data.split(b"\n")
    entries: list[tuple[int, dict[str, Any]]] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            if cut_short(raw):  # a crash mid-write, as in crewbook ledgers: a warning
                problems.append(truncated(str(path), number, last=number == len(lines)))
            else:
                problems.append(Problem(BAD_JSON, f"not JSON: {exc}", str(path), number))
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("event"), str) \
                or not isinstance(entry.get("timestamp"), str):
            problems.append(Problem(BAD_EVENT, "a spec-kit log entry is an object with "
                                    "'event' and 'timestamp' texts", str(path), number))
            continue
        entries.append((number, entry))
    return entries


def _parse_ts(text: str) -> datetime:
    ts = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)


class _Mapper:
    """Turns log entries into events, remembering step starts and types."""

    def __init__(self, run_dir: Path, state: dict[str, Any], name: str) -> None:
        self.name = name
        self.run = str(state.get("run_id") or run_dir.name)
        self.results: dict[str, Any] = state.get("step_results") or {}
        self.events: list[LedgerEvent] = []
        self.starts: dict[str, int] = {}
        self.started_at: dict[str, datetime] = {}
        self.types: dict[str, str] = {}
        created = state.get("created_at")
        self.init = {
            "kind": "init", "summary": f"spec-kit workflow {state.get('workflow_id', '?')}",
            "payload": {"workflow": state.get("workflow_id"), "inputs": state.get("inputs", {}),
                        "status": state.get("status")},
        }
        if isinstance(created, str) and created:
            self._emit(created, self.init)
            self.init = {}

    def _emit(self, ts: str | datetime, fields: dict[str, Any], line: int | None = None,
              problems: list[Problem] | None = None) -> None:
        data = {"ts": ts, "run": self.run, "seq": len(self.events), "loop": LOOP, **fields}
        try:
            self.events.append(LedgerEvent.model_validate(data))
        except ValidationError as exc:
            if problems is not None:
                problems.extend(validation_problems(exc, path=self.name, line=line))

    def add(self, line: int, entry: dict[str, Any], problems: list[Problem]) -> None:
        try:
            ts = _parse_ts(entry["timestamp"])
        except ValueError:
            problems.append(Problem("ledger_bad_event", f"timestamp {entry['timestamp']!r} "
                                    "is not ISO-8601", self.name, line, key="timestamp"))
            return
        if self.init:  # no created_at in state.json: start at the first entry
            self._emit(ts, self.init)
            self.init = {}
        self._emit(ts, self._map(entry, ts), line, problems)

    def _map(self, entry: dict[str, Any], ts: datetime) -> dict[str, Any]:
        event: str = entry["event"]
        step = entry.get("step_id")
        extra = {k: v for k, v in entry.items() if k not in _KNOWN_KEYS}
        payload: dict[str, Any] = {"event": event, **extra}
        error = entry.get("error")
        status = entry.get("status")
        if not isinstance(step, str):
            if event == "workflow_finished" and status == "paused":
                return {"kind": "pause", "verdict": "paused", "payload": payload}
            if event == "workflow_finished":
                return {"kind": "finish", "verdict": str(status or "completed"),
                        "payload": payload}
            if event in ("workflow_failed", "resume_failed"):
                return {"kind": "finish", "verdict": "failed", "payload": payload,
                        "summary": str(error or event)}
            if event == "workflow_interrupted":
                return {"kind": "pause", "verdict": "interrupted", "payload": payload}
            return {"kind": "note", "summary": event, "payload": payload}
        if event == "step_started":
            self.starts[step] = self.starts.get(step, 0) + 1
            self.started_at[step] = ts
            self.types[step] = str(entry.get("type") or "command")
            result = self.results.get(step) or {}
            if self.types[step] in ("command", "prompt") and isinstance(result, dict):
                payload.update({k: result[k] for k in ("integration", "model") if result.get(k)})
            payload["type"] = self.types[step]
        role = ROLE_OF_STEP_TYPE.get(self.types.get(step, "command"), "engine")
        common = {"role": role, "stage": step, "attempt": self.starts.get(step, 1),
                  "payload": payload}
        if event == "step_started":
            return {"kind": "act", **common}
        if event == "step_completed":
            begun = self.started_at.get(step)
            duration = int((ts - begun).total_seconds() * 1000) if begun else None
            result = self.results.get(step) or {}
            output = result.get("output") if isinstance(result, dict) else None
            if status == "completed" and isinstance(output, dict) and "choice" in output:
                payload["choice"] = output["choice"]
            return {"kind": "report", "verdict": str(status or "completed"),
                    "duration_ms": max(duration, 0) if duration is not None else None,
                    **common}
        verdicts = {"step_failed": "failed", "step_continue_on_error": "continued",
                    "workflow_aborted": "aborted"}
        if event in verdicts:
            return {"kind": "error", "verdict": verdicts[event],
                    "summary": str(error or event), **common}
        return {"kind": "note", "summary": event, **common}
