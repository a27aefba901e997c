"""Payloads kept as JSON text in Arrow until asked: the ``payload`` column of a ledger frame.

A ledger frame's ``payload`` column is a `PayloadArray` (dtype ``"payload"``): one Arrow
string column holding each event's payload as JSON text (as the line wrote it; crewbook's
writer writes it compact), so reading a million events creates no Python object per
payload. Indexing a row, iterating, ``.map``, ``.tolist()`` parse the rows asked for into
plain dicts, so ``df.payload.iloc[0]["task"]`` works as with a column of dicts. Keys
whose value is null are left out of the dicts, at every depth: a null and an absent key
mean the same in a ledger.

The texts come from the lines themselves (cut out of the bytes read, see
`line_payloads`), so a payload reads back exactly as written: a string that looks like a
date stays a string, an integer stays an integer.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Final

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pandas.api.extensions import (
    ExtensionArray,
    ExtensionDtype,
    register_extension_dtype,
)

from .events import FIELDS

#: The Arrow type of the payload texts (in the frame and in Parquet).
TEXT: Final = pa.string()


def parse_payload(text: str | None) -> dict[str, Any]:
    """One payload text as a dict without null-valued keys ({} for none)."""
    if text is None:
        return {}
    value = json.loads(text, object_hook=_drop_nulls)
    return value if isinstance(value, dict) else {}


def payload_text(payload: Any) -> str:
    """A payload dict as the compact JSON text the column stores."""
    if not isinstance(payload, dict):
        return "{}"
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str)


def _drop_nulls(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if v is not None}


#: The payload's key as the writer puts it (then ``:{``, the payload last).
_KEY: Final = np.frombuffer(b'"payload"', dtype=np.uint8)
#: Below this many lines needing a full JSON parse, `json` beats starting DuckDB.
_FEW: Final = 2_000


def line_payloads(buf: pa.Buffer, starts: np.ndarray[Any, np.dtype[np.int64]],
                  ends: np.ndarray[Any, np.dtype[np.int64]],
                  pool: pa.MemoryPool | None = None,
                  strings: np.ndarray[Any, np.dtype[np.int64]] | None = None,
                  scratch: np.ndarray[Any, np.dtype[np.bool_]] | None = None,
                  ) -> tuple[pa.Array, bool]:
    """The payload text of each JSON line ``buf[starts[i]:ends[i]]`` ('{}' where a line
    has none), every line being a valid event that Arrow has read and checked; and
    whether every line is shown to hold no unknown top-level key (always True when
    `strings` is None: the caller has checked the keys).

    Taken by slicing the bytes (no JSON parse, a few numpy passes) wherever the slice
    is provably the payload: the line holds no backslash (so every quote delimits a
    string), the string ``"payload"`` appears in it once, followed by ``:{``, and the
    line ends with ``}}``. That string is then the top-level key (the only one so
    named), and its object ends just before the final brace unless a member follows
    it, which the slice then shows (its brackets close to depth 0 before its end): the
    line is then not shown free of unknown keys. A line without ``"payload"`` has
    ``{}``. The other lines (escapes, spaces, payload not last) are parsed: with `json`
    when few, else with one DuckDB ``json_extract`` over them. The texts are
    allocated in `pool`.

    `strings` is, per line, how many JSON strings its fixed fields take (a key each,
    and a value each for text fields, as read by Arrow): a line holds no other key
    when its quotes outside the payload are exactly twice that (an unknown or a
    null-valued key adds a string); parsed lines have their keys looked at.

    `scratch`, when given, is a bool buffer at least as long as `buf` plus one, used for
    the per-byte masks instead of new arrays (a reader calls this once per block).
    """
    raw = np.frombuffer(buf, dtype=np.uint8)
    count = len(starts)
    if not count:
        return pa.array([], type=TEXT), True
    ends = ends - (raw[np.maximum(ends - 1, 0)] == 13)  # a CRLF line ends before \r
    low, high = int(starts[0]), int(ends[-1])
    window = raw[low:high]
    found = _occurrences(window, _KEY, scratch) + low
    line = np.searchsorted(starts, found, side="right") - 1
    found, line = found[found < ends[line]], line[found < ends[line]]
    named = np.bincount(line, minlength=count)
    at = np.zeros(count, dtype=np.int64)
    at[line[::-1]] = found[::-1]  # the first occurrence in each line
    plain = np.ones(count, dtype=bool)
    slashes = np.flatnonzero(equal(window, 92, scratch)) + low
    if len(slashes):
        plain[np.unique(np.searchsorted(starts, slashes, side="right") - 1)] = False
    top = len(raw) - 1
    opens = (raw[np.minimum(at + len(_KEY), top)] == 58) & (
        raw[np.minimum(at + len(_KEY) + 1, top)] == 123)  # ':{'
    closed = (ends - starts >= 2) & (raw[np.maximum(ends - 1, 0)] == 125) & (
        raw[np.maximum(ends - 2, 0)] == 125)  # '}}'
    sliced = plain & (named == 1) & opens & closed
    absent = plain & (named == 0)
    first = np.where(sliced, at + len(_KEY) + 1, starts)
    texts = _gather(buf, first, np.where(sliced, ends - 1, starts), pool)
    known = True
    if strings is not None:
        try:  # the fast read skipped the payload's bytes: they may not be UTF-8
            texts.validate(full=True)
        except pa.ArrowInvalid:
            return texts, False
        bounds = np.empty(2 * count, dtype=np.int64)  # each line's start, then its end
        bounds[0::2] = starts - low  # outside the payload (or its start: not counted)
        bounds[1::2] = np.where(sliced, at, np.where(absent, ends, starts)) - low
        quotes = equal(window, 34, scratch, extra=1)  # reduceat's bounds must be inside
        before = np.add.reduceat(quotes, bounds, dtype=np.int32)[0::2]
        del quotes
        before[bounds[0::2] == bounds[1::2]] = 0  # reduceat gives an element there
        shown = (sliced | absent) & (before == 2 * strings)
        known = bool(shown[sliced | absent].all()) and bool(_one_object(texts)[sliced].all())
    if absent.any():
        texts = pc.if_else(pa.array(absent), "{}", texts)
    rest = np.flatnonzero(~(sliced | absent))
    if len(rest) and known:
        offsets = np.append(starts, high).astype(np.int64)
        lines = pa.LargeBinaryArray.from_buffers(
            pa.large_binary(), count, [None, pa.py_buffer(offsets), buf])
        mask = np.zeros(count, dtype=bool)
        mask[rest] = True
        parsed, known_keys = _parsed(lines.take(pa.array(rest)), strings is not None)
        known = known_keys
        texts = pc.replace_with_mask(texts, pa.array(mask), parsed)
    return texts, known


def _one_object(texts: pa.Array) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """Per text (without backslashes, each a balanced slice of a valid JSON line):
    whether its brackets close to depth 0 at most once, i.e. it is empty or one value."""
    count = len(texts)
    offsets = np.frombuffer(texts.buffers()[1], dtype=np.int32)[
        texts.offset:texts.offset + count + 1].astype(np.int64)
    data_buffer = texts.buffers()[2]
    if data_buffer is None or offsets[-1] == offsets[0]:
        return np.ones(count, dtype=bool)
    data = np.frombuffer(data_buffer, dtype=np.uint8)[offsets[0]:offsets[-1]]
    folded = data | 32  # '[' and ']' fold onto '{' and '}' (and no other byte does)
    where = np.flatnonzero((data == 34) | (folded == 123) | (folded == 125))
    del folded
    char = data[where]
    quote = char == 34
    outside = ~quote & ((np.cumsum(quote) & 1) == 0)  # an even count of quotes before
    step = np.zeros(len(where), dtype=np.int64)
    step[outside & ((char == 123) | (char == 91))] = 1
    step[outside & ((char == 125) | (char == 93))] = -1
    closes = where[(step == -1) & (np.cumsum(step) == 0)] + offsets[0]
    row = np.searchsorted(offsets, closes, side="right") - 1
    return np.asarray(np.bincount(row, minlength=count) <= 1)


def equal(raw: np.ndarray[Any, np.dtype[np.uint8]], byte: int,
          scratch: np.ndarray[Any, np.dtype[np.bool_]] | None = None, *, extra: int = 0,
          ) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """``raw == byte`` (then `extra` False values), in `scratch` when it is long enough:
    valid until the next use of `scratch`. Reading a file reuses one buffer for these
    per-byte masks: new ones cost a page fault per 4 KiB and leave heap garbage."""
    size = len(raw) + extra
    if scratch is None or len(scratch) < size:
        out = np.zeros(size, dtype=bool)
    else:
        out = scratch[:size]
        out[len(raw):] = False
    np.equal(raw, byte, out=out[:len(raw)])
    return out


def _occurrences(raw: np.ndarray[Any, np.dtype[np.uint8]],
                 pattern: np.ndarray[Any, np.dtype[np.uint8]],
                 scratch: np.ndarray[Any, np.dtype[np.bool_]] | None = None,
                 ) -> np.ndarray[Any, Any]:
    """Where `pattern` starts in `raw` (sorted): the places of its rarest-looking byte
    (the 'y' of payload), narrowed byte by byte."""
    pivot = 3
    hits = np.flatnonzero(equal(raw, int(pattern[pivot]), scratch))
    hits = hits[(hits >= pivot) & (hits < len(raw) - len(pattern) + pivot + 1)] - pivot
    for i in range(len(pattern)):
        if i != pivot:
            hits = hits[raw[hits + i] == pattern[i]]
    return hits.astype(np.int64)


def _gather(buf: pa.Buffer, first: np.ndarray[Any, np.dtype[np.int64]],
            stop: np.ndarray[Any, np.dtype[np.int64]],
            pool: pa.MemoryPool | None = None) -> pa.Array:
    """The strings buf[first[i]:stop[i]] as one compact array (empty where stop <=
    first); the ranges are increasing and do not overlap (one per line), and an empty
    range sits between its neighbours (e.g. at its line's start).

    The bytes of `buf` are seen, without a copy, as an array of 2n strings: each range,
    then the gap up to the next one; Arrow's ``take`` of the even ones copies the ranges
    out in C++. (A numpy mask of the ranges needed a running sum over every byte: a
    quarter of the reading time; an index of the bytes picked, 8 bytes per byte.)"""
    count = len(first)
    stop = np.maximum(stop, first)
    offsets = np.empty(2 * count + 1, dtype=np.int64)
    offsets[0:2 * count:2] = first
    offsets[1::2] = stop
    offsets[-1] = stop[-1] if count else 0
    if len(buf) < 1 << 31:
        pieces = pa.StringArray.from_buffers(2 * count, pa.py_buffer(offsets.astype(np.int32)),
                                             buf)
    else:  # pragma: no cover - a block of 2 GiB
        pieces = pa.LargeStringArray.from_buffers(2 * count, pa.py_buffer(offsets), buf)
    even = pa.array(np.arange(0, 2 * count, 2, dtype=np.int64))
    texts = pc.take(pieces, even, boundscheck=False, memory_pool=pool)
    return texts if texts.type == TEXT else texts.cast(TEXT)


def _parsed(lines: pa.Array, check: bool = False) -> tuple[pa.Array, bool]:
    """The payload texts of `lines` by a full JSON parse ('{}' for none or null): one
    DuckDB query when there are many, else (or if DuckDB refuses one) `json` per line;
    and, when `check`, whether every line's top-level keys are known fields."""
    if len(lines) > _FEW:
        try:
            return _duckdb_payloads(lines, check)
        except Exception:  # DuckDB refused a line Arrow accepted: the exact way
            return _json_payloads(lines, check)
    return _json_payloads(lines, check)


def _duckdb_payloads(lines: pa.Array, check: bool) -> tuple[pa.Array, bool]:
    import duckdb

    known = True
    with duckdb.connect() as con:
        con.register("lines", pa.table({"line": lines.cast(pa.large_string())}))
        result = con.sql("SELECT coalesce(json_extract(line, '$.payload')::VARCHAR, '{}') "
                         "FROM lines").to_arrow_table()
        if check:
            names = ", ".join(f"'{name}'" for name in FIELDS)
            query = ("SELECT count(*) FROM lines WHERE len(list_filter(json_keys(line), "
                     f"k -> k NOT IN ({names}))) > 0")
            unknown = con.execute(query).fetchone()
            known = unknown is not None and unknown[0] == 0
    texts = result.column(0).combine_chunks().cast(TEXT)
    return pc.if_else(pc.equal(texts, "null"), "{}", texts), known


def _json_payloads(lines: pa.Array, check: bool) -> tuple[pa.Array, bool]:
    try:
        objects = [json.loads(line) for line in lines.to_pylist()]
    except ValueError:  # not UTF-8 (a key Arrow skipped, the fast read): read exactly
        if not check:
            raise
        return pa.nulls(len(lines), TEXT), False
    known = not check or all(key in FIELDS for obj in objects for key in obj)
    return pa.array([payload_text(obj.get("payload")) for obj in objects], type=TEXT), known


# -- the pandas column -------------------------------------------------------------------


@register_extension_dtype
class PayloadDtype(ExtensionDtype):
    """The dtype of a ledger frame's ``payload`` column: JSON texts, dicts when read."""

    name = "payload"
    type = dict
    kind = "O"
    na_value = None

    @classmethod
    def construct_array_type(cls) -> builtins.type[PayloadArray]:
        return PayloadArray

    def __repr__(self) -> str:
        return "PayloadDtype()"


class PayloadArray(ExtensionArray):
    """Payloads as one Arrow string column of JSON texts, parsed into dicts when asked."""

    def __init__(self, texts: pa.Array | pa.ChunkedArray) -> None:
        if isinstance(texts, pa.Array):
            texts = pa.chunked_array([texts], type=TEXT)
        self._data: pa.ChunkedArray = texts if texts.type == TEXT else texts.cast(TEXT)

    # -- construction ------------------------------------------------------------------

    @classmethod
    def _from_sequence(cls, scalars: Iterable[Any], *, dtype: Any = None,
                       copy: bool = False) -> PayloadArray:
        if isinstance(scalars, PayloadArray):
            return cls(scalars._data)
        texts: list[str | None] = []
        for value in scalars:
            if not (_missing(value) or isinstance(value, dict)):
                raise TypeError(f"a payload is a dict, not {type(value).__name__}")
            texts.append(None if _missing(value) else payload_text(value))
        return cls(pa.array(texts, type=TEXT))

    @classmethod
    def _from_factorized(cls, values: np.ndarray[Any, Any],
                         original: PayloadArray) -> PayloadArray:
        return cls(pa.array(values.tolist(), type=TEXT))

    @classmethod
    def _concat_same_type(cls, to_concat: Sequence[PayloadArray]) -> PayloadArray:
        chunks = [c for array in to_concat for c in array._data.chunks]
        return cls(pa.chunked_array(chunks, type=TEXT))

    # -- the interface pandas needs ----------------------------------------------------

    @property
    def dtype(self) -> PayloadDtype:
        return PayloadDtype()

    @property
    def nbytes(self) -> int:
        return int(self._data.nbytes)

    @property
    def texts(self) -> pa.ChunkedArray:
        """The JSON texts, as stored (null for a missing row)."""
        return self._data

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, int | np.integer):
            index = int(item)
            if index < 0:
                index += len(self)
            value = self._data[index].as_py()
            return None if value is None else parse_payload(value)
        if isinstance(item, slice):
            start, stop, step = item.indices(len(self))
            if step == 1:
                return type(self)(self._data.slice(start, max(stop - start, 0)))
            return type(self)(self._data.take(pa.array(range(start, stop, step), pa.int64())))
        item = pd.api.indexers.check_array_indexer(self, item)
        if item.dtype == bool:
            return type(self)(self._data.filter(pa.array(item)))
        return self.take(item)

    def __iter__(self) -> Iterator[Any]:
        for chunk in self._data.chunks:
            for text in chunk.to_pylist():
                yield None if text is None else parse_payload(text)

    def __setitem__(self, key: Any, value: Any) -> None:
        texts = self._data.to_pylist()
        index = np.arange(len(self))[key]
        values = [value] * len(np.atleast_1d(index)) if isinstance(value, dict) or _missing(
            value) else list(value)
        for i, v in zip(np.atleast_1d(index), values, strict=True):
            texts[int(i)] = None if _missing(v) else payload_text(v)
        self._data = pa.chunked_array([pa.array(texts, type=TEXT)], type=TEXT)

    def __eq__(self, other: Any) -> Any:
        if isinstance(other, pd.Series | pd.Index | pd.DataFrame):
            return NotImplemented
        if isinstance(other, ExtensionArray | np.ndarray | list):
            if len(other) != len(self):
                raise ValueError("lengths must match to compare")
            return np.array([a == b for a, b in zip(self, other, strict=True)], dtype=bool)
        return np.array([a == other for a in self], dtype=bool)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray[Any, Any]:
        out = np.empty(len(self), dtype=object)
        for i, value in enumerate(self):
            out[i] = value
        return out if dtype is None or np.dtype(dtype) == object else out.astype(dtype)

    def __arrow_array__(self, type: Any = None) -> pa.ChunkedArray:
        return self._data

    def map(self, mapper: Any, na_action: Any = None) -> Any:
        """`mapper` applied to each payload dict (what ``Series.map`` calls)."""
        return pd.Series(np.asarray(self), dtype=object).map(
            mapper, na_action=na_action).to_numpy()

    def isna(self) -> np.ndarray[Any, np.dtype[np.bool_]]:
        return np.asarray(self._data.is_null().to_numpy(zero_copy_only=False), dtype=bool)

    def take(self, indices: Any, *, allow_fill: bool = False,
             fill_value: Any = None) -> PayloadArray:
        index = np.asarray(indices, dtype=np.int64)
        n = len(self)
        if allow_fill:
            if (index < -1).any():
                raise ValueError("indices below -1 with allow_fill=True")
            mask = index == -1
            if len(index) and (index >= n).any():
                raise IndexError("index out of bounds for the payloads")
            if n == 0:
                taken = pa.nulls(len(index), TEXT)
            else:
                taken = self._data.take(pa.array(np.where(mask, 0, index), mask=mask))
            if not _missing(fill_value) and mask.any():
                taken = pc.if_else(pa.array(mask), payload_text(fill_value), taken)
            return type(self)(taken)
        if len(index) and ((index >= n) | (index < -n)).any():
            raise IndexError("index out of bounds for the payloads")
        return type(self)(self._data.take(pa.array(np.where(index < 0, index + n, index))))

    def copy(self) -> PayloadArray:
        return type(self)(self._data)  # Arrow data is immutable: sharing it is a copy

    def _values_for_factorize(self) -> tuple[np.ndarray[Any, Any], Any]:
        return np.asarray(self._data.to_pylist(), dtype=object), None

    def _formatter(self, boxed: bool = False) -> Any:
        return repr


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and value != value
