"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``): one run per
file, read line by line. Each line is ``{"timestamp", "type", "payload"}``.

=====================================  ==========================================
Codex line (``type`` / payload type)   crewbook event
=====================================  ==========================================
``session_meta``                       ``init`` (payload: session id, cwd, CLI
                                       version, originator, git branch)
``turn_context``                       ``note``, stage ``turn_context``; its
                                       ``model`` prices the calls after it
``response_item`` / ``message``        user: ``act``, role ``user``, stage
                                       ``prompt`` (``context`` for the injected
                                       AGENTS.md / environment text); assistant:
                                       ``note``, role ``assistant``, stage
                                       ``message``; developer: ``note``
``response_item`` / ``function_call``,  a tool call: role ``assistant``, stage = the
``custom_tool_call``,                   tool name (``shell``, ``apply_patch``…),
``local_shell_call``…                   duration_ms until the output with its
                                       ``call_id``, verdict ``error`` when the
                                       output's exit code is not 0
``event_msg`` / ``token_count``        ``report``: one per model call, role
                                       ``assistant``, stage ``model``, tokens
``event_msg`` / anything else,         ``note``, stage = the payload type (or the
``reasoning``, ``compacted``, and      line type), kept with its origin
any other line type
the last line with a time              ``finish``: verdict ``task_complete`` when
                                       the last task completed, else
                                       ``session_end``
=====================================  ==========================================

Tokens: a ``token_count`` carries the session's running ``total_token_usage``; a model
call's tokens are the change of that total since the previous one, so a session adds up
to its last total exactly and a repeated ``token_count`` (same total) counts nothing.
``tokens_in`` is ``input_tokens`` (cached included; ``payload.cache_read_tokens`` is
``cached_input_tokens``), ``tokens_out`` is ``output_tokens`` (reasoning included).
Codex logs no cost: `import_runs` estimates it (``payload.cost_estimate``).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from ..events import LedgerEvent
from ._common import LineLog, RunBuilder, count, head_objects, model_call, short, tool_call, utc

SOURCE: Final = "codex"
#: The kind of a record type this importer has no mapping for (kept, never dropped).
OTHER_KIND: Final = "note"
LINE_TYPES: Final = frozenset({"session_meta", "response_item", "event_msg", "turn_context",
                               "compacted"})
TOOL_CALLS: Final = frozenset({"function_call", "custom_tool_call", "local_shell_call",
                               "web_search_call", "tool_search_call"})
TOOL_OUTPUTS: Final = frozenset({"function_call_output", "custom_tool_call_output",
                                 "local_shell_call_output", "tool_search_output"})
#: ``response_item`` and ``event_msg`` types a rollout holds that are kept as notes
#: (known: not counted as unknown types).
KNOWN_ITEMS: Final = frozenset({"reasoning", "ghost_snapshot"})
KNOWN_EVENTS: Final = frozenset({
    "user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content",
    "task_started", "task_complete", "turn_aborted", "context_compacted",
    "entered_review_mode", "exited_review_mode", "undo_completed"})
#: Texts Codex injects as user messages (instructions, environment), not the user's words.
CONTEXT_PREFIXES: Final = ("<environment_context>", "# AGENTS.md", "<user_instructions>",
                           "<INSTRUCTIONS>", "<permissions", "<turn_aborted>")
USAGE_KEYS: Final = ("input_tokens", "cached_input_tokens", "output_tokens",
                     "reasoning_output_tokens")


def looks_like(head: str) -> bool:
    """Whether the first lines of a text are a Codex rollout."""
    return any(isinstance(v.get("type"), str) and v["type"] in LINE_TYPES
               and isinstance(v.get("payload"), dict) for v in head_objects(head))


def import_file(path: Path, shown: str) -> list[LedgerEvent]:
    """The events of one rollout file."""
    return _Rollout.read(path, shown)


class _Rollout(LineLog):
    """Collects one rollout's lines; `events` numbers them in file order."""

    CODE = "import_bad_codex"
    REFUSAL = ("not a Codex rollout: no line is a JSON object with a 'payload' and a "
               "'type' (session_meta, response_item, event_msg…)")
    OTHER_KIND = OTHER_KIND

    def __init__(self, shown: str, stem: str) -> None:
        super().__init__(shown, stem)
        self.model: str | None = None
        self.provider: str | None = None
        self.total: dict[str, int] = {}
        self.tools: dict[str, dict[str, Any]] = {}
        self.complete = False

    def feed_object(self, number: int, value: dict[str, Any]) -> None:
        kind = str(value.get("type") or "unknown")
        raw_payload = value.get("payload")
        payload: dict[str, Any] = raw_payload if isinstance(raw_payload, dict) else {}
        if kind in LINE_TYPES and isinstance(value.get("payload"), dict):
            self.seen = True
        ts = utc(value.get("timestamp"))
        self.timed(number, ts)
        sub = payload.get("type") if isinstance(payload.get("type"), str) else None
        if kind == "session_meta":
            self._meta(number, ts, payload)
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str) and payload["model"]:
                self.model = payload["model"]
            self.items.append((number, "other", ("turn_context", ts, {"model": self.model,
                                                                      "known": True})))
        elif kind == "response_item" and sub == "message":
            self._message(number, ts, payload)
        elif kind == "response_item" and sub in TOOL_CALLS:
            self._tool(number, ts, sub, payload)
        elif kind == "response_item" and sub in TOOL_OUTPUTS:
            self._output(number, ts, payload)
        elif kind == "event_msg" and sub == "token_count":
            self._tokens(number, ts, payload)
        else:
            if kind == "event_msg":
                self.complete = sub == "task_complete"
            stage = sub if kind in ("event_msg", "response_item") and sub else kind
            # known: Codex's own events, compaction, reasoning; anything else is counted
            extra: dict[str, Any] = {"known": kind == "compacted" or (
                kind == "event_msg" and sub in KNOWN_EVENTS) or (
                kind == "response_item" and sub in KNOWN_ITEMS)}
            if sub == "task_complete" and count(payload.get("duration_ms")) is not None:
                extra["duration_ms"] = payload["duration_ms"]
            text = payload.get("message") if isinstance(payload.get("message"), str) else None
            self.items.append((number, "other", (stage[:60], ts,
                                                 {"summary": short(text), **extra})))

    def _meta(self, number: int, ts: datetime | None, payload: dict[str, Any]) -> None:
        for key, name in (("id", "session_id"), ("cwd", "cwd"), ("cli_version", "version"),
                          ("originator", "originator"), ("model_provider", "provider"),
                          ("source", "origin")):
            if isinstance(payload.get(key), str) and name not in self.meta:
                self.meta[name] = payload[key]
        git = payload.get("git")
        if isinstance(git, dict) and isinstance(git.get("branch"), str):
            self.meta.setdefault("git_branch", git["branch"])
        if isinstance(payload.get("model"), str):
            self.model = payload["model"]
        self.provider = self.meta.get("provider")
        self.items.append((number, "init", ts))

    def _message(self, number: int, ts: datetime | None, payload: dict[str, Any]) -> None:
        role = payload.get("role") if isinstance(payload.get("role"), str) else "unknown"
        text = "\n".join(str(b.get("text")) for b in payload.get("content") or []
                         if isinstance(b, dict) and isinstance(b.get("text"), str))
        if role == "user":
            stage = "context" if text.lstrip().startswith(CONTEXT_PREFIXES) else "prompt"
            self.items.append((number, "prompt", (stage, ts, short(text))))
        else:
            self.items.append((number, "message", (role, ts, short(text))))

    def _tool(self, number: int, ts: datetime | None, sub: str, payload: dict[str, Any]) -> None:
        name = payload.get("name") if isinstance(payload.get("name"), str) else sub
        call = payload.get("call_id") or payload.get("id")
        call = call if isinstance(call, str) and call else f"line {number}"
        info: dict[str, Any] = {"call_id": call}
        args = payload.get("arguments")
        if isinstance(args, str):
            try:
                parsed = json.loads(args)
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                command = parsed.get("command") or parsed.get("cmd")
                if isinstance(command, list):
                    command = " ".join(str(c) for c in command)
                if isinstance(command, str):
                    info["command"] = command[:500]
        if isinstance(payload.get("input"), str):
            info["input"] = payload["input"][:500]
        self.tools[call] = {"line": number, "ts": ts, "name": str(name)[:80], "payload": info,
                            "end": None, "result": None, "error": False}
        self.items.append((number, "tool", call))

    def _output(self, number: int, ts: datetime | None, payload: dict[str, Any]) -> None:
        tool = self.tools.get(str(payload.get("call_id")))
        if tool is None or tool["result"] is not None:
            return
        tool["end"], tool["result"] = ts, number
        self.items.append((number, "tool_done", str(payload.get("call_id"))))
        output = payload.get("output")
        if isinstance(output, str) and output.startswith("{"):
            try:
                parsed = json.loads(output)
            except ValueError:
                parsed = None
            meta = parsed.get("metadata") if isinstance(parsed, dict) else None
            if isinstance(meta, dict) and isinstance(meta.get("exit_code"), int):
                tool["error"] = meta["exit_code"] != 0
                tool["payload"]["exit_code"] = meta["exit_code"]

    def _tokens(self, number: int, ts: datetime | None, payload: dict[str, Any]) -> None:
        info = payload.get("info")
        if not isinstance(info, dict):
            self.items.append((number, "other", ("token_count", ts, {"known": True})))
            return
        total = info.get("total_token_usage")
        last = info.get("last_token_usage")
        if isinstance(total, dict):
            now = {k: count(total.get(k)) or 0 for k in USAGE_KEYS}
            delta = {k: max(now[k] - self.total.get(k, 0), 0) for k in USAGE_KEYS}
            if now == self.total:
                self.items.append((number, "other", ("token_count", ts, {"repeat": True,
                                                                      "known": True})))
                return
            self.total = now
        elif isinstance(last, dict):
            delta = {k: count(last.get(k)) or 0 for k in USAGE_KEYS}
        else:
            self.items.append((number, "other", ("token_count", ts, {"known": True})))
            return
        self.items.append((number, "call", (ts, delta, self.model)))

    def events(self) -> list[LedgerEvent]:
        run = RunBuilder(SOURCE, SOURCE, str(self.meta.get("session_id") or self.stem),
                         self.shown)
        if not any(what == "init" for _, what, _ in self.items) and self.first is not None:
            run.add("init", self.first[1], line=self.first[0], payload=dict(self.meta),
                    summary="Codex CLI session")
        for number, what, data in self.items:
            if what == "init":
                run.add("init", data, line=number, payload=dict(self.meta),
                        summary="Codex CLI session")
            elif what == "call":
                ts, delta, model = data
                model_call(run, ts, line=number, role="assistant", model=model,
                           tokens_in=delta["input_tokens"], tokens_out=delta["output_tokens"],
                           cache_read=delta["cached_input_tokens"],
                           payload={"provider": self.provider or "openai",
                                    "reasoning_tokens": delta["reasoning_output_tokens"]})
            elif what in ("tool", "tool_done"):
                # a tool call is reported when its output comes (the end of its span),
                # else where it was called
                tool = self.tools[data]
                if what == "tool" and tool["result"] is not None:
                    continue
                start, end = tool["ts"], tool["end"]
                duration = (round((end - start).total_seconds() * 1000)
                            if start is not None and end is not None and end >= start else None)
                tool_call(run, end or start, line=tool["line"], record=data,
                          role="assistant", tool=tool["name"], duration_ms=duration,
                          verdict=None if what == "tool" else "error" if tool["error"]
                          else "done", payload=tool["payload"])
            elif what == "prompt":
                stage, ts, text = data
                run.add("act", ts, line=number, role="user", stage=stage, summary=text)
            elif what == "message":
                role, ts, text = data
                run.add("note", ts, line=number, role=role, stage="message", summary=text)
            else:
                self.add_other(run, number, data)
        if self.last is not None:
            run.add("finish", self.last[1], line=self.last[0],
                    verdict="task_complete" if self.complete else "session_end",
                    summary="end of the rollout")
        return run.events
