"""Turn the bytes of one ledger file into an Arrow table of events, checking every rule.

The happy path is one call to ``pyarrow.json.read_json`` with an explicit schema
(multi-threaded C++, no Python loop over lines), then vectorised checks of the rules
of `LedgerEvent` on whole columns. Only when Arrow refuses a block (bad JSON, a wrong
type, a payload key whose type changes) is the block split in halves until the
refused part is small, and that small part is read line by line with `json` and
`LedgerEvent`, so one bad line in a million costs milliseconds, not a Python pass
over the file.

That first read does not infer the payload: Arrow checks it is an object and skips its
keys and any unknown top-level key. A msgspec decode of each piece of the block then
gives each payload's text as written, and vouches that every top-level key is a field
(`known_keys`); a piece it cannot vouch for (an unknown key, null-valued ones too: the
model refuses them) is decoded line by line as dicts, which names the unknown keys, and
only what that decode refuses is read from its bytes (`payloads.line_payloads`). Only
when the payloads are not UTF-8 is the block read again with every key inferred. Arrow
reads a file's next block in a thread while this one is checked.

A line cut short (what a crash mid-write leaves: the line is the prefix of some JSON
text) is never an error: it is left out with a warning, wherever it is. Any other
bad line is an error that the caller raises or skips.
"""

from __future__ import annotations

import functools
import io
import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from ..errors import Problem, did_you_mean
from .events import (
    FIELDS,
    KINDS,
    MINIMUMS,
    REQUIRED_BY_KIND,
    missing_message,
)
from .known_keys import as_payloads, decoded_pieces, keyed_payloads, text_array
from .lines import BAD_EVENT, EMPTY, cut_short, parse_line, truncated
from .payloads import TEXT, LinePayloads, equal, line_payloads, parse_payload, payload_text

#: Columns read by Arrow with a fixed type (`payload` is inferred for the checks, then
#: kept as JSON text: see `payloads`).
ARROW_SCHEMA: Final = pa.schema([
    ("v", pa.int64()),
    ("ts", pa.timestamp("ns", tz="UTC")),
    ("run", pa.string()),
    ("seq", pa.int64()),
    ("loop", pa.string()),
    ("kind", pa.string()),
    ("role", pa.string()),
    ("stage", pa.string()),
    ("verdict", pa.string()),
    ("attempt", pa.int64()),
    ("version", pa.int64()),
    ("summary", pa.string()),
    ("tokens_in", pa.int64()),
    ("tokens_out", pa.int64()),
    ("cost", pa.float64()),
    ("duration_ms", pa.int64()),
])
FIXED: Final[tuple[str, ...]] = tuple(ARROW_SCHEMA.names)
#: The fast read: the fixed columns, and `payload` checked to be an object (or null)
#: but not read (its keys ignored); unknown top-level keys are found by `line_payloads`.
FAST_SCHEMA: Final = ARROW_SCHEMA.append(pa.field("payload", pa.struct([])))

#: A refused block at most this many lines long is read line by line.
SMALL_BLOCK: Final = 256
#: A file is read at most this many bytes at a time (whole lines), so reading needs
#: memory for the frame and one block, not for the whole file as well. A block's
#: transient memory is several times its size: a big share of the peak for a file of
#: tens of MB, less for one of hundreds. On 300,000 events (74-134 MB) 2 MiB blocks
#: peak at 1.4-2.2x the frame, 4 MiB ones at 1.4-2.5x, in the same time.
FILE_BLOCK: Final = 2 << 20
#: ... and at least this many (files below `SMALL_FILE` bytes). On 100,000 events
#: (25 MB) 1 MiB blocks peak at 2.0-2.3x the frame, 2 MiB ones at 2.7-2.8x; they cost
#: about a tenth more time (within this 2-core machine's noise).
MIN_FILE_BLOCK: Final = 1 << 20
SMALL_FILE: Final = 64 << 20
#: Freed heap pages are handed back to the system every this many bytes read (see
#: `trim_heap`).
TRIM_EVERY: Final = 4 << 20
#: The smallest block Arrow's threads are given.
ARROW_BLOCK: Final = 64 << 10



@dataclass
class Parsed:
    """The events of one file: fixed columns, payload texts (if asked), and the problems.

    `texts` holds each event's payload as compact JSON (see `payloads`); `payloads`
    parses them into dicts (for tests and small reads).
    """

    table: pa.Table
    texts: pa.ChunkedArray | None
    problems: list[Problem] = field(default_factory=list)

    @property
    def payloads(self) -> list[dict[str, Any]] | None:
        """The payloads as dicts (parsed now), or None when they were not read."""
        if self.texts is None:
            return None
        return [parse_payload(t) for t in self.texts.to_pylist()]


def parse_bytes(data: bytes, name: str, *, with_payload: bool = True) -> Parsed:
    """Every valid event of `data` (a whole ledger file); bad lines become problems.

    Rows of the returned table are the valid events, in file order. Error problems
    name lines that were left out; the caller decides whether that is fatal.
    """
    return _Parser(data, name, with_payload).run()


def parse_file(path: str | os.PathLike[str], name: str, *, with_payload: bool = True,
               block: int | None = None) -> Parsed:
    """`parse_bytes` of a file, read `block` bytes (whole lines) at a time (by default
    `file_block` of its size): the same result, with line numbers counted from the
    start of the file."""
    parts: list[Parsed] = []
    line0 = 0
    blank = True
    with open(path, "rb") as handle, ThreadPoolExecutor(1) as pool:
        size = os.fstat(handle.fileno()).st_size
        if block is None:
            block = file_block(size)
        exact = not with_payload
        # one buffer for every block's per-byte masks (a block is `block` bytes plus
        # the start of a line carried over, at most the file; a longer one, or a file
        # grown since, gets masks of its own)
        scratch = np.empty(min(block, size) + ARROW_BLOCK, dtype=bool)
        ahead: tuple[bytearray, Future[pa.Table | None]] | None = None
        read = untrimmed = 0
        for data in _whole_lines(handle, block):
            read += len(data)
            untrimmed += len(data)
            if untrimmed >= TRIM_EVERY:
                trim_heap()
                untrimmed = 0
            # Arrow reads the next block (in its threads, GIL released) while this one
            # is checked and sliced: the serial Python/numpy part overlaps Arrow's
            if data.endswith(b"\n"):
                following = (data, pool.submit(arrow_read, pa.py_buffer(data),
                                               with_payload, exact))
            else:
                following = None
            if ahead is not None:
                line0, blank = _parse_block(ahead[0], ahead[1], name, with_payload, line0,
                                            blank, parts, scratch)
            ahead = following
            if following is None:
                line0, blank = _parse_block(data, None, name, with_payload, line0, blank,
                                            parts, scratch)
            del data, following
        if ahead is not None:
            line0, blank = _parse_block(ahead[0], ahead[1], name, with_payload, line0, blank,
                                        parts, scratch)
        del ahead
        if not parts:
            parts.append(_Parser(b"", name, with_payload, line0, whole=False).run())
    del scratch
    if read >= MIN_FILE_BLOCK:  # the last blocks' garbage, before the frame is built
        trim_heap()
    problems = [p for part in parts for p in part.problems]
    if blank and not problems:
        problems.append(_empty_problem(name))
    if len(parts) == 1:
        return Parsed(parts[0].table, parts[0].texts, problems)
    tables = [part.table for part in parts if part.table.num_rows] or [_empty_table()]
    texts = None
    if with_payload:
        texts = pa.chunked_array([c for part in parts if part.texts is not None
                                  for c in part.texts.chunks], type=TEXT)
    return Parsed(concat(tables), texts, problems)


def _whole_lines(handle: io.BufferedIOBase, block: int) -> Iterator[bytearray]:
    """The bytes of `handle`, about `block` at a time, each piece whole lines (the last
    one maybe not ending with a newline).

    Each piece is read into a buffer of its own (the carried-over part of a line
    first), then cut at its last newline in place: no piece is ever copied whole, so
    reading holds one block's bytes, not two or three."""
    rest = b""
    while True:
        data = bytearray(len(rest) + block)
        data[:len(rest)] = rest
        with memoryview(data) as view, view[len(rest):] as into:
            got = handle.readinto(into) or 0
        size = len(rest) + got
        if not got:
            del data[size:]
            if data:
                yield data
            return
        cut = data.rfind(b"\n", 0, size) + 1
        if cut == 0:  # no newline yet: a line longer than the block, read on
            del data[size:]
            rest = bytes(data)
            continue
        rest = bytes(data[cut:size])
        del data[cut:]  # in place: a bytearray shrinks without a copy
        yield data
        del data


def _parse_block(data: bytes | bytearray, ahead: Future[pa.Table | None] | None, name: str,
                 with_payload: bool, line0: int, blank: bool, parts: list[Parsed],
                 scratch: np.ndarray[Any, np.dtype[np.bool_]] | None = None,
                 ) -> tuple[int, bool]:
    """Parse one piece of a file into `parts`: (lines so far, all blank so far)."""
    parser = _Parser(data, name, with_payload, line0, whole=False, ahead=ahead,
                     scratch=scratch)
    parts.append(parser.run())
    if parser.ahead is not None:  # not used (a cut last line): wait for it all the same
        parser.ahead.result()
    return line0 + parser.newline_count(), blank and not _NOT_SPACE.search(data)


def arrow_read(buf: pa.Buffer, with_payload: bool, exact: bool) -> pa.Table | None:
    """Arrow's reading of the JSON lines in `buf`, or None when Arrow refuses them.
    `exact` infers every key not in the schema (payload too); else the payload is read
    as an empty object (fast; the keys are then checked by `_Parser.accept`)."""
    if not with_payload:
        options = pj.ParseOptions(explicit_schema=ARROW_SCHEMA,
                                  unexpected_field_behavior="ignore")
    elif exact:
        options = pj.ParseOptions(explicit_schema=ARROW_SCHEMA,
                                  unexpected_field_behavior="infer")
    else:
        options = pj.ParseOptions(explicit_schema=FAST_SCHEMA,
                                  unexpected_field_behavior="ignore")
    try:
        table = pj.read_json(pa.BufferReader(buf), parse_options=options,
                             memory_pool=reader_pool(),
                             read_options=_read_options(len(buf), with_payload))
        table.validate(full=True)  # Arrow's JSON reader lets invalid UTF-8 through
        _field_names(table.schema)  # ... even in keys, which validate() does not check
    except (pa.ArrowException, ValueError):  # ArrowInvalid, bad UTF-8...
        return None
    return table


def file_block(size: int) -> int:
    """How many bytes of a file of `size` bytes to read at a time (see `FILE_BLOCK`)."""
    return MIN_FILE_BLOCK if size < SMALL_FILE else FILE_BLOCK


class _Parser:
    def __init__(self, data: bytes | bytearray, name: str, with_payload: bool, line0: int = 0,
                 *, whole: bool = True, ahead: Future[pa.Table | None] | None = None,
                 scratch: np.ndarray[Any, np.dtype[np.bool_]] | None = None) -> None:
        self.data = data
        self.ahead = ahead  # Arrow's first reading of the whole of `data`, made ahead
        self.buf = pa.py_buffer(data)
        self.name = name
        self.with_payload = with_payload
        self.line0 = line0  # lines of the file before `data`
        self.whole = whole  # `data` is the whole file (say when it is empty)
        self.scratch = scratch  # a bool buffer for per-byte masks (see `payloads.equal`)
        self._newlines: np.ndarray[Any, np.dtype[np.int64]] | None = None
        self.tables: list[pa.Table] = []
        self.texts: list[pa.Array] = []
        self.problems: list[Problem] = []

    # -- line geometry (computed only when something needs line numbers) --------------

    @property
    def newlines(self) -> np.ndarray[Any, np.dtype[np.int64]]:
        if self._newlines is None:
            raw = np.frombuffer(self.data, dtype=np.uint8)
            self._newlines = np.flatnonzero(equal(raw, 10, self.scratch)).astype(np.int64)
        return self._newlines

    @property
    def n_lines(self) -> int:
        nl = self.newlines
        tail = len(self.data) - (int(nl[-1]) + 1 if len(nl) else 0)
        return len(nl) + (1 if tail > 0 else 0)

    def span(self, lo: int, hi: int) -> tuple[int, int]:
        """Byte range of lines [lo, hi) (0-based line indexes)."""
        nl = self.newlines
        start = 0 if lo == 0 else int(nl[lo - 1]) + 1
        end = int(nl[hi - 1]) + 1 if hi - 1 < len(nl) else len(self.data)
        return start, end

    def line_bytes(self, i: int) -> bytes:
        start, end = self.span(i, i + 1)
        return bytes(self.data[start:end])

    def nonblank(self, lo: int, hi: int) -> np.ndarray[Any, np.dtype[np.int64]]:
        """Indexes of the lines in [lo, hi) that hold something besides white space."""
        nl = self.newlines
        starts = np.concatenate(([0], nl + 1))[lo:hi]
        ends = np.append(nl, len(self.data))[lo:hi]
        lengths = ends - starts
        keep = lengths > 0
        for j in np.flatnonzero(keep & (lengths < 16)):  # rare: short lines may be blank
            if not self.data[int(starts[j]):int(ends[j])].strip():
                keep[j] = False
        return np.flatnonzero(keep).astype(np.int64) + lo

    # -- the passes ------------------------------------------------------------------

    def run(self) -> Parsed:
        end = len(self.data)
        if self.data and not self.data.endswith(b"\n"):
            cut = self.data.rfind(b"\n") + 1
            tail = bytes(self.data[cut:])
            if tail.strip() and cut_short(tail):
                line = self.line0 + self.data.count(b"\n") + 1
                self.problems.append(truncated(self.name, line, last=True))
                end = cut
        if not _NOT_SPACE.search(self.data, 0, end):
            if not self.problems and self.whole:
                self.problems.append(_empty_problem(self.name))
            return Parsed(_empty_table(), self._texts(), self.problems)
        if not self.take(0, end, None, self.count_rows(end)):
            last = self.n_lines if end == len(self.data) else self.n_lines - 1
            self.bisect(0, last)
        out = concat(self.tables) if self.tables else _empty_table()
        self.problems.sort(key=lambda p: (p.line or 0))
        return Parsed(out, self._texts(), self.problems)

    def _texts(self) -> pa.ChunkedArray | None:
        return pa.chunked_array(self.texts, type=TEXT) if self.with_payload else None

    def newline_count(self) -> int:
        """How many newlines `data` holds (from `newlines` when already found)."""
        return len(self._newlines) if self._newlines is not None else self.data.count(b"\n")

    def count_rows(self, end: int) -> int:
        """Number of non-blank lines in data[:end], `end` being the end of `data` or of
        its last newline (`run`): the newlines found once by numpy (`newlines`, kept for
        line numbers), and the bytes after them looked at for white space (2-3 times
        faster than a count and a regular expression over the bytes)."""
        data = self.data
        tail = 0 if data.endswith(b"\n", 0, end) else 1
        nl = self.newlines
        after = np.frombuffer(data, dtype=np.uint8)[nl[nl + 1 < end] + 1]
        maybe_blank = bool(np.isin(after, _SPACES).any()) or data[:1].isspace()
        lines = len(nl) + tail
        return len(self.nonblank(0, lines)) if maybe_blank else lines

    def take(self, start: int, end: int, rows: np.ndarray[Any, np.dtype[np.int64]] | None,
             expected: int) -> bool:
        """Read data[start:end] (`expected` events) and keep it, if Arrow accepts it: the
        fast way (payload not inferred) when it shows every key is known, else exactly
        (every key inferred, unknown ones reported)."""
        for exact in ((False, True) if self.with_payload else (True,)):
            table = self.arrow(start, end, exact=exact)
            if table is not None and table.num_rows == expected and self.accept(
                    table, rows, end, exact=exact):
                return True
        return False

    def arrow(self, start: int, end: int, *, exact: bool = True) -> pa.Table | None:
        """Arrow's reading of data[start:end], or None when Arrow refuses it (see
        `arrow_read`); the whole block's first read may have been made ahead."""
        if self.ahead is not None and (start, end, exact) == (0, len(self.data),
                                                              not self.with_payload):
            ahead, self.ahead = self.ahead, None
            return ahead.result()
        return arrow_read(self.buf.slice(start, end - start), self.with_payload, exact)

    def bisect(self, lo: int, hi: int) -> None:
        """Read lines [lo, hi): by Arrow if it accepts them, else split or go line by line."""
        if hi <= lo:
            return
        if hi - lo <= SMALL_BLOCK:
            self.line_by_line(lo, hi)
            return
        start, end = self.span(lo, hi)
        rows = self.nonblank(lo, hi)
        if self.take(start, end, rows, len(rows)):
            return
        mid = (lo + hi) // 2
        self.bisect(lo, mid)
        self.bisect(mid, hi)

    def accept(self, table: pa.Table, rows: np.ndarray[Any, np.dtype[np.int64]] | None,
               end: int, *, exact: bool = True) -> bool:
        """Check an Arrow-read block column by column; keep its valid rows.

        `rows` are the block's (non-blank) line indexes, None for every line before
        byte `end`; the payloads of the rows kept are taken from the lines as text.
        With the payloads, every top-level key that is not a field is refused, also
        when its value is null (Arrow's reading cannot tell a null from an absent key).
        A block read the fast way (not `exact`) whose skipped bytes are not UTF-8 gives
        False, and nothing is kept.
        """
        texts = None
        bad = check_table(table)
        if self.with_payload:
            found = self.payload_texts(rows, table.num_rows, end, check_utf8=not exact,
                                       present=functools.cache(lambda: _present(table)))
            if not found.readable:
                return False
            texts = found.texts
            flagged = {(row, key) for row, key, _ in bad}
            bad = sorted(bad + [(row, key, unknown_key(key)) for row, key in found.unknown
                                if (row, key) not in flagged])
        lines = rows
        if bad:
            lines = self.nonblank(0, self.n_lines) if rows is None else rows
            bad = [b for b in bad if not self.no_clock(b, lines)]
        keep = None
        if bad:
            assert lines is not None
            for index, key, message in bad:
                self.problems.append(Problem(BAD_EVENT, message, self.name,
                                             self.line0 + int(lines[index]) + 1, key=key))
            keep = np.ones(table.num_rows, dtype=bool)
            keep[sorted({index for index, _, _ in bad})] = False
        # narrowed first: the rows left out are then dropped from the narrow columns
        kept = narrow(compact(table.select(list(FIXED))))
        if keep is not None:
            kept = kept.filter(pa.array(keep))
        if texts is not None:
            self.texts.append(texts if keep is None else texts.filter(pa.array(keep)))
        self.tables.append(kept)
        return True

    def payload_texts(self, rows: np.ndarray[Any, np.dtype[np.int64]] | None, count: int,
                      end: int, *, check_utf8: bool = False,
                      present: Present | None = None,
                      ) -> LinePayloads:
        """The payload texts and unknown keys of the `count` lines `rows` (None: the
        first `count` non-blank lines), the last of which ends before byte `end` (see
        `line_payloads`)."""
        if rows is None:
            decoded = self.decoded_payloads(end, count, check_utf8, present)
            if decoded is not None:
                return decoded
            if count == self.n_lines or count == self.n_lines - (end < len(self.data)):
                rows = np.arange(count, dtype=np.int64)
            else:
                rows = self.nonblank(0, self.n_lines)[:count]
        nl = self.newlines
        starts = np.concatenate(([0], nl + 1))[rows].astype(np.int64)
        ends = np.append(nl, len(self.data))[rows].astype(np.int64)
        if len(starts) and starts[0] == 0 and self.data.startswith(_BOM):
            starts[0] = len(_BOM)
        return line_payloads(self.buf, starts, ends, reader_pool(), check_utf8=check_utf8,
                             present=None if present is None else present())

    def decoded_payloads(self, end: int, count: int, check_utf8: bool,
                         present: Present | None,
                         ) -> LinePayloads | None:
        """`payload_texts` of the first `count` non-blank lines, decoded piece by piece
        (`known_keys`); a piece holding a key that is not a field goes by `piece_keys`,
        which names the key; None when the lines decoded are not `count` (two objects on
        a line, say: then the block's bytes are read)."""
        start = len(_BOM) if self.data.startswith(_BOM) else 0
        pieces = decoded_pieces(self.data, start, end)
        every: list[bytes] = []
        unknown: list[tuple[int, str]] = []
        for first, stop, texts in pieces:
            if texts is None:  # a key that is not a field: the piece's keys, named
                keyed = self.piece_keys(first, stop, len(every), end, check_utf8, present)
                if isinstance(keyed, LinePayloads):  # bytes that are not UTF-8
                    return keyed
                texts, odd = keyed
                unknown += [(len(every) + row, key) for row, key in odd]
            every += texts
        if len(every) != count:
            return None
        pool = reader_pool()
        found = as_payloads(text_array(every, pool), pool, nulls=b"null" in every,
                            check_utf8=check_utf8)
        return replace(found, unknown=unknown) if found.readable else found

    def piece_keys(self, first: int, stop: int, done: int, end: int, check_utf8: bool,
                   present: Present | None,
                   ) -> tuple[list[bytes], list[tuple[int, str]]] | LinePayloads:
        """The payload texts and unknown keys (line, key) of the lines in
        ``data[first:stop]``, the first of which is the `done`-th non-blank line: each
        line decoded as a dict (`known_keys.keyed_payloads`), else from the bytes
        (`line_payloads`, whose answer is returned when it is not `readable`)."""
        rows = self.nonblank(self.line_at(first), self.line_at(stop - 1) + 1)
        keyed = keyed_payloads(self.data, first, stop)
        if keyed is not None and len(keyed[0]) == len(rows):
            return keyed
        found = self.payload_texts(
            rows, len(rows), end, check_utf8=check_utf8,
            present=None if present is None else lambda: present()[done:done + len(rows)])
        if not found.readable:
            return found
        return [text.encode() for text in found.texts.to_pylist()], found.unknown

    def line_at(self, byte: int) -> int:
        """The index of the line holding `byte`."""
        return int(np.searchsorted(self.newlines, byte))

    def no_clock(self, check: Check, rows: np.ndarray[Any, np.dtype[np.int64]]) -> bool:
        """Whether a null `ts` was written as ``"ts": null`` (an import from a log with
        no clock, allowed) rather than left out (an error)."""
        if check[1] != "ts":
            return False
        try:
            obj = json.loads(self.line_bytes(int(rows[check[0]])))
        except ValueError:
            return False
        return isinstance(obj, dict) and "ts" in obj and obj["ts"] is None

    def line_by_line(self, lo: int, hi: int) -> None:
        rows: list[dict[str, Any]] = []
        for i in range(lo, hi):
            raw = self.line_bytes(i)
            if not raw.strip():
                continue
            event = parse_line(raw, self.name, self.line0 + i + 1, self.problems,
                               first=i + self.line0 == 0)
            if event is not None:
                rows.append(event.model_dump())
        if rows:
            if self.with_payload:
                self.texts.append(pa.array([payload_text(row["payload"]) for row in rows],
                                           type=TEXT))
            self.tables.append(narrow(compact(pa.Table.from_pylist(
                [{k: row[k] for k in FIXED} for row in rows], schema=ARROW_SCHEMA))))


# -- vectorised checks (the rules of LedgerEvent, on whole columns) ---------------------

Check = tuple[int, str | None, str]


def check_table(table: pa.Table) -> list[Check]:
    """(row, key, message) for every rule of `LedgerEvent` a row breaks.

    Cheap tests come first (a column without nulls cannot miss a value; a minimum
    at or above the floor breaks nothing), so a valid file costs a few kernels.
    """
    found: list[Check] = []

    def flag(mask: pa.ChunkedArray | pa.Array, key: str | None,
             message: str | Callable[[int], str]) -> None:
        if not pc.any(mask).as_py():  # nulls are skipped: null means "not broken"
            return
        for row in pc.indices_nonzero(pc.fill_null(mask, False)).to_pylist():
            found.append((row, key, message(row) if callable(message) else message))

    col = table.column
    flag(pc.not_equal(col("v"), 1), "v",
         lambda r: f"v is {col('v')[r].as_py()}; this reader knows format version 1 only")
    for name in ("ts", "run", "seq", "loop", "kind"):
        if col(name).null_count:
            flag(pc.is_null(col(name)), name, missing_message(name))
    for name in ("run", "loop"):
        flag(pc.equal(col(name), ""), name, f"{name} is empty")
    kinds = col("kind")
    flag(pc.invert(pc.is_in(kinds, value_set=pa.array(KINDS))), "kind",
         lambda r: f"unknown kind {kinds[r].as_py()!r}{did_you_mean(kinds[r].as_py(), KINDS)}; "
         f"known kinds: {', '.join(KINDS)}")
    needing: dict[str, list[str]] = {}
    for kind, needed in REQUIRED_BY_KIND.items():
        for name in needed:
            needing.setdefault(name, []).append(kind)
    for name, kinds_needing in needing.items():
        if col(name).null_count:
            flag(pc.and_(pc.is_in(kinds, value_set=pa.array(kinds_needing)),
                         pc.is_null(col(name))), name, _needs(kinds, name))
    for name, low in MINIMUMS.items():
        column = col(name)
        if column.null_count < len(column) and pc.min(column).as_py() < low:
            flag(pc.less(column, low), name, _below(column, name, low))
    if col("cost").null_count < table.num_rows:
        flag(pc.invert(pc.is_finite(col("cost"))), "cost", "cost must be a finite number")
    for extra in table.column_names:
        if extra in FIXED:
            continue
        if extra == "payload":
            if not (pa.types.is_struct(table.schema.field(extra).type)
                    or pa.types.is_null(table.schema.field(extra).type)):
                flag(pc.is_valid(col(extra)), "payload", "payload must be a JSON object")
            continue
        flag(pc.is_valid(col(extra)), extra, unknown_key(extra))
    found.sort()
    return found


#: `_present` of a block, computed when first asked (only the byte scan needs it).
Present = Callable[[], np.ndarray[Any, np.dtype[np.int64]]]


def _present(table: pa.Table) -> np.ndarray[Any, np.dtype[np.int64]]:
    """How many fields (payload included) each row of an Arrow-read block holds with a
    value that is not null (see `payloads.line_payloads`)."""
    count = np.zeros(table.num_rows, dtype=np.int64)
    for name in (*FIXED, "payload"):
        if name not in table.column_names:
            continue
        column = table.column(name)
        if not column.null_count:
            count += 1
        elif column.null_count < len(column):
            count += pc.is_valid(column).to_numpy(zero_copy_only=False)
    return count


def unknown_key(key: str) -> str:
    """What to say about a top-level key that is not a field."""
    return f"unknown key {key!r}{did_you_mean(key, FIELDS)}; put extra data under 'payload'"


def _needs(kinds: pa.ChunkedArray, name: str) -> Callable[[int], str]:
    def message(row: int) -> str:
        return f"a {kinds[row].as_py()!r} event needs {name}"

    return message


def _below(column: pa.ChunkedArray, name: str, low: int) -> Callable[[int], str]:
    def message(row: int) -> str:
        return f"{name} is {column[row].as_py()}; it must be ≥ {low}"

    return message


# -- helpers ----------------------------------------------------------------------------


def _read_options(size: int, with_payload: bool) -> pj.ReadOptions:
    """Arrow's blocks: a quarter of what it reads (at least 64 KiB), so its threads share
    even a small file block.

    Arrow's own threads are left out when the payloads are read on a machine of two
    CPUs or fewer: reading a file is then two stages at once (Arrow reads a block while
    the previous one is checked and its payloads decoded), which keep two cores busy on
    their own; Arrow's threads on top only make them take turns (300,000 events: 0.6 s
    with one thread for Arrow, 0.8 s with its threads, and a third less CPU)."""
    threads = not with_payload or pa.cpu_count() > _FEW_CPUS
    return pj.ReadOptions(block_size=max(size // 4 + 1, ARROW_BLOCK), use_threads=threads)


#: At most this many CPUs, Arrow reads a block in one thread when payloads are read.
_FEW_CPUS: Final = 2


def _field_names(schema: pa.Schema) -> None:
    """Decode every field name, nested ones too: UnicodeDecodeError (a ValueError)
    when a payload key is not UTF-8, so the block goes the slow, exact way."""
    stack: list[pa.DataType] = [f.type for f in schema]
    while stack:
        kind = stack.pop()
        if pa.types.is_struct(kind):
            for i in range(kind.num_fields):
                field_ = kind.field(i)
                field_.name  # noqa: B018  (decoding is the check)
                stack.append(field_.type)
        elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
            stack.append(kind.value_type)


def trim_heap() -> None:
    """Hand the C heap's free pages back to the system (glibc's ``malloc_trim``; nothing
    elsewhere), as Dask's workers do.

    Reading churns through block-sized buffers (the bytes, numpy's masks) that glibc
    keeps once freed, its threshold for giving memory back rising with the sizes it
    sees: without this, that garbage is a third of the peak of reading a file of tens
    of MB. It costs a few ms, once per `TRIM_EVERY` bytes read."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here: only a read of a few MB needs it

    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None


@functools.cache
def reader_pool() -> pa.MemoryPool:
    """Where the reader's Arrow buffers live, chosen at the first read (importing
    crewbook changes nothing in the process).

    A jemalloc pool of the reader's own, told to give freed pages back to the system at
    once, so building the frame column by column frees each Arrow column as it is
    converted (a pool that keeps freed memory makes reading peak at the Arrow table
    plus the whole frame). The decay setting is process-wide for jemalloc, so it is
    made only when jemalloc is not the process's default pool (Arrow's default here is
    mimalloc): then only the reader's buffers are affected. Otherwise (jemalloc is the
    default, or pyarrow was built without it) the system allocator is used, untouched.
    """
    try:
        pool = pa.jemalloc_memory_pool()
    except (NotImplementedError, pa.ArrowException):  # a pyarrow built without jemalloc
        return pa.system_memory_pool()
    if pa.default_memory_pool().backend_name == pool.backend_name:
        return pa.system_memory_pool()  # not ours to retune
    pa.jemalloc_set_decay_ms(0)
    return pool


#: Columns with few distinct values, kept dictionary-encoded (categories in the frame).
CATEGORIES: Final = ("run", "loop", "kind", "role", "stage", "verdict")
_DICT_SCHEMA: Final = pa.schema([pa.field(f.name, pa.dictionary(pa.int32(), f.type))
                                 if f.name in CATEGORIES else f for f in ARROW_SCHEMA])


def compact(table: pa.Table) -> pa.Table:
    """`table` with its category columns dictionary-encoded: a block holds each run
    name, loop, kind... once, not once per event, until the frame is built."""
    for name in CATEGORIES:
        index = table.schema.get_field_index(name)
        column = table.column(index)
        if not pa.types.is_dictionary(column.type):
            table = table.set_column(index, name,
                                     pc.dictionary_encode(column, memory_pool=reader_pool()))
    return table


#: The narrower types a parsed block keeps its columns in when every value fits (the
#: common case): kept blocks then hold less than the frame they become, which bounds
#: the reading peak. `concat` widens a column back where blocks differ.
_NARROW: Final[dict[str, pa.DataType]] = {
    **{name: pa.int32() for name in ("seq", "attempt", "version", "tokens_in",
                                     "tokens_out", "duration_ms")},
    "v": pa.int8(),
    **{name: pa.dictionary(pa.int8(), pa.string()) for name in CATEGORIES},
    "run": pa.dictionary(pa.int16(), pa.string()),
}


def narrow(table: pa.Table) -> pa.Table:
    """`table` (compact) with each column of `_NARROW` in its narrow type where its
    values fit (a safe cast; one that does not fit keeps its column as it is)."""
    for name, type_ in _NARROW.items():
        index = table.schema.get_field_index(name)
        column = table.column(index)
        if column.type == type_:
            continue
        try:
            column = pc.cast(column, type_, memory_pool=reader_pool())
        except pa.ArrowInvalid:  # a value out of the narrow range: keep it wide
            continue
        table = table.set_column(index, name, column)
    return table


def concat(tables: list[pa.Table]) -> pa.Table:
    """The rows of `tables` (same columns, maybe in different widths: see `narrow`) as
    one table; a column whose type differs between tables is widened in all of them."""
    if len(tables) > 1 and any(t.schema != tables[0].schema for t in tables):
        schema = tables[0].schema
        for i, field_ in enumerate(schema):
            if any(t.schema.field(i).type != field_.type for t in tables):
                schema = schema.set(i, _DICT_SCHEMA.field(field_.name))
        tables = [t.cast(schema) if t.schema != schema else t for t in tables]
    return pa.concat_tables(tables)


def _empty_table() -> pa.Table:
    return _DICT_SCHEMA.empty_table()


def _empty_problem(name: str) -> Problem:
    return Problem(EMPTY, "the ledger holds no events (an empty file); is it the right "
                   "file, or did the run not start?", name, severity="warning")


_BOM: Final = "\ufeff".encode()


_NOT_SPACE: Final = re.compile(rb"\S")
_SPACES: Final = np.frombuffer(b" \t\r\n\x0b\x0c", dtype=np.uint8)


