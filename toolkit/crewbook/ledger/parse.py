"""Turn the bytes of a ledger (a whole file, or a block of one: see `file_blocks`) into an
Arrow table of events, checking every rule.

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
when the payloads are not UTF-8 is the block read again with every key inferred.
(`arrow_read` holds Arrow's options, `checks` the rules on columns, `columns` the schema
and the narrow widths a block keeps.)

A line cut short (what a crash mid-write leaves: the line is the prefix of some JSON
text) is never an error: it is left out with a warning, wherever it is. Any other
bad line is an error that the caller raises or skips.
"""

from __future__ import annotations

import functools
import json
import re
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import Problem
from .arrow_read import arrow_read
from .checks import Check, Present, check_table, present_counts, unknown_key
from .columns import ARROW_SCHEMA, FIXED, compact, concat, empty_table, narrow
from .heap import reader_pool
from .known_keys import (
    as_payloads,
    decoded_pieces,
    keyed_payloads,
    refused_lines,
    text_array,
)
from .lines import BAD_EVENT, EMPTY, cut_short, parse_line, truncated
from .payloads import TEXT, LinePayloads, equal, line_payloads, payload_dicts, payload_text
from .timestamps import read_times

#: A refused block at most this many lines long is read line by line.
SMALL_BLOCK: Final = 256
#: A refused block sets its bad lines aside (`BlockParser.set_aside`) when they are at
#: most one in this many of its lines; more, and it is split as before.
SET_ASIDE_SHARE: Final = 16


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
        return [d or {} for d in payload_dicts(self.texts.to_pylist())]


def parse_bytes(data: bytes, name: str, *, with_payload: bool = True) -> Parsed:
    """Every valid event of `data` (a whole ledger file); bad lines become problems.

    Rows of the returned table are the valid events, in file order. Error problems
    name lines that were left out; the caller decides whether that is fatal.
    """
    return BlockParser(data, name, with_payload).run()



class BlockParser:
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
        """Every valid event of `data` and the problems of the others. Arrow's read made
        ahead is waited for also when it is not used (a cut last line, an empty block), so
        no read of this block outlives the call."""
        try:
            return self._run()
        finally:
            if self.ahead is not None:
                self.ahead.result()
                self.ahead = None

    def _run(self) -> Parsed:
        end = len(self.data)
        if self.data and not self.data.endswith(b"\n"):
            cut = self.data.rfind(b"\n") + 1
            tail = bytes(self.data[cut:])
            if tail.strip() and cut_short(tail):
                line = self.line0 + self.data.count(b"\n") + 1
                self.problems.append(truncated(self.name, line, last=True))
                end = cut
        if not NOT_SPACE.search(self.data, 0, end):
            if not self.problems and self.whole:
                self.problems.append(empty_problem(self.name))
            return Parsed(empty_table(), self._texts(), self.problems)
        count = self.count_rows(end)
        # the fast read; else with the bad lines set aside; else the exact read (payloads
        # not UTF-8, a payload type Arrow infers); else split
        if not (self.take(0, end, None, count, (False,)) or self.set_aside(end)
                or (self.with_payload and self.take(0, end, None, count, (True,)))):
            last = self.n_lines if end == len(self.data) else self.n_lines - 1
            self.bisect(0, last)
        out = concat(self.tables) if self.tables else empty_table()
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
             expected: int, ways: tuple[bool, ...] | None = None) -> bool:
        """Read data[start:end] (`expected` events) and keep it, if Arrow accepts it: the
        fast way (payload not inferred) when it shows every key is known, else exactly
        (every key inferred, unknown ones reported); `ways` (exact or not) to try only
        some of them (the exact one is the only one without the payloads)."""
        if ways is None or not self.with_payload:
            ways = (False, True) if self.with_payload else (True,)
        for exact in ways:
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

    def set_aside(self, end: int) -> bool:
        """Read data[:end], which Arrow refused, with the lines a typed decode refuses
        (`known_keys.refused_lines`) set aside: each of them read by the model (its
        problems named), the rest read again as a block with those lines emptied (their
        newlines kept, so every line keeps its number). A few bad lines in a block then
        cost their own reading, not a split of the block down to single lines (one line
        in 1,000 bad: 6.9 s for 300,000 events, against 0.65 s for a clean file).
        False, nothing kept, when the decode finds no such line or more than one line in
        `SET_ASIDE_SHARE`, when one of them is a valid event after all (its row would
        come out of order) or when Arrow refuses the rest too: the block is then split
        (`bisect`)."""
        start = len(BOM) if self.data.startswith(BOM) else 0
        spans = refused_lines(self.data, start, end, self.n_lines // SET_ASIDE_SHARE)
        if not spans:  # none found, or too many to be worth it
            return False
        problems: list[Problem] = []
        for first, _ in spans:
            index = self.line_at(first)
            if parse_line(self.line_bytes(index), self.name, self.line0 + index + 1,
                          problems, first=index + self.line0 == 0) is not None:
                return False
        kept: list[bytes | bytearray | memoryview] = []
        at = 0
        with memoryview(self.data) as view:
            for first, close in spans:
                kept.append(view[at:first])
                at = close
            kept.append(view[at:end])
            rest = b"".join(kept)
            del kept
        part = BlockParser(rest, self.name, self.with_payload, self.line0, whole=False)
        if not part.take(0, len(rest), None, part.count_rows(len(rest))):
            return False
        self.tables += part.tables
        self.texts += part.texts
        self.problems += part.problems + problems
        return True

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
        table, bad = self.times(table)
        if self.with_payload:
            found = self.payload_texts(rows, table.num_rows, end, check_utf8=not exact,
                                       present=functools.cache(lambda: present_counts(table)))
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
            kept = pc.filter(kept, pa.array(keep), memory_pool=reader_pool())
        if texts is not None:
            self.texts.append(texts if keep is None else pc.filter(
                texts, pa.array(keep), memory_pool=reader_pool()))
        self.tables.append(kept)
        return True

    @staticmethod
    def times(table: pa.Table) -> tuple[pa.Table, list[Check]]:
        """`table` with its ``ts`` texts read as the model reads them
        (`timestamps.read_times`), and every rule a row breaks (`check_table`): a text
        the model refuses is named by the model's words, not as a missing ``ts``."""
        index = table.schema.get_field_index("ts")
        times, refused = read_times(table.column(index))
        table = table.set_column(index, "ts", times)
        bad = check_table(table)
        if refused:
            rows = {row for row, _ in refused}
            bad = sorted([b for b in bad if not (b[1] == "ts" and b[0] in rows)]
                         + [(row, "ts", message) for row, message in refused])
        return table, bad

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
        if len(starts) and starts[0] == 0 and self.data.startswith(BOM):
            starts[0] = len(BOM)
        return line_payloads(self.buf, starts, ends, reader_pool(), check_utf8=check_utf8,
                             present=None if present is None else present())

    def decoded_payloads(self, end: int, count: int, check_utf8: bool,
                         present: Present | None,
                         ) -> LinePayloads | None:
        """`payload_texts` of the first `count` non-blank lines, decoded piece by piece
        (`known_keys`); a piece holding a key that is not a field goes by `piece_keys`,
        which names the key; None when the lines decoded are not `count` (two objects on
        a line, say: then the block's bytes are read)."""
        start = len(BOM) if self.data.startswith(BOM) else 0
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



def empty_problem(name: str) -> Problem:
    return Problem(EMPTY, "the ledger holds no events (an empty file); is it the right "
                   "file, or did the run not start?", name, severity="warning")


BOM: Final = "\ufeff".encode()


NOT_SPACE: Final = re.compile(rb"\S")
_SPACES: Final = np.frombuffer(b" \t\r\n\x0b\x0c", dtype=np.uint8)
