"""Payloads kept as JSON text in Arrow until asked: the ``payload`` column of a ledger frame.

A ledger frame's ``payload`` column is a `PayloadArray` (dtype ``"payload"``): one Arrow
string column holding each event's payload as compact JSON text, so reading a million
events creates no Python object per payload. Indexing a row, iterating, ``.map``,
``.tolist()`` parse the rows asked for into plain dicts, so ``df.payload.iloc[0]["task"]``
works as with a column of dicts. Keys whose value is null are left out of the dicts, at
every depth: a null and an absent key mean the same in a ledger.

The texts come from the lines themselves (DuckDB's ``json_extract`` over the raw lines,
vectorised), so a payload reads back exactly as written: a string that looks like a date
stays a string, an integer stays an integer.
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


def line_payloads(buf: pa.Buffer, starts: np.ndarray[Any, np.dtype[np.int64]],
                  end: int) -> pa.Array:
    """The payload text of each JSON line of `buf` starting at `starts` (the last ends
    at `end`; white space between lines is harmless). '{}' where a line has none.

    One DuckDB query over the lines as an Arrow column (no Python step per line); if
    DuckDB refuses a line Arrow accepted, the lines are done one by one with `json`.
    """
    offsets = np.append(starts, end).astype(np.int64)
    lines = pa.LargeStringArray.from_buffers(len(starts), pa.py_buffer(offsets), buf)
    try:
        import duckdb

        with duckdb.connect() as con:
            con.register("lines", pa.table({"line": lines}))
            result = con.sql("SELECT coalesce(json_extract(line, '$.payload')::VARCHAR, '{}') "
                             "FROM lines").to_arrow_table()
        texts = result.column(0).combine_chunks().cast(TEXT)
    except Exception:
        texts = pa.array([payload_text(json.loads(line).get("payload"))
                          for line in lines.to_pylist()], type=TEXT)
    return pc.if_else(pc.equal(texts, "null"), "{}", texts)


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
