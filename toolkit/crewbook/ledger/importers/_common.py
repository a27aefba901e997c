"""What every importer shares: reading a source file, times, `RunBuilder`, which
numbers a run's events, points each at its origin and checks it with `LedgerEvent`, and
`model_call` / `tool_call`, which give a model call and a tool call one shape whatever
the source (`crewbook.ledger.calls`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from pydantic import ValidationError

from ...errors import LedgerError, Problem
from ..calls import CALL_KIND, MODEL_STAGE, TOOL_KEY
from ..events import LedgerEvent, validation_problems

#: Largest source file an importer reads (agent logs are megabytes, not gigabytes).
MAX_BYTES: Final = 512 * 1024 * 1024
#: Longest `summary` taken from a log (the whole text stays in the source file).
SUMMARY_CHARS: Final = 200


def read_text(path: Path, code: str) -> str:
    """The UTF-8 text of `path`, or a `LedgerError` saying why it cannot be read."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise LedgerError(f"cannot import {path}", [Problem(
                code, f"the file holds {size:,} bytes, more than the {MAX_BYTES:,} an "
                "import reads; split it", str(path))])
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise LedgerError(f"cannot import {path}", [Problem(
            code, f"cannot read the file as UTF-8 text: {exc}", str(path))]) from None


def stream_lines(path: Path, shown: str, code: str) -> Iterator[tuple[int, bytes]]:
    """(number, bytes) of each non-blank line of a JSON Lines log, read one at a time
    (a log is never loaded whole); a `LedgerError` naming the file when it is too big or
    cannot be read."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise LedgerError(f"cannot import {shown}", [Problem(
                code, f"the file holds {size:,} bytes, more than the {MAX_BYTES:,} an "
                "import reads; split it", shown)])
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, 1):
                if raw.strip():
                    yield number, raw
    except OSError as exc:
        raise LedgerError(f"cannot import {shown}", [Problem(
            code, f"cannot read it: {exc.strerror or exc}", shown)]) from None


def read_json(path: Path, code: str) -> Any:
    """The JSON value in `path`, or a `LedgerError` naming the line and column."""
    text = read_text(path, code)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise LedgerError(f"cannot import {path}", [Problem(
            code, f"not JSON: {exc.msg}", str(path), exc.lineno, exc.colno)]) from None


def load_log(path: Path, shown: str, code: str, fits: Callable[[Any], bool],
             expected: str) -> Any:
    """The JSON value of a log file, or `LedgerError` when `fits` says it is not what
    this source writes (`expected` describes what it should be)."""
    value = read_json(path, code)
    if not fits(value):
        raise LedgerError(f"cannot import {shown}", [Problem(code, expected, shown)])
    return value


#: Lines of a JSON Lines file's start that `head_objects` looks at (a transcript may
#: start with many lines that do not identify it, such as snapshots and summaries).
LOOK_LINES: Final = 200


def head_objects(head: str) -> Iterator[dict[str, Any]]:
    """The JSON objects among the first `LOOK_LINES` lines of a text (to recognise a
    JSON Lines source from its start)."""
    for line in head.splitlines()[:LOOK_LINES]:
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            yield value


def utc(text: Any) -> datetime | None:
    """An ISO-8601 text as a UTC datetime; a time without offset is read as UTC (the
    tools write local or UTC times without saying which). None when not a time."""
    if not isinstance(text, str) or not text:
        return None
    try:
        ts = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)


def short(text: Any) -> str | None:
    """The first line of `text`, cut to `SUMMARY_CHARS` (None when empty)."""
    if not isinstance(text, str):
        return None
    line = next((t.strip() for t in text.splitlines() if t.strip()), "")
    if not line:
        return None
    return line if len(line) <= SUMMARY_CHARS else line[:SUMMARY_CHARS - 1] + "…"


def count(value: Any) -> int | None:
    """A token count from a log (an int ≥ 0), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else None


@dataclass
class RunBuilder:
    """The events of one imported run, numbered from 0, each with ``payload.origin``:
    the source, the file, and the line or the record id it came from."""

    source: str
    loop: str
    run: str
    file: str
    events: list[LedgerEvent] = field(default_factory=list)

    def add(self, kind: str, ts: datetime | None, *, line: int | None = None,
            record: str | None = None, payload: Mapping[str, Any] | None = None,
            **fields: Any) -> LedgerEvent:
        """Append one event; raises `LedgerError` naming the origin if it is invalid."""
        origin: dict[str, Any] = {"source": self.source, "file": self.file}
        if line is not None:
            origin["line"] = line
        if record is not None:
            origin["record"] = record
        data = {"ts": ts, "run": self.run, "seq": len(self.events), "loop": self.loop,
                "kind": kind, **{k: v for k, v in fields.items() if v is not None},
                "payload": {**(payload or {}), "origin": origin}}
        try:
            event = LedgerEvent.model_validate(data)
        except ValidationError as exc:
            where = f"{self.file} ({record})" if record and line is None else self.file
            raise LedgerError(f"cannot import {self.file}", validation_problems(
                exc, path=where, line=line, code="import_bad_event")) from None
        self.events.append(event)
        return event


#: Longest `stage` an importer writes: a tool or action name, never a dump of a record.
STAGE_CHARS: Final = 64


def stage_name(value: Any) -> str | None:
    """A short stage name from a log's tool, action or state name: a text's first line,
    cut to `STAGE_CHARS`; None for anything else (a dict, a number: never its dump)."""
    if not isinstance(value, str):
        return None
    name = value.strip().split("\n", 1)[0].strip()
    if not name:
        return None
    return name if len(name) <= STAGE_CHARS else name[:STAGE_CHARS - 1] + "…"


class LineLog:
    """What the JSON Lines session importers (Claude Code, Codex CLI) share: reading a
    file line by line into `items` (``(line, what, data)`` in file order), the first and
    last timed lines, and the kept records of types they have no mapping for.

    A subclass sets `CODE` (its problem code), `REFUSAL` (what a file that is none of
    its lines lacks), `OTHER_KIND`, and implements `feed_object` and `events`."""

    CODE: str = "import_bad"
    REFUSAL: str = "no line is one of this source's records"
    OTHER_KIND: str = "note"

    def __init__(self, shown: str, stem: str) -> None:
        self.shown = shown
        self.stem = stem
        self.seen = False  # a line of this source was seen
        self.meta: dict[str, Any] = {}
        self.first: tuple[int, datetime] | None = None
        self.last: tuple[int, datetime] | None = None
        self.items: list[tuple[int, str, Any]] = []

    @classmethod
    def read(cls, path: Path, shown: str) -> list[LedgerEvent]:
        """The events of one file; `LedgerError` when no line is one of this source's."""
        log = cls(shown, path.stem)
        for number, raw in stream_lines(path, shown, cls.CODE):
            log.feed(number, raw)
        if not log.seen:
            raise LedgerError(f"cannot import {shown}", [Problem(cls.CODE, cls.REFUSAL,
                                                                 shown)])
        return log.events()

    def feed(self, number: int, raw: bytes) -> None:
        """Read one line: a JSON object goes to `feed_object`, anything else is kept."""
        try:
            value = json.loads(raw)
        except ValueError as exc:
            raise LedgerError(f"cannot import {self.shown}", [Problem(
                self.CODE, f"not JSON: {exc}", self.shown, number)]) from None
        if not isinstance(value, dict):
            self.items.append((number, "other", ("json", None,
                                                 {"json": type(value).__name__})))
            return
        self.feed_object(number, value)

    def feed_object(self, number: int, value: dict[str, Any]) -> None:
        raise NotImplementedError

    def events(self) -> list[LedgerEvent]:
        raise NotImplementedError

    def timed(self, number: int, ts: datetime | None) -> None:
        """Note a line's time: the session runs from its first to its last timed line."""
        if ts is None:
            return
        if self.first is None:
            self.first = (number, ts)
        if self.last is None or ts >= self.last[1]:
            self.last = (number, ts)

    def add_other(self, run: RunBuilder, number: int, data: Any) -> None:
        """Keep a record this importer has no mapping for, with its origin; an untimed
        one takes the time before it (flagged ``ts_inferred``). Unless its data says
        ``known`` (a type the source writes, kept as a note), it is marked
        ``payload.unknown_type`` and counted."""
        stage, ts, extra = data
        text = extra.pop("summary", None)
        if ts is None and self.first is not None:
            ts = next((e.ts for e in reversed(run.events) if e.ts), self.first[1])
            extra["ts_inferred"] = True
        if not extra.pop("known", False):  # a type this source writes is no unknown one
            extra["unknown_type"] = stage  # counted by import_runs' unknown_types
        run.add(self.OTHER_KIND, ts, line=number, stage=stage, summary=text,
                payload={k: v for k, v in extra.items() if v is not None})


def model_call(run: RunBuilder, ts: datetime | None, *, role: str,
               model: str | None = None, tokens_in: int | None = None,
               tokens_out: int | None = None, cache_read: int | None = None,
               cache_write: int | None = None, cost: float | None = None,
               duration_ms: int | None = None, verdict: str | None = "done",
               summary: str | None = None, line: int | None = None,
               record: str | None = None,
               payload: Mapping[str, Any] | None = None) -> LedgerEvent:
    """One model call: a ``report`` of `role` at stage ``model``, its tokens (``tokens_in``
    counts the cached tokens too, ``payload.cache_read_tokens`` / ``cache_write_tokens``
    say how many), its cost when the log records one (else priced later and marked
    ``cost_estimate``) and ``payload.model``. Unknown values stay null, never 0."""
    data = {**(payload or {}), "model": model, "cache_read_tokens": cache_read,
            "cache_write_tokens": cache_write}
    return run.add(CALL_KIND, ts, line=line, record=record, role=role, stage=MODEL_STAGE,
                   verdict=verdict, summary=summary, tokens_in=tokens_in,
                   tokens_out=tokens_out, cost=cost, duration_ms=duration_ms,
                   payload={k: v for k, v in data.items() if v is not None})


def tool_call(run: RunBuilder, ts: datetime | None, *, role: str, tool: Any,
              duration_ms: int | None = None, verdict: str | None = None,
              summary: str | None = None, line: int | None = None,
              record: str | None = None,
              payload: Mapping[str, Any] | None = None) -> LedgerEvent:
    """One tool call: a ``report`` of `role` whose stage is the tool's short name
    (`stage_name`, ``tool`` when the log names none) and ``payload.tool`` its name.
    `ts` is when its result came, the end of its span (``duration_ms`` before it, from
    the call), and the event sits there in the run; a call never answered is at its own
    time, with no verdict."""
    name = stage_name(tool) or "tool"
    data = {**(payload or {}), TOOL_KEY: short(tool) or name}
    return run.add(CALL_KIND, ts, line=line, record=record, role=role, stage=name,
                   verdict=verdict, summary=summary, duration_ms=duration_ms,
                   payload={k: v for k, v in data.items() if v is not None})
