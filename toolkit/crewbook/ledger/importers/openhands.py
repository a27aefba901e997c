"""OpenHands run logs: the V0 event lists, the agent-SDK (V1) event streams and
conversation folders, and the evaluation ``output.jsonl``. docs/importers.md has the
whole mapping; in short:

V0 (a JSON list of events with ``id``, ``timestamp``, ``source`` and ``action`` or
``observation``, bare or as ``{"trajectory": [...]}``, or a session folder of the file
store, one event per file ``events/<id>.json``): an action is an ``act`` (stage: the
action), an observation with a ``cause`` the tool call of its action (duration: its time
minus the action's), an observation without one a ``transition`` (stage: the agent
state). Each model response not seen before (``tool_call_metadata.model_response``, its
usage counted once per response id) is a model call; cost from
``llm_metrics.accumulated_cost`` (a running total: a model call's cost is its rise),
unless no call was priced (`priced`); tokens the running token total holds beyond the
responses go on a ``usage`` note.

SDK / V1 (events with ``kind``: ``ActionEvent``, ``ObservationEvent``, ``MessageEvent``…,
as a JSON list, ``{"items": [...]}``, JSON Lines, one event per file, or a conversation
folder ``base_state.json`` + ``events/``): one model call per response (the actions and
agent messages sharing an ``llm_response_id``; stage ``model``), one tool call per tool
call (stage: ``tool_name``; duration: its observation's time minus the action's), user
messages, system prompts and condensations as ``note``, agent errors as ``error``,
execution-status updates as ``transition``. Tokens, cost, latency and model per call come
from the conversation's ``stats`` (``usage_to_metrics.*.token_usages``, by
``response_id``), in ``base_state.json`` or the last ``stats`` state update.

The V0 reader is `openhands_v0`, the SDK reader `openhands_sdk`, the usage they share
`openhands_usage`; this module detects the forms and reads files, folders and lines.

An evaluation ``output.jsonl`` holds one instance per line (``instance_id``, ``history``,
``metrics``; OpenDevin's: the benchmark's key, ``id`` or ``question_id``, and ``[action,
observation]`` pairs): each is a run named after its instance, its history read as above.

Events of a kind not listed are kept as ``note`` with ``payload.unknown_type``. Times
have no offset: read as UTC. ``stage`` is always a short name (`STAGE_CHARS` at most).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ...errors import LedgerError, Problem
from ..events import LedgerEvent
from ._common import MAX_BYTES, RunBuilder, read_json
from .openhands_sdk import NOTES, RESTING_V1, read_sdk
from .openhands_usage import CODE, SOURCE, totals
from .openhands_v0 import RESTING, read_v0

if TYPE_CHECKING:
    from . import Sniff

__all__ = ["CODE", "NOTES", "RESTING", "RESTING_V1", "SOURCE", "detects", "find_conversations",
           "import_file", "is_conversation", "looks_like"]


# -- detection -------------------------------------------------------------------------


def _v0_items(value: Any) -> Any:
    """The event list a V0 log holds: the value itself, or its ``events``, or its
    ``trajectory`` (the form OpenHands' trajectory download writes)."""
    if isinstance(value, dict):
        for key in ("events", "trajectory"):
            if isinstance(value.get(key), list):
                return value[key]
    return value


def looks_like(value: Any) -> bool:
    """Whether a parsed JSON value is a V0 OpenHands event list."""
    value = _v0_items(value)
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


#: The keys an evaluation line names its instance by: ``instance_id``, or (OpenDevin's
#: evaluations, 2024) the benchmark's own key (ProntoQA's ``id``, Gorilla's
#: ``question_id``).
_INSTANCE_KEYS: Final = ("instance_id", "id", "question_id")


def _instance(value: Any) -> bool:
    """Whether a value is one evaluation instance: ``instance_id`` and ``history``, or (as
    OpenDevin's evaluations wrote them, 2024) another of `_INSTANCE_KEYS` and
    ``history`` beside an ``instruction`` or the run's ``metadata.agent_class``."""
    if not (isinstance(value, dict) and isinstance(value.get("history"), list)):
        return False
    if "instance_id" in value:
        return True
    metadata = value.get("metadata")
    return any(k in value for k in _INSTANCE_KEYS) and (
        "instruction" in value or (isinstance(metadata, dict) and "agent_class" in metadata))


def _instance_name(value: dict[str, Any]) -> str:
    """The name of an evaluation instance: its first `_INSTANCE_KEYS` value."""
    return str(next(value[k] for k in _INSTANCE_KEYS if k in value))


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
    """Whether a folder is an SDK conversation (``base_state.json`` and ``events/``) or
    a V0 session (`is_session`)."""
    return ((folder / "base_state.json").is_file() and (folder / "events").is_dir()) \
        or is_session(folder)


def _session_events(folder: Path) -> list[Path]:
    """The event files of a V0 session folder (``events/<id>.json``), by id."""
    events = folder / "events"
    if (folder / "base_state.json").exists() or not events.is_dir():
        return []
    return sorted((p for p in events.glob("*.json") if p.stem.isdigit()),
                  key=lambda p: int(p.stem))


def is_session(folder: Path) -> bool:
    """Whether a folder is a V0 session as OpenHands' file store keeps it
    (``sessions/<id>/``: one event per file, ``events/<id>.json``, beside
    ``metadata.json``): its first event file holds one V0 event."""
    return _v0_files(_session_events(folder))


def _v0_files(files: list[Path]) -> bool:
    """Whether the first of a session's event files holds one V0 event."""
    if not files:
        return False
    try:
        first = json.loads(files[0].read_bytes()[:MAX_BYTES])
    except (OSError, ValueError):
        return False
    return _v0_event(first)


def find_conversations(root: Path) -> list[Path]:
    """The SDK conversation and V0 session folders at or under `root`, sorted (the
    ``events/`` folder of a conversation designates its conversation)."""
    if is_conversation(root):
        return [root]
    if root.name == "events" and is_conversation(root.parent):
        return [root.parent]
    return sorted(p.parent for p in root.rglob("events")
                  if p.is_dir() and is_conversation(p.parent))


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
        files = _session_events(path)  # listed once: the check and the read share them
        return _session(path, shown, files) if _v0_files(files) else \
            _conversation(path, shown)
    if _is_lines(path):
        return _lines(path, shown)
    value = read_json(path, CODE)
    if looks_like(value):
        return read_v0(_v0_items(value), RunBuilder(SOURCE, SOURCE, path.stem, shown))
    events = _sdk_events(value)
    if events is not None:
        return read_sdk(events, RunBuilder(SOURCE, SOURCE, path.stem, shown), None)
    if _instance(value):
        return _eval(value, shown, None)
    raise LedgerError(f"cannot import {shown}", [Problem(
        CODE, "not an OpenHands log: expected a JSON list of events (id, timestamp, "
        "source, action/observation; or agent-SDK events with kind), an evaluation "
        "instance with instance_id (or OpenDevin's id, question_id) and history, or a "
        "conversation or session folder", shown)])


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
        out.extend(read_sdk([v for _, v in stream], run, None, [n for n, _ in stream]))
    return out


def _conversation(folder: Path, shown: str) -> list[LedgerEvent]:
    """An SDK conversation folder: ``base_state.json`` and one event per file."""
    state = read_json(folder / "base_state.json", CODE)
    state = state if isinstance(state, dict) else {}
    files = sorted((folder / "events").glob("event-*.json"))
    events = [read_json(f, CODE) for f in files]
    run = RunBuilder(SOURCE, SOURCE, str(state.get("id") or folder.name), shown)
    records = [f"events/{f.name}" for f in files]
    return read_sdk(events, run, state, records=records)


def _session(folder: Path, shown: str, files: list[Path]) -> list[LedgerEvent]:
    """A V0 session folder: its events, one per file, read as one V0 event list; the run
    is named after ``metadata.json``'s ``conversation_id`` (else the folder). Each event's
    origin names its file (`files`: `_session_events`)."""
    meta_path = folder / "metadata.json"
    meta = read_json(meta_path, CODE) if meta_path.is_file() else {}
    name = meta.get("conversation_id") if isinstance(meta, dict) else None
    run = RunBuilder(SOURCE, SOURCE, str(name or folder.name), shown)
    events = [read_json(f, CODE) for f in files]
    odd = [f for f, e in zip(files, events, strict=True) if not isinstance(e, dict)]
    if odd:
        raise LedgerError(f"cannot import {shown}", [Problem(
            CODE, "not an OpenHands event: a session's event file holds one JSON object "
            "(id, timestamp, source, action or observation); check the file", str(f))
            for f in odd])
    return read_v0(events, run, records=[f"events/{f.name}" for f in files])


def _eval(value: dict[str, Any], shown: str, line: int | None) -> list[LedgerEvent]:
    """One evaluation instance: its history as a run named after the instance."""
    history = _flat_history(value["history"])
    instance = _instance_name(value)
    run = RunBuilder(SOURCE, SOURCE, str(instance), shown)
    metrics = value["metrics"] if isinstance(value.get("metrics"), dict) else None
    if history and all(_sdk_event(e) for e in history[:20]):
        read_sdk(history, run, {"stats": {"usage_to_metrics": {"agent": metrics}}}
                 if metrics else None, line=line)
    else:
        read_v0([e for e in history if isinstance(e, dict)], run, line=line)
        if metrics and not any(e.cost is not None for e in run.events):
            # the history's calls already carry their tokens: only the cost is missing
            itemised = any(e.tokens_in is not None or e.tokens_out is not None
                           for e in run.events)
            totals(run, [metrics], line=line, record="metrics", tokens=not itemised)
    if not run.events:
        run.add("note", None, line=line, record="history", stage="empty",
                summary=f"instance {instance} has an empty history")
    return run.events
