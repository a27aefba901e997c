"""Byte-level helpers of the fast ledger read: per-byte masks in a reused buffer
(`equal`) and copying many ranges out of one buffer at once (`gather`).

Kept apart from the payload column (`payloads`) because they work on raw bytes for any
part of a line (payloads, keys) and know nothing of JSON or pandas.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["equal", "gather"]


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


def gather(buf: pa.Buffer, first: np.ndarray[Any, np.dtype[np.int64]],
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
    return texts if texts.type == pa.string() else texts.cast(pa.string())
