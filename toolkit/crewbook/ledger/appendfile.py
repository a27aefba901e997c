"""The ledger file under the writer (`crewbook.ledger.writer.Ledger`): its descriptor, its
lock, and what this writer knows of it (each run's next `seq`, the events counted, the
bytes accounted for).

`AppendFile` opens the file for appending (``O_APPEND``), locks it (``flock`` on the
file itself on POSIX; a ``<ledger>.lock`` file via filelock elsewhere), catches up with
what other writers appended (streamed, bounded memory; Arrow for big stretches), seals
a line a dead writer cut short, and writes whole lines with one ``write``. Opening a big
file reads its tail only; the part before is scanned when a run it may hold is asked
for. Lines reach this layer written out (`crewbook.ledger.linebuild`); it numbers them.
"""

from __future__ import annotations

import json
import os
import threading
import warnings
import weakref
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Final, Literal

from filelock import FileLock

try:  # POSIX: lock the ledger file itself, a few syscalls per append
    import fcntl
except ImportError:  # pragma: no cover - Windows: a lock file beside the ledger
    fcntl = None  # type: ignore[assignment]

from ..errors import UsageError
from .filebytes import last_seq, needles, read_at, size_of, write_all
from .linebuild import Built, numbered

if fcntl is not None:
    _LOCK_EX: Final = fcntl.LOCK_EX
    _LOCK_UN: Final = fcntl.LOCK_UN
    #: Looked up once: `AppendFile.land` calls them on every act.
    flock: Final = fcntl.flock
#: Looked up once: `AppendFile.land` calls them on every act.
lseek, SEEK_END = os.lseek, os.SEEK_END

FsyncPolicy = Literal["close", "always"]

#: Catching up on more than this many bytes uses Arrow instead of a Python loop.
_ARROW_SCAN_BYTES: Final = 1 << 20
#: Bytes read at the end of the file when a ledger is opened (its last events).
_TAIL_BYTES: Final = 1 << 20
#: Bytes read at once when a ledger is scanned: memory stays bounded on any file.
_STREAM_BYTES: Final = 16 << 20


class _FlockLock:
    """An exclusive `flock` on the ledger's own descriptor, shared by no other writer.

    `flock` locks belong to the open file description, so two `Ledger` objects (in one
    process or in several) exclude each other, while the descriptor stays open.
    """

    def __init__(self, descriptor: Callable[[], int]) -> None:
        self._descriptor = descriptor  # raises once the ledger is closed
        self._fd: int | None = None

    def __enter__(self) -> object:
        self._fd = self._descriptor()
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            self._fd = None



class AppendFile:
    """One ledger file opened for appending, with this writer's count of it.

    ``seqs`` (run → next `seq`), ``events`` (complete lines counted), ``scanned`` (bytes
    accounted for), ``head`` (bytes before this were not scanned yet: opening reads the
    tail) and ``last_run`` are what the writer knows; they change under the locks only.
    """

    def __init__(self, path: Path, fsync: FsyncPolicy) -> None:
        self.path = path
        self.fsync: FsyncPolicy = fsync
        self.thread_lock = threading.Lock()
        self.fd: int | None = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        self._finalizer = weakref.finalize(self, os.close, self.fd)
        self.lock: AbstractContextManager[object] = (
            _FlockLock(self.require_open) if fcntl is not None else FileLock(f"{path}.lock")
        )
        self.scanned = 0
        self.seqs: dict[str, int] = {}
        self.events = 0
        self.last_run: str | None = None
        self.head = 0
        with self.lock:
            self._open_tail()
            self.catch_up()

    def require_open(self) -> int:
        """The descriptor; `UsageError` once closed."""
        if self.fd is None:
            raise UsageError(f"the ledger {self.path} is closed; open a new Ledger to append")
        return self.fd

    def close(self) -> None:
        """fsync and close the file (again: nothing)."""
        with self.thread_lock:
            if self.fd is None:
                return
            try:
                os.fsync(self.fd)
            finally:
                self._finalizer()
                self.fd = None

    # -- writing -------------------------------------------------------------------------

    def land(self, act: Built) -> None:
        """Write the lines of one act (numbered from `seqs` before the lock) with one
        lock, one ``lseek`` and one ``write``; if anybody else wrote since they were
        numbered, catch up and number them again first."""
        run, bodies, first, data = act
        with self.thread_lock:
            fd = self.fd
            if fd is None or fcntl is None:  # closed (refused there), or Windows: the lock file
                fd = self.require_open()
                with self.lock:
                    self._land_locked(fd, run, bodies, first, data)
                return
            flock(fd, _LOCK_EX)
            try:
                seqs = self.seqs
                if lseek(fd, 0, SEEK_END) == self.scanned and seqs.get(run, 0) == first \
                        and (not self.head or run in seqs):
                    # nobody else wrote since the lines were numbered: the usual act (its
                    # lines still reach the file through `write`, the one place they do)
                    self.write(data, [(run, first)] if len(bodies) == 1 else
                               [(run, seq) for seq in range(first, first + len(bodies))])
                else:
                    self._land_locked(fd, run, bodies, first, data)
            finally:
                flock(fd, _LOCK_UN)

    def _land_locked(self, fd: int, run: str, bodies: list[dict[str, Any]], first: int,
                     data: bytes) -> None:
        try:
            end = os.lseek(fd, 0, os.SEEK_END)
        except OSError:  # cannot seek: catch up
            end = -1
        if end != self.scanned or first != self.seqs.get(run, 0) or (
                self.head and run not in self.seqs):  # somebody else wrote
            first = self.numbers([run])[0]
            data = numbered(bodies, first) or b""  # JSON already: the caller wrote it out
        self.write(data, [(run, first)] if len(bodies) == 1 else
                   [(run, seq) for seq in range(first, first + len(bodies))])

    def write_run(self, run: str, lines: list[tuple[bytes, bytes]]) -> None:
        """Number one run's lines (each a head and a body around its `seq`) and write them
        at once, under the locks: one ``flock``, one ``lseek`` to see whether anybody else
        wrote since (then catch up first), one ``write``."""
        with self.thread_lock:
            fd = self.require_open()
            if fcntl is None:  # pragma: no cover - Windows: the lock file
                with self.lock:
                    self._numbered_write(fd, run, lines)
                return
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                self._numbered_write(fd, run, lines)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def _numbered_write(self, fd: int, run: str, lines: list[tuple[bytes, bytes]]) -> None:
        if size_of(fd) == self.scanned and (not self.head or run in self.seqs):
            first = self.seqs.get(run, 0)  # nobody else wrote meanwhile
        else:
            first = self.numbers([run])[0]
        if len(lines) == 1:
            head, body = lines[0]
            data = b'%b,"seq":%d%b\n' % (head, first, body)
        else:
            data = b"".join([b'%b,"seq":%d%b\n' % (head, first + i, body)
                             for i, (head, body) in enumerate(lines)])
        self.write(data, [(run, seq) for seq in range(first, first + len(lines))])

    def numbers(self, runs: list[str]) -> list[int]:
        """The next `seq` of each event's run, in order (call under the locks)."""
        self.catch_up()
        if self.head and any(run not in self.seqs for run in runs):
            self.seek(runs)  # a run the tail did not show: its seq is further back
        seqs = self.seqs
        if len(runs) == 1:
            return [seqs.get(runs[0], 0)]
        if len(set(runs)) == 1:  # the usual batch: one run's events, numbered in a row
            first = seqs.get(runs[0], 0)
            return list(range(first, first + len(runs)))
        taken: dict[str, int] = {}
        out: list[int] = []
        for run in runs:
            seq = taken.get(run)
            if seq is None:
                seq = seqs.get(run, 0)
            taken[run] = seq + 1
            out.append(seq)
        return out

    def write(self, data: bytes, numbered: list[tuple[str, int]]) -> None:
        """One write of whole lines (call under the locks), then account for them: every
        path's lines reach the file here."""
        fd = self.fd
        if fd is None:
            fd = self.require_open()  # refused
        size = len(data)
        if size:
            written = os.write(fd, data)
            if written != size:  # rare (a full disk, a signal): write the rest
                write_all(fd, data[written:])
            if self.fsync == "always":
                os.fsync(fd)
        self.scanned += size
        if numbered:
            next_seq = self.seqs
            for run, seq in numbered:  # `_count`, inline: every act comes here
                if seq >= next_seq.get(run, 0):
                    next_seq[run] = seq + 1
            self.events += len(numbered)
            self.last_run = run

    # -- reading what is there ---------------------------------------------------------

    def _count(self, run: str, seq: int) -> None:
        if seq >= self.seqs.get(run, 0):
            self.seqs[run] = seq + 1
        self.events += 1
        self.last_run = run

    def _open_tail(self) -> None:
        """Account for the file from its last events only (read backwards, at most
        `_TAIL_BYTES`): the run of the last event and its next `seq`. The rest of the file
        is scanned (streamed) only when a run it may hold is asked for (`_scan_head`)."""
        fd = self.require_open()
        size = os.fstat(fd).st_size
        if size <= _TAIL_BYTES:
            return  # small: `_catch_up` reads it all at once
        end = size
        start = end - _TAIL_BYTES
        data = read_at(fd, start, end - start)
        complete = data.rfind(b"\n") + 1
        if not complete:
            return  # no whole line in the tail: scan everything, as before
        lines = data[:complete].splitlines()
        for raw in reversed(lines[1:]):  # the window's first line may be cut
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            run = obj.get("run") if isinstance(obj, dict) else None
            seq = obj.get("seq") if isinstance(obj, dict) else None
            if isinstance(run, str) and isinstance(seq, int) and not isinstance(seq, bool):
                self.seqs[run] = seq + 1  # a run's seq only grows along the file
                self.last_run = run
                self.head = self.scanned = start + complete
                return

    def seek(self, runs: list[str]) -> None:
        """Find the next `seq` of each of `runs` the tail did not show, reading the skipped
        part of the file backwards until its last event appears (a run absent from the
        whole file is new: `seq` 0). Call under the lock.

        Chunks are searched for the run's JSON text (``bytes.rfind``, no parsing) and only
        the lines holding it are parsed, so a run appended to lately costs a little read and
        a new run one pass of byte search, not a parse of the whole file. A line that could
        spell the run another way (an ASCII character written ``\\u00XX``) is parsed too;
        a run id with other characters falls back to the full scan (`_scan_head`)."""
        wanted = {run: needles(run) for run in runs if run not in self.seqs}
        if not all(wanted.values()):
            self.scan_head()
            return
        fd = self.require_open()
        end = self.head
        while wanted and end > 0:
            start = max(0, end - _STREAM_BYTES)
            chunk = read_at(fd, start, end - start)
            cut = chunk.find(b"\n") + 1 if start else 0  # the first line may be cut
            if start and not cut:  # one line longer than a chunk: scan it all, as before
                self.scan_head()
                return
            escaped = chunk.find(b"\\", cut) >= 0 and chunk.find(b"\\u00", cut) >= 0
            for run, marks in list(wanted.items()):
                seq = last_seq(chunk, cut, run, marks, escaped)
                if seq is not None:
                    self.seqs[run] = seq + 1  # a run's seq only grows along the file
                    del wanted[run]
            end = start + cut
        for run in wanted:
            self.seqs[run] = 0  # nowhere in the file: a new run

    def scan_head(self) -> None:
        """Scan the part of the file opening skipped (streamed, bounded memory), so every
        run's next `seq` and the count of events are known. Call under the lock."""
        fd = self.require_open()
        known, last = dict(self.seqs), self.last_run
        tail_events = self.events
        self.seqs, self.events = {}, 0
        offset = 0
        while offset < self.head:
            chunk = read_at(fd, offset, min(_STREAM_BYTES, self.head - offset))
            complete = chunk.rfind(b"\n") + 1
            if not complete:  # one line longer than a chunk: take it whole
                complete = len(chunk)
            self._scan(chunk[:complete])
            offset += complete
        self.events += tail_events
        for run, seq in known.items():
            self.seqs[run] = max(self.seqs.get(run, 0), seq)
        self.last_run = last
        self.head = 0

    def catch_up(self) -> None:
        """Account for lines other writers appended; seal a line a dead writer cut short.

        Called with the file lock held, so no writer is mid-write: bytes after the last
        newline can only be a cut line.
        """
        fd = self.require_open()
        size = size_of(fd)
        if size < self.scanned:  # the file was truncated or replaced: start over
            self.scanned, self.events, self.seqs, self.head = 0, 0, {}, 0
        while size - self.scanned > _STREAM_BYTES:  # streamed: memory stays bounded
            chunk = read_at(fd, self.scanned, _STREAM_BYTES)
            complete = chunk.rfind(b"\n") + 1 or len(chunk)
            self._scan(chunk[:complete])
            self.scanned += complete
        if size == self.scanned:
            return
        chunk = read_at(fd, self.scanned, size - self.scanned)
        complete = chunk.rfind(b"\n") + 1
        if complete:
            self._scan(chunk[:complete])
        self.scanned += complete
        tail = chunk[complete:]
        if tail:
            write_all(fd, b"\n")
            self.scanned += len(tail) + 1
            warnings.warn(
                f"{self.path}: the last line was cut short (a writer died mid-write); "
                "sealed it with a newline so new events stay whole; readers leave it out",
                stacklevel=4,
            )

    def _scan(self, data: bytes) -> None:
        if len(data) >= _ARROW_SCAN_BYTES and self._scan_arrow(data):
            return
        for raw in data.splitlines():
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(obj, dict):
                continue
            run, seq = obj.get("run"), obj.get("seq")
            if isinstance(run, str) and isinstance(seq, int) and not isinstance(seq, bool):
                self._count(run, seq)

    def _scan_arrow(self, data: bytes) -> bool:
        """Fast catch-up on a big file; False when Arrow refuses it (then go line by line)."""
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.json as pj

        schema = pa.schema([("run", pa.string()), ("seq", pa.int64())])
        try:
            table = pj.read_json(
                pa.BufferReader(pa.py_buffer(data)),
                parse_options=pj.ParseOptions(explicit_schema=schema,
                                              unexpected_field_behavior="ignore"),
            )
        except (pa.ArrowException, ValueError):
            return False
        table = table.filter(pc.and_(pc.is_valid(table["run"]), pc.is_valid(table["seq"])))
        if table.num_rows == 0:
            return True
        for row in table.group_by("run").aggregate([("seq", "max")]).to_pylist():
            self.seqs[row["run"]] = max(self.seqs.get(row["run"], 0),
                                             row["seq_max"] + 1)
        self.events += table.num_rows
        self.last_run = table["run"][-1].as_py()
        return True
