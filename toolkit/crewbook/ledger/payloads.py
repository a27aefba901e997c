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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pandas.api.extensions import (
    ExtensionArray,
    ExtensionDtype,
    register_extension_dtype,
)

from ..core.gc_pause import paused_gc
from ._bytes import equal as equal
from ._bytes import gather
from .events import FIELDS

if TYPE_CHECKING:
    from .scan import Scan

#: The Arrow type of the payload texts (in the frame and in Parquet).
TEXT: Final = pa.string()
#: Iterating parses this many rows at a time (between two of them, the caller's code runs
#: with the garbage collector as it set it).
_ITER_ROWS: Final = 4096
#: The top-level keys a line may hold.
_FIELD_NAMES: Final = tuple(name.encode() for name in FIELDS)


def parse_payload(text: str | None) -> dict[str, Any]:
    """One payload text as a dict without null-valued keys ({} for none)."""
    if text is None:
        return {}
    # the hook only where a null may be (a text without "null" has none to drop)
    value = json.loads(text, object_hook=_drop_nulls) if "null" in text else json.loads(text)
    return value if isinstance(value, dict) else {}


def payload_dicts(texts: Iterable[str | None]) -> list[dict[str, Any] | None]:
    """`parse_payload` of each text (None stays None), many at once, with Python's cyclic
    garbage collector paused meanwhile (`core.gc_pause.paused_gc`: JSON makes no cycle)."""
    with paused_gc():
        return [None if text is None else parse_payload(text) for text in texts]


def payload_text(payload: Any) -> str:
    """A payload dict as the compact JSON text the column stores."""
    if not isinstance(payload, dict):
        return "{}"
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str)


def _drop_nulls(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if v is not None}


@dataclass(frozen=True)
class LinePayloads:
    """What `line_payloads` finds in a block of lines: each line's payload text, each
    top-level key that is not a field (line index, key; null-valued ones too, as the
    model refuses them), and whether the bytes Arrow skipped are valid UTF-8 (else the
    block is to be read the exact way)."""

    texts: pa.Array
    unknown: list[tuple[int, str]] = field(default_factory=list)
    readable: bool = True


def line_payloads(buf: pa.Buffer, starts: np.ndarray[Any, np.dtype[np.int64]],
                  ends: np.ndarray[Any, np.dtype[np.int64]],
                  pool: pa.MemoryPool | None = None, *, check_utf8: bool = False,
                  present: np.ndarray[Any, np.dtype[np.int64]] | None = None,
                  ) -> LinePayloads:
    """The payload text of each JSON line ``buf[starts[i]:ends[i]]`` ('{}' where a line
    has none, or null), every line being one JSON object that Arrow has read; and the
    top-level keys that are not ledger fields.

    The lines' top level is found from their bytes by `scan.scan`, in any key order,
    spacing, nesting, escapes or line ending, and each payload is cut out of its line
    as written (no JSON parse). The few lines the scan cannot vouch for (an escaped
    top-level key, a payload that is not an object) are parsed with `json`. The texts
    are allocated in `pool`. With `check_utf8` (Arrow skipped the payload's and unknown
    keys' bytes), texts and keys that are not UTF-8 make the answer not `readable`.

    `present`, when given, is how many fields (payload included) each line holds with
    a value that is not null, as Arrow read them: only the keys of a line holding
    more keys with a value than that, and the keys whose value is null, can be
    unknown, so only those are compared with the field names.
    """
    from .scan import scan

    count = len(starts)
    if not count:
        return LinePayloads(pa.array([], type=TEXT))
    raw = np.frombuffer(buf, dtype=np.uint8)
    found = scan(raw, starts, ends)
    texts = gather(buf, found.payload_first, found.payload_stop, pool)
    odd = _unknown_keys(raw, found, count, present)
    odd = odd[~found.doubtful[found.key_line[odd]]]  # those lines are parsed below
    keys = gather(buf, found.key_first[odd], found.key_stop[odd], pool)
    if check_utf8:
        try:
            texts.validate(full=True)
            keys.validate(full=True)
        except pa.ArrowInvalid:
            return LinePayloads(texts, readable=False)
    empty = found.payload_stop == found.payload_first
    if empty.any():
        texts = pc.if_else(pa.array(empty), "{}", texts)
    unknown = list(zip(found.key_line[odd].tolist(), keys.to_pylist(), strict=True))
    rest = np.flatnonzero(found.doubtful)
    if len(rest):
        offsets = np.append(starts, ends[-1]).astype(np.int64)
        whole = pa.LargeBinaryArray.from_buffers(
            pa.large_binary(), count, [None, pa.py_buffer(offsets), buf])
        parsed = _json_payloads(whole.take(pa.array(rest)))
        if parsed is None:
            return LinePayloads(texts, readable=False)
        rest_texts, rest_unknown = parsed
        mask = np.zeros(count, dtype=bool)
        mask[rest] = True
        texts = pc.replace_with_mask(texts, pa.array(mask), rest_texts)
        unknown += [(int(rest[i]), key) for i, key in rest_unknown]
        unknown.sort()
    return LinePayloads(texts, unknown)


def _unknown_keys(raw: np.ndarray[Any, np.dtype[np.uint8]], found: Scan, count: int,
                  present: np.ndarray[Any, np.dtype[np.int64]] | None,
                  ) -> np.ndarray[Any, np.dtype[np.int64]]:
    """The indexes of the keys of `found` that are not field names (see `line_payloads`
    for `present`). A line whose keys with a value are as many as its fields with a
    value has no unknown key with a value (a duplicate or unknown key would make one
    more), so its keys are not compared, but for its null-valued ones."""
    from .scan import named

    check = None
    if present is not None:
        with_value = np.bincount(found.key_line[~found.key_null], minlength=count)
        check = np.flatnonzero(found.key_null | (with_value != present)[found.key_line])
        if len(check) == len(found.key_line):
            check = None
    if check is None:
        return np.flatnonzero(~named(raw, found.key_first, found.key_stop, _FIELD_NAMES))
    return check[~named(raw, found.key_first[check], found.key_stop[check], _FIELD_NAMES)]


def _json_payloads(lines: pa.Array) -> tuple[pa.Array, list[tuple[int, str]]] | None:
    """The payload texts of `lines` by a full JSON parse ('{}' for none or null) and
    their top-level keys that are not fields (index, key); None when a line is not UTF-8
    (bytes Arrow skipped). The few lines the scan cannot vouch for come here."""
    try:
        objects = [json.loads(line) for line in lines.to_pylist()]
    except ValueError:  # not UTF-8 (bytes Arrow skipped, the fast read): read exactly
        return None
    unknown = [(i, key) for i, obj in enumerate(objects) for key in obj if key not in FIELDS]
    return pa.array([payload_text(obj.get("payload")) for obj in objects], type=TEXT), unknown


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
        for chunk in self._data.chunks:  # a chunk at a time (see `payload_dicts`)
            for start in range(0, len(chunk), _ITER_ROWS):
                yield from payload_dicts(chunk.slice(start, _ITER_ROWS).to_pylist())

    def tolist(self) -> list[Any]:
        """Every payload as a dict (None where missing), parsed at once (`payload_dicts`)."""
        return payload_dicts(self._data.to_pylist())

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
        out[:] = payload_dicts(self._data.to_pylist())
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
