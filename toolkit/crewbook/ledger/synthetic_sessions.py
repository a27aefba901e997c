"""Synthetic Claude Code transcripts with a fixed seed: for notebook 11 and the import
benchmark. Same seed, same files, byte for byte.

The shapes are the real transcripts' (tests/data/agent_logs/claude-code/): one line
per content block of a reply, each repeating the reply's ``message.id`` and usage;
``tool_use`` blocks answered by ``tool_result`` lines; sub-agent sidechains
(``isSidechain``); ``file-history-snapshot`` and ``summary`` lines; slash commands as
``<command-name>`` text. Sessions work on the changes of an OpenSpec project: a
proposal session (``/openspec:proposal``, then writes under ``openspec/changes/<id>/``),
apply sessions (``/openspec:apply``, edits and test runs; some are rework), an
archive session, and a few sessions that serve no change.
"""

from __future__ import annotations

import json
import random
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

START: Final = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
SEED: Final = 36
MODELS: Final = (("claude-sonnet-4-5-20250929", 8), ("claude-haiku-4-5-20251001", 2))
_WORDS: Final = ("export", "report", "csv", "writer", "test", "route", "model", "field",
                 "error", "value", "check", "update", "change", "spec", "task", "file")


class _Writer:
    """One transcript: the lines, the clock, the running context size."""

    def __init__(self, rng: random.Random, sid: str, branch: str, start: datetime,
                 pad: int, filler: str) -> None:
        self.rng = rng
        self.sid = sid
        self.clock = start
        self.context = rng.randint(8_000, 20_000)
        self.base = {"isSidechain": False, "userType": "external", "cwd": "/work/app",
                     "sessionId": sid, "version": "2.0.46", "gitBranch": branch}
        self.lines: list[str] = []
        self.parent: str | None = None
        self.pad = pad
        self.filler = filler  # tool outputs are slices of it (fast to write in bulk)
        self.model = rng.choices([m for m, _ in MODELS], [w for _, w in MODELS])[0]

    def _id(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def _tick(self, low: float, high: float) -> str:
        self.clock += timedelta(seconds=self.rng.uniform(low, high))
        return self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def _put(self, record: dict[str, Any], side: bool = False) -> None:
        ident = self._id()
        line = {"parentUuid": self.parent, **self.base, "isSidechain": side, **record,
                "uuid": ident}
        self.parent = ident
        self.lines.append(json.dumps(line, separators=(",", ":")))

    def text(self, n: int) -> str:
        return " ".join(self.rng.choice(_WORDS) for _ in range(n))

    def prompt(self, content: str) -> None:
        stamp = self._tick(5, 120)
        self.lines.append(json.dumps({"type": "file-history-snapshot", "messageId": self._id(),
                                      "snapshot": {"timestamp": stamp}}, separators=(",", ":")))
        self._put({"type": "user", "timestamp": stamp,
                   "message": {"role": "user", "content": content}})

    def reply(self, tools: list[tuple[str, dict[str, Any]]], side: bool = False) -> None:
        """One model call: a text block and `tools`, each block a line with the usage;
        then each tool's result."""
        mid = "msg_" + self._id().replace("-", "")[:24]
        out = self.rng.randint(40, 1_500)
        fresh = self.rng.randint(200, 4_000)
        usage = {"input_tokens": self.rng.randint(3, 40), "cache_creation_input_tokens": fresh,
                 "cache_read_input_tokens": self.context, "output_tokens": out,
                 "service_tier": "standard"}
        self.context += fresh
        blocks: list[dict[str, Any]] = [{"type": "text", "text": self.text(12)}]
        calls = []
        for name, args in tools:
            tid = "toolu_" + self._id().replace("-", "")[:24]
            calls.append((tid, name))
            blocks.append({"type": "tool_use", "id": tid, "name": name, "input": args})
        for block in blocks:
            self._put({"type": "assistant", "timestamp": self._tick(1, 20),
                       "requestId": "req_" + mid[4:], "message": {
                           "id": mid, "type": "message", "role": "assistant",
                           "model": self.model, "content": [block],
                           "stop_reason": "tool_use" if tools else "end_turn",
                           "stop_sequence": None, "usage": usage}}, side)
        for tid, name in calls:
            size = self.rng.randint(self.pad // 4, self.pad) if self.pad else 40
            at = self.rng.randrange(len(self.filler) - size) if size < len(self.filler) else 0
            body = self.filler[at:at + size]
            self._put({"type": "user", "timestamp": self._tick(0.5, 60 if name == "Bash" else 3),
                       "message": {"role": "user", "content": [{
                           "type": "tool_result", "tool_use_id": tid, "content": body,
                           "is_error": self.rng.random() < 0.04}]}}, side)


def write_claude_code_sessions(folder: Path | str, changes: list[str], *,
                               sessions: int = 24, seed: int = SEED, pad: int = 0,
                               start: datetime = START) -> list[Path]:
    """Write `sessions` transcripts into `folder` (created) working on `changes`; `pad`
    is the largest tool output in characters (0: short outputs). Returns the paths."""
    rng = random.Random(seed)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    filler = "\n".join(" ".join(rng.choice(_WORDS) for _ in range(8))
                        for _ in range(max(1, 2 * pad // 50)))
    plan: list[tuple[str | None, str]] = []
    for name in changes:
        plan.append((name, "proposal"))
        plan.extend((name, "apply") for _ in range(rng.choice((1, 1, 2, 3))))
        plan.append((name, "archive"))
    while len(plan) < sessions:
        plan.append((None, "question"))
    plan = plan[:sessions]
    order = sorted(range(len(plan)),
                   key=lambda i: i if plan[i][0] else rng.random() * len(plan))
    paths = []
    clock = start
    for index in order:
        change, phase = plan[index]
        clock += timedelta(minutes=rng.randint(20, 240))
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        branch = change if change and rng.random() < 0.5 else "main"
        w = _Writer(rng, sid, branch, clock, pad, filler)
        _session(w, change, phase)
        if w.rng.random() < 0.3:
            w.lines.insert(0, json.dumps({"type": "summary", "summary": w.text(5),
                                          "leafUuid": w.parent}, separators=(",", ":")))
        path = folder / f"{sid}.jsonl"
        path.write_text("\n".join(w.lines) + "\n", encoding="utf-8")
        paths.append(path)
        clock = w.clock
    return paths


def _command(name: str, args: str) -> str:
    return (f"<command-message>{name.lstrip('/')} is running…</command-message>\n"
            f"<command-name>{name}</command-name>\n<command-args>{args}</command-args>")


def _session(w: _Writer, change: str | None, phase: str) -> None:
    folder = f"/work/app/openspec/changes/{change}"
    if phase == "proposal":
        w.prompt(_command("/openspec:proposal", f"{change} {w.text(6)}"))
        w.reply([("Glob", {"pattern": "openspec/specs/**/*.md"})])
        w.reply([("Read", {"file_path": "/work/app/openspec/project.md"})])
        w.reply([("Write", {"file_path": f"{folder}/proposal.md", "content": w.text(40)})])
        w.reply([("Write", {"file_path": f"{folder}/specs/{change}/spec.md",
                            "content": w.text(60)})])
        if w.rng.random() < 0.5:
            w.reply([("Write", {"file_path": f"{folder}/design.md", "content": w.text(50)})])
        w.reply([("Write", {"file_path": f"{folder}/tasks.md", "content": w.text(30)})])
        w.reply([("Bash", {"command": f"openspec validate {change} --strict"})])
        w.reply([])
    elif phase == "apply":
        w.prompt(_command("/openspec:apply", str(change)))
        w.reply([("Read", {"file_path": f"{folder}/tasks.md"})])
        for _ in range(w.rng.randint(2, 6)):
            target = f"/work/app/src/{w.rng.choice(_WORDS)}.py"
            w.reply([("Edit", {"file_path": target, "old_string": w.text(3),
                               "new_string": w.text(4)})])
            w.reply([("Bash", {"command": "pytest -q"})])
        if w.rng.random() < 0.4:
            w.reply([("Task", {"subagent_type": "general-purpose", "prompt": w.text(10)})])
            for _ in range(w.rng.randint(1, 3)):
                w.reply([("Grep", {"pattern": w.rng.choice(_WORDS)})], side=True)
        w.reply([("Edit", {"file_path": f"{folder}/tasks.md", "old_string": "- [ ]",
                           "new_string": "- [x]"})])
        w.reply([])
    elif phase == "archive":
        w.prompt(_command("/openspec:archive", str(change)))
        w.reply([("Bash", {"command": f"openspec archive {change} --yes"})])
        w.reply([])
    else:
        w.prompt(f"how does the {w.text(2)} work?")
        for _ in range(w.rng.randint(1, 3)):
            w.reply([("Grep", {"pattern": w.rng.choice(_WORDS)})])
        w.reply([])
