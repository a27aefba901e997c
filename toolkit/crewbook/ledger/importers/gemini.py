"""Gemini CLI sessions (``~/.gemini/tmp/<project hash>/chats/session-*.json`` or, from
2026, ``.jsonl``). One run per file, named after its ``sessionId``.

=====================================  ==========================================
Gemini CLI                             crewbook event
=====================================  ==========================================
the session (``sessionId``,            ``init`` at ``startTime`` (payload:
``projectHash``, ``startTime``)        session_id, project_hash, kind)
a ``user`` message                     ``act``: role ``user``, stage ``prompt``
                                       (or the ``/command`` it starts with)
a ``gemini`` message                   ``report``: **one per model call**, role
                                       ``assistant``, stage ``model``; tokens from
                                       ``tokens`` (below), payload.model
each of its ``toolCalls``              a tool call: role ``assistant``, stage = the
                                       tool name, verdict = its ``status``,
                                       duration from the reply to its result
``info``, ``warning`` messages         ``note``, stage = the type
an ``error`` message                   ``error``
any other type                         ``note`` with ``payload.unknown_type``
the last time in the file              ``finish``: verdict ``session_end`` (Gemini
                                       CLI records no outcome)
=====================================  ==========================================

Tokens: ``tokens_in`` = ``input`` + ``tool`` (the prompt, cached part included, and the
tool-use prompt), ``tokens_out`` = ``output`` + ``thoughts`` (thinking is billed as
output); ``cached`` goes to ``payload.cache_read_tokens`` so the price table bills it at
its own rate. The file gives no cost: it is estimated (provider ``google``).

The JSON Lines form writes a header line (the session's fields), one line per message,
``{"$set": {...}}`` lines that update the header, and writes a message again (same
``id``) when its tool calls finish: the last copy of a message is the one read, at the
place its first copy had. Times are the messages' own; a tool call's time is its own
``timestamp``, written when its result is recorded (the calls of one reply share it: Gemini
CLI records a batch of calls at once), and its ``duration_ms`` runs from the reply's
``timestamp`` to it. A tool call without ``timestamp`` (older files) is at its reply's
time, with no duration.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ...errors import LedgerError, Problem
from ..events import LedgerEvent
from ._common import (
    RunBuilder,
    count,
    head_objects,
    model_call,
    read_json,
    short,
    stage_name,
    stream_lines,
    tool_call,
    utc,
)

if TYPE_CHECKING:
    from . import Sniff

SOURCE: Final = "gemini-cli"
CODE: Final = "import_bad_gemini_cli"
#: The header fields that say a JSON object is a Gemini CLI session.
HEADER: Final = ("sessionId", "projectHash")
#: Message types kept as notes (known, with no crewbook equivalent).
NOTES: Final = ("info", "warning")


def _is_header(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(value.get(k), str) for k in HEADER)


def looks_like(value: Any) -> bool:
    """Whether a parsed JSON value is a whole Gemini CLI session (the JSON form)."""
    return _is_header(value) and isinstance(value.get("messages"), list)


def looks_like_lines(head: str) -> bool:
    """Whether a text starts like the JSON Lines form: a header line without ``type``."""
    first = next(head_objects(head), None)
    return _is_header(first) and "type" not in (first or {}) and "messages" not in (first or {})


def detects(sniff: Sniff) -> bool:
    """Whether a sniffed file is a Gemini CLI session, in either form."""
    if sniff.is_dir:
        return False
    return looks_like(sniff.value) or looks_like_lines(sniff.text)


def import_file(path: Path, shown: str) -> list[LedgerEvent]:
    """The events of one session file."""
    head: dict[str, Any]
    messages: list[tuple[int | None, str | None, dict[str, Any]]]
    try:
        with path.open("rb") as handle:
            start = handle.read(1 << 16).lstrip()
    except OSError as exc:
        raise LedgerError(f"cannot import {shown}", [Problem(
            CODE, f"cannot read it: {exc.strerror or exc}", shown)]) from None
    whole = read_json(path, CODE) if start.startswith(b"{") and not _lines(start) else None
    if whole is not None:
        if not looks_like(whole):
            raise LedgerError(f"cannot import {shown}", [Problem(
                CODE, "not a Gemini CLI session: expected a JSON object with sessionId, "
                "projectHash and messages", shown)])
        head = {k: v for k, v in whole.items() if k != "messages"}
        messages = [(None, f"messages[{i}]", m) for i, m in enumerate(whole["messages"])
                    if isinstance(m, dict)]
    else:
        head, messages = _read_lines(path, shown)
    return _events(head, messages, shown)


def _lines(start: bytes) -> bool:
    """Whether a file's start is a complete JSON object followed by another line."""
    first, _, rest = start.partition(b"\n")
    try:
        json.loads(first)
    except ValueError:
        return False
    return bool(rest.strip())


def _read_lines(path: Path, shown: str
                ) -> tuple[dict[str, Any], list[tuple[int | None, str | None, dict[str, Any]]]]:
    """The header (with its ``$set`` updates) and the messages of the JSON Lines form,
    each message's last copy at its first copy's place."""
    head: dict[str, Any] | None = None
    first: dict[str, int] = {}  # a message's place: the line of its first copy
    latest: dict[str, tuple[int, dict[str, Any]]] = {}
    others: list[tuple[int, dict[str, Any]]] = []
    for number, raw in stream_lines(path, shown, CODE):
        try:
            value = json.loads(raw)
        except ValueError as exc:
            raise LedgerError(f"cannot import {shown}", [Problem(
                CODE, f"not JSON: {exc}", shown, number)]) from None
        if head is None:
            if not (_is_header(value) and "type" not in value):
                raise LedgerError(f"cannot import {shown}", [Problem(
                    CODE, "not a Gemini CLI session: its first line should hold the "
                    "session's sessionId and projectHash", shown, number)])
            head = dict(value)
            continue
        if isinstance(value, dict) and isinstance(value.get("$set"), dict):
            head.update(value["$set"])
            continue
        if isinstance(value, dict) and isinstance(value.get("id"), str) and "type" in value:
            first.setdefault(value["id"], number)
            latest[value["id"]] = (number, value)
            continue
        others.append((number, value if isinstance(value, dict) else {"json": value}))
    if head is None:
        raise LedgerError(f"cannot import {shown}", [Problem(
            CODE, "the file holds no line", shown)])
    placed: list[tuple[int, int | None, str | None, dict[str, Any]]] = [
        (first[i], line, i, value) for i, (line, value) in latest.items()]
    placed += [(n, n, None, v) for n, v in others]
    placed.sort(key=lambda m: m[0])
    return head, [(line, record, value) for _, line, record, value in placed]


def _events(head: dict[str, Any], messages: list[tuple[int | None, str | None,
                                                        dict[str, Any]]],
            shown: str) -> list[LedgerEvent]:
    session = str(head["sessionId"])
    run = RunBuilder(SOURCE, SOURCE, session, shown)
    started = utc(head.get("startTime"))
    run.add("init", started, record="sessionId", summary="Gemini CLI session",
            payload={"session_id": session, "project_hash": head.get("projectHash"),
                     "kind": head.get("kind")})
    last: datetime | None = started
    for line, record, message in messages:
        ts = utc(message.get("timestamp"))
        where: dict[str, Any] = {"line": line, "record": record}
        kind = message.get("type")
        if kind == "user":
            text = _text(message.get("content"))
            command = text.strip().split()[0] if text.strip().startswith("/") else None
            run.add("act", ts, **where, role="user", stage=stage_name(command) or "prompt",
                    summary=short(text))
        elif kind == "gemini":
            tokens: dict[str, Any] = (message["tokens"] if isinstance(message.get("tokens"), dict)
                                      else {})
            model = message.get("model")
            model_call(run, ts, **where, role="assistant",
                       model=model if isinstance(model, str) and model else None,
                       summary=short(_text(message.get("content"))),
                       tokens_in=_sum(tokens, "input", "tool"),
                       tokens_out=_sum(tokens, "output", "thoughts"),
                       cache_read=count(tokens.get("cached")),
                       payload={"provider": "google",
                                "thoughts_tokens": count(tokens.get("thoughts"))})
            calls = message.get("toolCalls")
            for index, call in enumerate(calls if isinstance(calls, list) else ()):
                if not isinstance(call, dict):
                    continue
                when = utc(call.get("timestamp"))
                last = max((t for t in (last, when) if t is not None), default=None)
                tool_call(run, when or ts, line=line,
                          record=f"{record}.toolCalls[{index}]", role="assistant",
                          tool=call.get("name"), verdict=_verdict(call.get("status")),
                          duration_ms=_ms(ts, when), payload={"call_id": call.get("id")})
        elif kind == "error":
            run.add("error", ts, **where, stage="error", summary=short(_text(
                message.get("content"))) or "error")
        elif kind in NOTES:
            run.add("note", ts, **where, stage=str(kind),
                    summary=short(_text(message.get("content"))))
        else:
            name = stage_name(kind) or "json"
            run.add("note", ts, **where, stage=name, payload={"unknown_type": name})
        last = max((t for t in (last, ts) if t is not None), default=None)
    ended = utc(head.get("lastUpdated"))
    end = max((t for t in (last, ended) if t is not None), default=None)
    run.add("finish", end, record="lastUpdated", verdict="session_end",
            summary="end of the session file (Gemini CLI records no outcome)")
    return run.events


def _ms(asked: datetime | None, done: datetime | None) -> int | None:
    """A tool call's duration: from the reply that asked for it (the message's
    ``timestamp``) to its own ``timestamp``, written when its result was recorded; None
    when either is missing or the result is dated before the reply."""
    if asked is None or done is None or done < asked:
        return None
    return round((done - asked).total_seconds() * 1000)


def _text(content: Any) -> str:
    """A message's text: a string, or the ``text`` parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content
                         if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _sum(tokens: dict[str, Any], *keys: str) -> int | None:
    """The sum of the token counts named (None when the message records none of them)."""
    found = [count(tokens.get(k)) for k in keys]
    known = [n for n in found if n is not None]
    return sum(known) if known else None


def _verdict(status: Any) -> str | None:
    """A tool call's verdict from its ``status`` (``success`` → ``done``)."""
    name = stage_name(status)
    return "done" if name == "success" else name
