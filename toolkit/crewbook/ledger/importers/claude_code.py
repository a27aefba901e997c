"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``):
one run per file, read line by line (a transcript is never loaded whole).

=================================  ==============================================
Claude Code line                   crewbook event
=================================  ==============================================
the first line with a time         ``init`` (payload: session id, cwd, git
                                   branch, Claude Code version)
``user``, text (not a tool         ``act``: role ``user``, stage ``prompt``, or the
result)                            slash command (``/openspec:proposal``; payload
                                   ``command`` and ``args``)
``assistant`` lines of one         ``report``: one per model call: role
``message.id``                     ``assistant`` (``subagent`` on a sidechain),
                                   stage ``model``, tokens, payload ``model``,
                                   ``cache_read_tokens``, ``cache_write_tokens``
``tool_use`` block                 a tool call: the caller's role, stage = the tool
                                   name, duration_ms until its ``tool_result``,
                                   verdict ``done`` or ``error`` (``is_error``)
``summary``, ``system`` and any    ``note``: stage = the line's ``type`` (and
other line type                    ``subtype``), kept with its origin
``progress``, ``last-prompt``      skipped (they repeat other lines), counted in
                                   the ``finish``'s ``payload.skipped_lines``
the last line with a time          ``finish``: verdict ``session_end`` (a
                                   transcript records no outcome)
=================================  ==============================================

Tokens are counted once per message id: Claude Code writes one line per content block
of a reply and repeats the reply's usage on each. ``tokens_in`` is every input token
(``input_tokens`` + ``cache_creation_input_tokens`` + ``cache_read_input_tokens``);
the cache parts are in the payload. Older versions write ``costUSD``: when present it
is the cost (once per message id); otherwise `import_runs` estimates it from the price
table (``payload.cost_estimate``). Sub-agent sidechains (``isSidechain``) stay in the
session's run with role ``subagent`` and ``payload.agent``; a sub-agent's own file (every
message on the sidechain, ``<session>/subagents/agent-<id>.jsonl``) is a child run named
``<session>/<agent id>`` whose ``init`` names its session in ``payload.parent_run``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from ..events import LedgerEvent
from ._common import LineLog, RunBuilder, count, head_objects, model_call, short, tool_call, utc

SOURCE: Final = "claude-code"
#: The kind of a record type this importer has no mapping for (kept, never dropped).
OTHER_KIND: Final = "note"
#: Line types of a transcript (any one of them in the first lines identifies it).
LINE_TYPES: Final = frozenset({"user", "assistant", "summary", "system",
                               "file-history-snapshot", "queue-operation"})
#: Line types Claude Code writes that repeat what other lines record: ``progress`` (a
#: hook's or a running tool's progress, its outcome in the tool's own result) and
#: ``last-prompt`` (the session's last prompt again, for resuming). Skipped, never
#: unknown; the ``finish`` counts them (``payload.skipped_lines``).
SKIPPED_TYPES: Final = frozenset({"progress", "last-prompt"})
COMMAND: Final = re.compile(r"<command-name>\s*(/?[^<\s]+)\s*</command-name>")
ARGS: Final = re.compile(r"<command-args>(.*?)</command-args>", re.S)
#: Tools whose ``file_path`` input is a file the session wrote.
WRITERS: Final = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})


def looks_like(head: str) -> bool:
    """Whether the first lines of a text are a Claude Code transcript: JSON objects
    with a ``sessionId`` and a known line ``type``."""
    return any("sessionId" in v and (_kind(v) in LINE_TYPES or _kind(v) in SKIPPED_TYPES)
               for v in head_objects(head))


@dataclass
class _Call:
    """One model call (all the lines of one message id) until the file ends."""

    line: int
    ts: datetime | None
    role: str
    model: str | None
    usage: dict[str, int] = field(default_factory=dict)
    cost: float | None = None
    stop: str | None = None
    agent: str | None = None
    error: bool = False
    text: str | None = None


@dataclass
class _Tool:
    line: int
    ts: datetime | None
    role: str
    name: str
    call: str
    payload: dict[str, Any]
    end: datetime | None = None
    error: bool = False
    result: int | None = None  # the line of its tool_result


def import_file(path: Path, shown: str) -> list[LedgerEvent]:
    """The events of one session transcript."""
    return _Session.read(path, shown)


class _Session(LineLog):
    """Collects one transcript's lines; `events` numbers them in file order."""

    CODE = "import_bad_claude_code"
    REFUSAL = ("not a Claude Code transcript: no line is a JSON object with a 'sessionId' "
               "and a 'type' (user, assistant, summary…)")
    OTHER_KIND = OTHER_KIND

    def __init__(self, shown: str, stem: str) -> None:
        super().__init__(shown, stem)
        self.main_line = False  # a message off the sidechain was seen
        # (line, order) → what to emit; model calls and tools are finished at the end
        self.calls: dict[str, _Call] = {}
        self.tools: dict[str, _Tool] = {}
        self.skipped: dict[str, int] = {}  # known line types left out, by type

    def feed_object(self, number: int, value: dict[str, Any]) -> None:
        kind = _kind(value)
        if "sessionId" in value and (kind in LINE_TYPES or kind in SKIPPED_TYPES):
            self.seen = True
        ts = utc(value.get("timestamp"))
        self.timed(number, ts)
        for key, name in (("sessionId", "session_id"), ("cwd", "cwd"),
                          ("gitBranch", "git_branch"), ("version", "version")):
            if isinstance(value.get(key), str) and value[key] and name not in self.meta:
                self.meta[name] = value[key]
        message = value.get("message")
        if kind in ("user", "assistant") and isinstance(message, dict):
            # a sub-agent's own file (``<session>/subagents/agent-<id>.jsonl``): every
            # message is on the sidechain; it becomes a child run of the session
            self.main_line = self.main_line or value.get("isSidechain") is not True
            if isinstance(value.get("agentId"), str) and "agent" not in self.meta:
                self.meta["agent"] = value["agentId"]
        if kind in SKIPPED_TYPES:
            self.skipped[kind] = self.skipped.get(kind, 0) + 1
        elif kind == "assistant" and isinstance(message, dict):
            self._assistant(number, ts, value, message)
        elif kind == "user" and isinstance(message, dict):
            self._user(number, ts, value, message)
        else:
            stage = str(kind or "unknown")
            if isinstance(value.get("subtype"), str):
                stage = f"{stage}:{value['subtype']}"
            text = value.get("summary") if kind == "summary" else value.get("content")
            self.items.append((number, "other", (stage[:60], ts, {
                "summary": short(text), "known": kind in LINE_TYPES})))

    def _role(self, value: dict[str, Any], main: str) -> str:
        return "subagent" if value.get("isSidechain") is True else main

    def _assistant(self, number: int, ts: datetime | None, value: dict[str, Any],
                   message: dict[str, Any]) -> None:
        key = message.get("id")
        key = key if isinstance(key, str) and key else f"line {number}"
        call = self.calls.get(key)
        if call is None:
            model = message.get("model")
            call = _Call(number, ts, self._role(value, "assistant"),
                         model if isinstance(model, str) and model else None,
                         agent=value.get("agentId") if isinstance(value.get("agentId"), str)
                         else None,
                         error=value.get("isApiErrorMessage") is True)
            self.calls[key] = call
            self.items.append((number, "call", key))
        usage = message.get("usage")
        if isinstance(usage, dict):
            for name in ("input_tokens", "output_tokens", "cache_creation_input_tokens",
                         "cache_read_input_tokens"):
                n = count(usage.get(name))
                if n is not None:
                    call.usage[name] = max(call.usage.get(name, 0), n)
        cost = value.get("costUSD")
        if isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0:
            call.cost = max(call.cost or 0.0, float(cost))
        if isinstance(message.get("stop_reason"), str):
            call.stop = message["stop_reason"]
        for block in _blocks(message.get("content")):
            if block.get("type") == "text" and call.text is None:
                call.text = short(block.get("text"))
            elif block.get("type") == "tool_use":
                self._tool_use(number, ts, call.role, block)

    def _tool_use(self, number: int, ts: datetime | None, role: str,
                  block: dict[str, Any]) -> None:
        name = block.get("name")
        name = name if isinstance(name, str) and name else "tool"
        ident = block.get("id")
        ident = ident if isinstance(ident, str) and ident else f"line {number}"
        given = block.get("input")
        args: dict[str, Any] = given if isinstance(given, dict) else {}
        payload: dict[str, Any] = {"tool_use_id": ident}
        for key in ("file_path", "notebook_path", "path", "subagent_type", "skill"):
            if isinstance(args.get(key), str):
                payload[key] = args[key]
        if isinstance(args.get("command"), str):
            payload["command"] = args["command"][:500]
        if name in WRITERS and isinstance(args.get("file_path") or args.get("notebook_path"), str):
            payload["writes"] = args.get("file_path") or args.get("notebook_path")
        tool = _Tool(number, ts, role, name[:80], ident, payload)
        self.tools[ident] = tool
        self.items.append((number, "tool", ident))

    def _user(self, number: int, ts: datetime | None, value: dict[str, Any],
              message: dict[str, Any]) -> None:
        content = message.get("content")
        results = [b for b in _blocks(content) if b.get("type") == "tool_result"]
        for block in results:
            tool = self.tools.get(str(block.get("tool_use_id")))
            if tool is not None and tool.result is None:
                tool.end, tool.result = ts, number
                tool.error = block.get("is_error") is True
                self.items.append((number, "tool_done", tool.call))  # reported here
        if results:
            return
        text = content if isinstance(content, str) else "\n".join(
            str(b.get("text")) for b in _blocks(content) if b.get("type") == "text")
        payload: dict[str, Any] = {}
        stage = "prompt"
        match = COMMAND.search(text)
        if match:
            stage = match[1] if match[1].startswith("/") else "/" + match[1]
            args = ARGS.search(text)
            payload = {"command": stage, "args": args[1].strip() if args else ""}
        elif text.startswith("/") and text[1:2].isalpha():
            stage = text.split()[0]
            payload = {"command": stage, "args": text[len(stage):].strip()}
        if value.get("isMeta") is True:
            stage = "meta"
        elif text.lstrip().startswith(("<local-command-stdout>", "<local-command-stderr>")):
            stage = "command_output"
        role = self._role(value, "user")
        self.items.append((number, "prompt", (role, stage[:80], ts, payload, short(text))))

    def events(self) -> list[LedgerEvent]:
        name = str(self.meta.get("session_id") or self.stem)
        if not self.main_line and (self.meta.get("agent") or self.stem.startswith("agent-")):
            # a sub-agent's file: its own run, pointing at its session
            self.meta["parent_run"] = name
            name = f"{name}/{self.meta.get('agent') or self.stem}"
        run = RunBuilder(SOURCE, SOURCE, name, self.shown)
        if self.first is not None:
            run.add("init", self.first[1], line=self.first[0], payload=dict(self.meta),
                    summary="Claude Code session")
        for number, what, data in self.items:
            if what == "call":
                self._emit_call(run, self.calls[data])
            elif what in ("tool", "tool_done"):
                # a tool call is reported when its result comes (the end of its span),
                # else where it was called
                tool = self.tools[data]
                if what == "tool" and tool.result is not None:
                    continue
                duration = (round((tool.end - tool.ts).total_seconds() * 1000)
                            if tool.end is not None and tool.ts is not None
                            and tool.end >= tool.ts else None)
                tool_call(run, tool.end or tool.ts, line=tool.line, record=tool.call,
                          role=tool.role, tool=tool.name, duration_ms=duration,
                          verdict=None if what == "tool" else "error" if tool.error
                          else "done", payload=tool.payload)
            elif what == "prompt":
                role, stage, ts, payload, text = data
                run.add("act", ts, line=number, role=role, stage=stage, summary=text,
                        payload=payload)
            else:
                self.add_other(run, number, data)
        if self.last is not None:
            run.add("finish", self.last[1], line=self.last[0], verdict="session_end",
                    summary="end of the transcript (Claude Code records no outcome)",
                    payload={"skipped_lines": dict(sorted(self.skipped.items()))}
                    if self.skipped else None)
        return run.events

    def _emit_call(self, run: RunBuilder, call: _Call) -> None:
        u = call.usage
        cache_write = u.get("cache_creation_input_tokens", 0)
        cache_read = u.get("cache_read_input_tokens", 0)
        tokens_in = (u.get("input_tokens", 0) + cache_write + cache_read) if u else None
        model_call(run, call.ts, line=call.line, role=call.role, model=call.model,
                   verdict="error" if call.error else "done", summary=call.text,
                   tokens_in=tokens_in, tokens_out=u.get("output_tokens") if u else None,
                   cache_read=cache_read, cache_write=cache_write, cost=call.cost,
                   payload={k: v for k, v in {"provider": "anthropic", "stop_reason": call.stop,
                                              "agent": call.agent}.items() if v is not None})


def _kind(value: dict[str, Any]) -> str | None:
    """A line's ``type`` when it is a text (a hostile line may hold anything there)."""
    kind = value.get("type")
    return kind if isinstance(kind, str) else None


def _blocks(content: Any) -> list[dict[str, Any]]:
    """The dict blocks of a message's content (a text content has none)."""
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
