"""Aider chat histories (``.aider.chat.history.md``): one run per chat session.

A session starts at ``# aider chat started at YYYY-MM-DD HH:MM:SS``; inside it, lines
starting ``#### `` are what the user typed, lines starting ``> `` are aider's own
output, and the rest is the model's reply.

==============================  ===============================================
Aider                           crewbook event
==============================  ===============================================
``# aider chat started at``     ``init`` at that time (payload: the command
                                line, aider's version, the model)
``#### text``                   ``act``: role ``user``, stage ``message`` or the
                                command (``/add``, ``/ask``…)
the model's reply               a model call: role ``assistant``, stage ``model``,
                                tokens and cost from the ``> Tokens:`` line
                                that follows it
other ``> `` lines              ``note``: role ``aider``, stage ``edit``
                                (Applied edit), ``commit``, or ``output``
the session's last line         ``note``: stage ``end`` (no time)
==============================  ===============================================

The session start is the only clock: the other events have a null `ts`, so a session
has a start but no end or duration (even one with nothing after its start). That time
has no zone (aider writes local time): read as UTC. Tokens are as printed (``1.6k`` is
1,600: aider rounds them; the event says ``payload.tokens_rounded``). Cost: aider
prints the message's cost and the session's running total, both rounded; an event's
cost is the change of the session total, so a session's cost is exactly aider's last
session figure. Aider records no exit status.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ...errors import LedgerError, Problem
from ..events import LedgerEvent
from ._common import RunBuilder, model_call, read_text, short

if TYPE_CHECKING:
    from . import Sniff

SOURCE: Final = "aider"
STARTED: Final = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$")
TOKENS: Final = re.compile(
    r"Tokens: (?P<sent>[\d.,]+k?) sent(?P<cache>(?:, [\d.,]+k? [a-z ]+?)*), "
    r"(?P<received>[\d.,]+k?) received\.")
COST: Final = re.compile(r"Cost: \$(?P<message>[\d.]+) (?:message|request), "
                         r"\$(?P<session>[\d.]+) session")


def looks_like(text: str) -> bool:
    """Whether a text is an aider chat history."""
    return any(STARTED.match(line) for line in text.splitlines()[:200])


def detects(sniff: Sniff) -> bool:
    """Whether a sniffed file is an aider chat history (a session start in its head)."""
    return not sniff.is_dir and looks_like(sniff.head)


def import_file(path: Path, shown: str) -> list[LedgerEvent]:
    """The events of every session in one chat history."""
    text = read_text(path, "import_bad_aider")
    lines = text.splitlines()
    if not looks_like(text):
        raise LedgerError(f"cannot import {shown}", [Problem(
            "import_bad_aider", "not an aider chat history: no line '# aider chat started "
            "at YYYY-MM-DD HH:MM:SS' in its first 200 lines", shown)])
    events: list[LedgerEvent] = []
    session: _Session | None = None
    for number, line in enumerate(lines, 1):
        match = STARTED.match(line)
        if match:
            if session is not None:
                events.extend(session.close(number - 1))
            started = datetime.strptime(match[1], "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
            session = _Session(RunBuilder(SOURCE, SOURCE, f"{path.name.split('.')[0]}@"
                                          f"{started:%Y-%m-%dT%H:%M:%S}", shown),
                               started, number)
        elif session is not None:
            session.feed(number, line)
    if session is not None:
        events.extend(session.close(len(lines)))
    return events


class _Session:
    """Groups the lines of one session into blocks (user, aider, reply) and events."""

    def __init__(self, run: RunBuilder, started: datetime, line: int) -> None:
        self.run = run
        self.started = started
        self.line = line
        self.block: tuple[str, int, list[str]] | None = None
        self.setup: dict[str, Any] = {}
        self.session_cost = 0.0
        self.reply: dict[str, Any] | None = None
        self.init_done = False

    def feed(self, number: int, line: str) -> None:
        kind = ("user" if line.startswith("####") else
                "aider" if line.startswith("> ") or line == ">" or (
                    line.startswith("Cost: $") and self.block is not None
                    and self.block[0] == "aider") else "reply")
        text = line[4:].strip() if kind == "user" else line[1:].strip() \
            if kind == "aider" and line.startswith(">") else line.rstrip()
        # (a reply's own ">>>>>>> REPLACE" is not aider's output: that needs "> ")
        if kind == "reply" and not text and (self.block is None or self.block[0] != "reply"):
            return  # blank lines between blocks
        if self.block is not None and self.block[0] == kind:
            self.block[2].append(text)
            return
        self.flush()
        self.block = (kind, number, [text])

    def flush(self) -> None:
        if self.block is None:
            return
        kind, number, lines = self.block
        self.block = None
        if kind == "aider" and not self.init_done:
            self.setup = _setup(lines)
            return self._aider(number, lines, setup=True)
        self._init()
        if kind == "user":
            self._reply_done()
            first = next((t for t in lines if t), "")
            stage = first.split()[0] if first.startswith("/") else "message"
            self.run.add("act", None, line=number, role="user", stage=stage,
                         summary=short(first))
        elif kind == "reply":
            self._reply_done()
            self.reply = {"line": number, "summary": short("\n".join(lines))}
        else:
            self._aider(number, lines)

    def _init(self) -> None:
        if not self.init_done:
            self.init_done = True
            self.run.add("init", self.started, line=self.line, payload=self.setup,
                         summary="aider chat session")

    def _reply_done(self, **usage: Any) -> None:
        if self.reply is not None:
            reply, self.reply = self.reply, None
            self._call(reply["line"], reply["summary"], **usage)

    def _call(self, line: int, summary: str | None, **usage: Any) -> None:
        """A model call: a reply, or a token report with no reply before it."""
        model = self.setup.get("model")
        model_call(self.run, None, line=line, role="assistant",
                   model=model if isinstance(model, str) else None, summary=summary,
                   **usage)

    def _aider(self, number: int, lines: list[str], *, setup: bool = False) -> None:
        joined = " ".join(lines)
        tokens, cost = TOKENS.search(joined), COST.search(joined)
        if tokens or cost:
            usage: dict[str, Any] = {"payload": {}}
            if tokens:
                usage["tokens_in"] = _tokens(tokens["sent"])
                usage["tokens_out"] = _tokens(tokens["received"])
                usage["payload"]["tokens_rounded"] = "k" in tokens[0]
                if tokens["cache"]:
                    usage["payload"]["cache"] = tokens["cache"].removeprefix(", ")
            session = _money(cost["session"]) if cost else None
            if cost and session is not None:
                usage["cost"] = round(max(session - self.session_cost, 0.0), 6)
                usage["payload"]["message_cost"] = _money(cost["message"])
                self.session_cost = max(session, self.session_cost)
            if self.reply is not None:
                self._reply_done(**usage)
            else:
                self._call(number, short(joined), **usage)
            lines = [t for t in lines if not (TOKENS.search(t) or COST.search(t))]
        self._reply_done()
        if setup or not any(lines):
            return
        first = lines[0]
        stage = ("edit" if first.startswith("Applied edit") else
                 "commit" if first.startswith("Commit ") else "output")
        self.run.add("note", None, line=number, role="aider", stage=stage, summary=short(first))

    def close(self, last_line: int) -> list[LedgerEvent]:
        self.flush()
        self._init()
        self._reply_done()
        self.run.add("note", None, line=last_line, stage="end",
                     summary="end of the session's log (aider writes no end time)")
        return self.run.events


def _setup(lines: list[str]) -> dict[str, Any]:
    """What aider prints when it starts: command, version, model."""
    setup: dict[str, Any] = {}
    for text in lines:
        if text.startswith("Aider v"):
            setup["version"] = text.split()[1]
        elif text.startswith(("Main model:", "Models:", "Model:")):
            setup["model"] = text.split(":", 1)[1].strip().split()[0]
        elif "aider" in text and not setup.get("command") and "/" in text.split()[0]:
            setup["command"] = text
    return setup


def _tokens(text: str) -> int | None:
    """``6,480`` → 6480; ``1.6k`` → 1600 (aider rounds large counts); None if garbled."""
    text = text.replace(",", "")
    try:
        return round(float(text[:-1]) * 1000) if text.endswith("k") else int(text)
    except ValueError:
        return None


def _money(text: str) -> float | None:
    """A cost as printed (``0.0069``); None if garbled."""
    try:
        return float(text)
    except ValueError:
        return None
