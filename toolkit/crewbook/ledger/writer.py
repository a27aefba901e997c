"""`Ledger`: the append-only, crash-safe, multi-process writer of one ledger file.

Each `append` takes an exclusive lock on the ledger file itself (``flock`` on POSIX;
a ``<ledger>.lock`` file via filelock elsewhere), catches up with
what other writers appended since (to continue each run's `seq`), writes the event
as one whole line with a single ``write`` on an ``O_APPEND`` descriptor, and lets the
lock go. So any number of processes can append to one file: lines never interleave,
none is lost, and `seq` stays gapless per run. The line reaches the OS at once
(flush per event); ``fsync`` happens on `close` or, with ``fsync="always"``, after
every event (slower, but survives a power cut, not just a crash).

A writer that dies mid-write can leave a line cut short at the end of the file. The
next writer seals it with a newline (so its own line stays whole) and warns; readers
leave the cut line out with a warning, wherever it is.

Three ways in. `append` / `append_many` take events from anyone (a user, an importer) and
validate each with the `LedgerEvent` model, returning the stored events. `append_batch`
is the engines' path (a loop's act, a simulation, a replay): plain dicts, checked by
exact, cheap rules (the same rules as the model: known keys, kinds, strict types, UTC
times, required fields, JSON and UTF-8 text) and written straight as JSON lines, with
no model built; any event those rules cannot settle takes the model's path, so what
lands in the file, and every refusal, is what `append_many` would give. `append_built` is
the loops' own path (`crewbook.core.append_events`): the events an engine built from a
report it already checked, trusted for what the engine formatted (times, payloads) and
still checked where a report's value could break the format; the same lines again, one
lock, one ``lseek`` and one ``write`` per act.

The writer is split by job: this module (the public `Ledger`: its ways in and the
model's path), `crewbook.ledger.linebuild` (the line builders: events checked by exact
rules and written out without the model, the writer's one fast path, behind one seam;
what they work out once per shape is in `crewbook.ledger.shapes`) and
`crewbook.ledger.appendfile` (the file, its lock and this writer's count of each run's
`seq`; its byte-level helpers in `crewbook.ledger.filebytes`).
"""

from __future__ import annotations

import html
import os
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from ..core.paths import file_or_absent
from ..errors import LedgerError, Problem, UsageError
from .appendfile import AppendFile, FsyncPolicy
from .events import LedgerEvent, validation_problems
from .linebuild import Line, LineBuilder

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FsyncPolicy", "Ledger", "new_run_id"]


def new_run_id() -> str:
    """A fresh run id: UTC time plus a random suffix, e.g. ``20250301T090000Z-3fa2c1``."""
    return f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


class Ledger:
    """Append events to a JSON Lines ledger; safe across processes and crashes.

    ``Ledger(path, run=None, loop=None)``: `run` is the run events go to when they do
    not name one; by default the run of the file's last event, or a new id for an
    empty file. `loop` fills events that do not name their loop. Use it as a context
    manager, or call `close`.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        run: str | None = None,
        *,
        loop: str | None = None,
        fsync: FsyncPolicy = "close",
    ) -> None:
        if fsync not in ("close", "always"):
            raise UsageError(f"fsync must be 'close' or 'always', not {fsync!r}")
        self.path = Path(path)
        self.loop = loop
        self.fsync: FsyncPolicy = fsync
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lines = LineBuilder()
        file_or_absent(self.path, "ledger")  # not a folder, a FIFO, a device
        self._file = AppendFile(self.path, fsync)
        self.run: str = run or self._file.last_run or new_run_id()

    # -- writing -------------------------------------------------------------------------

    def append(self, event: Mapping[str, Any] | LedgerEvent) -> LedgerEvent:
        """Store one event and return it as stored (with `run`, `seq` and `ts` set).

        `event` is a dict or a `LedgerEvent`. The writer always assigns `seq` (the next
        number of the event's run); it stamps `ts` with the current UTC time when the
        event has none, and fills `run` and `loop` from the ledger when missing.
        Raises `LedgerError` (nothing written) when the event breaks the format.
        """
        return self.append_many([event])[0]

    def append_many(self, events: Iterable[Mapping[str, Any] | LedgerEvent]) -> list[LedgerEvent]:
        """Store several events together: one lock, one write; all of them or none.

        Each event is filled and numbered as by `append`, in order. If any is invalid,
        `LedgerError` lists the problems of every one (keys prefixed ``[i].``) and
        nothing is written. A loop hands it the events of one act.
        """
        drafts = cast(list[LedgerEvent], self._checked(list(events)))
        file = self._file
        with file.thread_lock, file.lock:
            seqs = file.numbers([d.run for d in drafts])
            stored = [d.model_copy(update={"seq": seq}) for d, seq in zip(drafts, seqs,
                                                                          strict=True)]
            try:
                data = "".join(e.to_line() + "\n" for e in stored).encode("utf-8")
            except (PydanticSerializationError, UnicodeEncodeError) as exc:
                raise self._not_json(exc) from None
            file.write(data, [(e.run, e.seq) for e in stored])
        return stored

    def _checked(self, items: list[Any], settled: list[Line | None] | None = None
                 ) -> list[Line | LedgerEvent]:
        """Each event of `items` as the model's draft, or as `settled` already has it;
        every problem of every event in one `LedgerError` (keys prefixed ``[i].``)."""
        checked: list[Line | LedgerEvent] = []
        problems: list[Problem] = []
        for index, event in enumerate(items):
            quick = settled[index] if settled is not None else None
            if quick is not None:
                checked.append(quick)
                continue
            try:  # what the quick rules cannot settle: the model decides (and explains)
                checked.append(self._draft(event))
            except ValidationError as exc:
                found = validation_problems(exc, path=str(self.path))
                if len(items) > 1:
                    found = [replace(p, key=f"[{index}].{p.key}" if p.key else f"[{index}]")
                             for p in found]
                problems.extend(found)
        if problems:
            what = "the event is" if len(items) == 1 else "events are"
            raise LedgerError(f"cannot append to {self.path}: {what} not valid", problems)
        return checked

    def append_batch(self, events: Iterable[Mapping[str, Any]]) -> int:
        """Store engine-built events (dicts) as whole lines under one lock and one write;
        all of them or none. Returns how many were stored.

        The path of loops (the events of one act), simulations and replays (thousands of
        events at once: hand them over in batches of a few thousand to bound memory).
        Each event is filled and numbered as by `append`, in order; it is checked by the
        model's rules without building a model (see the module docstring; the keys and
        value types of each shape of event checked once) and written by the model's own
        serialiser (`pydantic_core.to_json`), so the lines are the ones `append_many`
        would store and any `LedgerError` (keys prefixed ``[i].``) is the one it raises.
        One batch is one ``write`` on the ``O_APPEND`` descriptor, under the file lock:
        it lands whole before this returns (a ``kill -9`` afterwards loses nothing), and
        other writers' lines never interleave with it. ``fsync`` follows the ledger's
        policy (``fsync="always"``: once per batch).
        """
        items = events if type(events) is list else list(events)
        check, run, loop = self._lines.quick, self.run, self.loop
        fast = [check(event, run, loop) for event in items]
        file = self._file
        if None not in fast:  # the usual batch: every event settled by the quick rules
            settled = cast("list[Line]", fast)
            run = settled[0].run if settled else ""
            if settled and all(line.run == run for line in settled):  # the usual act
                file.write_run(run, [(line.head, line.body) for line in settled])
                return len(settled)
            with file.thread_lock, file.lock:
                seqs = file.numbers([line.run for line in settled])
                data = b"".join([line.line(seq)
                                 for line, seq in zip(settled, seqs, strict=True)])
                file.write(data, list(zip([line.run for line in settled], seqs, strict=True)))
            return len(settled)
        lines = self._checked(items, fast)
        with file.thread_lock, file.lock:
            seqs = file.numbers([item.run for item in lines])
            parts: list[bytes] = []
            try:
                for item, seq in zip(lines, seqs, strict=True):
                    if isinstance(item, Line):
                        parts.append(item.line(seq))
                    else:
                        parts.append(item.model_copy(update={"seq": seq}).to_line()
                                     .encode("utf-8") + b"\n")
            except (PydanticSerializationError, UnicodeEncodeError) as exc:
                raise self._not_json(exc) from None
            file.write(b"".join(parts), list(zip((i.run for i in lines), seqs, strict=True)))
        return len(lines)

    def append_built(self, events: Sequence[Mapping[str, Any]]) -> int:
        """Store the events of one act that a crewbook engine built itself; returns how
        many were stored. The trusted path of `Loop.report` (`crewbook.core.append_events`).

        Validation belongs at the boundary: an engine checks the report it is handed, then
        builds its events from checked values, in the shapes it always builds. So only what
        is cheap and could still carry a bad value from a report is checked here (each
        value's type, exactly; the kind and the fields it needs; counts, cost, run and
        loop), by straight-line code made once per key set (`shapes.builder`; a key set with a
        None field takes the shape plans instead); a ``ts`` in the forms
        `datetime.isoformat` gives for a UTC time is taken as written (others are parsed as
        by `append_batch`), and payloads are not walked. The line is the one `append_batch`
        writes: same fields, same order, the model's serialiser. Anything outside these
        forms (an event of a new shape, several runs in one act, a value that is not JSON)
        goes through `append_batch`, whole, so its refusals stay the model's. Same
        guarantees as `append_batch`: one lock and one ``write`` of whole lines, landed
        before this returns. Outside callers use `append`, `append_many` or `append_batch`.

        The lines are numbered and written out before the lock is taken, from this
        writer's count of the run; under the lock one ``lseek`` says whether anybody else
        wrote since, and only then are they caught up with and numbered again.
        """
        items = events if type(events) is list else list(events)
        file = self._file
        act = self._lines.built(items, self.run, self.loop, file.seqs)
        if act is None:  # outside the builders' forms, not JSON, or nothing: the general path
            return self.append_batch(items)
        file.land(act)
        return len(act[1])

    def _not_json(self, exc: Exception) -> LedgerError:
        return LedgerError(f"cannot append to {self.path}: an event is not JSON", [
            Problem("ledger_bad_event", f"cannot write it as JSON: {exc}; keep "
                    "payload to JSON values (text, numbers, lists, dicts)",
                    str(self.path), key="payload")])

    def _draft(self, event: Mapping[str, Any] | LedgerEvent) -> LedgerEvent:
        """The event validated, with run, loop and ts filled in (seq comes later)."""
        data = event.model_dump() if isinstance(event, LedgerEvent) else dict(event)
        if data.get("run") is None:
            data["run"] = self.run
        if data.get("loop") is None and self.loop is not None:
            data["loop"] = self.loop
        if data.get("ts") is None:
            data["ts"] = datetime.now(UTC)
        data["seq"] = 0  # placeholder: validated now, numbered under the lock
        return LedgerEvent.model_validate(data)

    def close(self) -> None:
        """fsync and close the file; appending afterwards raises ValueError."""
        self._file.close()

    @property
    def closed(self) -> bool:
        """Whether `close` was called."""
        return self._file.fd is None

    def __enter__(self) -> Ledger:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- reading back ----------------------------------------------------------------------

    @property
    def events(self) -> int:
        """Complete events in the file (all runs) as last seen by this writer (counting
        them reads the part of the file opening skipped, streamed)."""
        file = self._file
        if file.head:
            with file.thread_lock, file.lock:
                file.scan_head()
        return file.events

    @property
    def next_seq(self) -> int:
        """The `seq` the next event of this ledger's run will get."""
        file = self._file
        if file.head and self.run not in file.seqs:
            with file.thread_lock, file.lock:
                file.seek([self.run])
        return file.seqs.get(self.run, 0)

    def read(self, **kwargs: Any) -> pd.DataFrame:
        """The whole file as a DataFrame (`read_ledger` on this path)."""
        from .reader import read_ledger

        return read_ledger(self.path, **kwargs)

    # -- display --------------------------------------------------------------------------

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        file = self._file
        events = f"{file.events}+" if file.head else str(file.events)  # no scan here
        return (f"Ledger({str(self.path)!r}, run={self.run!r}, events={events}, "
                f"next_seq={self.next_seq}, {state})")

    def _repr_html_(self) -> str:
        rows = [
            ("file", str(self.path)), ("run", self.run), ("loop", self.loop or "(per event)"),
            ("events in file", f"{self._file.events:,}" + ("+" if self._file.head else "")),
            ("events in this run", f"{self.next_seq:,}"),
            ("fsync", self.fsync), ("state", "closed" if self.closed else "open"),
        ]
        body = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                       f"<td><code>{html.escape(v)}</code></td></tr>" for k, v in rows)
        return f"<table class='crewbook-ledger'><caption>Ledger</caption>{body}</table>"
