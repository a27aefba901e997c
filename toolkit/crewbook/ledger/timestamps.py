"""The ``ts`` texts of a block of ledger lines read as the model reads them, a whole column
at a time (`read_times`).

Arrow reads ``ts`` as text, not as a time: its own parser takes texts the model refuses
(``2025-03-03T09``, an offset ``+02``, a year before 1678 in UTC), refuses texts the
model takes (a lowercase ``t`` or ``z``, a decimal comma, more than nine decimals: a
block of them was read line by line, 17 times slower) and keeps nanoseconds the model
drops. Texts of the usual forms (`_ZONED`, `_NAIVE`) are cast by Arrow, which reads
them as the model does (a property test holds the two together); any other text, and
any time outside `events.TS_YEARS`, is read by the model's own type
(`events.Timestamp`), all of them in one call: the same value, the same words.
"""

from __future__ import annotations

import functools
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .events import TS_YEARS, validation_problems
from .heap import reader_pool

#: The times of the frame: nanoseconds, UTC.
TIME: Final = pa.timestamp("ns", tz="UTC")
#: A date and time with seconds, decimals and an offset optional, the offset given: what
#: writers write (``Z``, ``+00:00``, ``+0200``), cast by Arrow straight to UTC.
_ZONED: Final = (r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}"
                 r"(?::[0-9]{2}(?:\.[0-9]{1,9})?)?(?:Z|[+-][0-9]{2}:?[0-9]{2})$")
#: A date, or a date and time, without offset: UTC (cast to a time without zone).
_NAIVE: Final = (r"^[0-9]{4}-[0-9]{2}-[0-9]{2}"
                 r"(?:[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,9})?)?)?$")
#: `TS_YEARS` as nanoseconds since 1970 in UTC: [first, end).
_FIRST: Final = int(np.datetime64(f"{TS_YEARS[0]}-01-01", "ns").astype(np.int64))
_END: Final = int(np.datetime64(f"{TS_YEARS[1] + 1}-01-01", "ns").astype(np.int64))


def read_times(texts: pa.Array | pa.ChunkedArray
               ) -> tuple[pa.Array, list[tuple[int, str]]]:
    """The times of `texts` (ns, UTC; null where a text is null or refused) and
    (row, message) for each text the model refuses."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    size = len(texts)
    present = size - texts.null_count
    if not present:
        return pa.nulls(size, TIME), []
    valid = _mask(texts.is_valid())
    with_offset = _with_offset(texts, valid)
    values = None
    if with_offset.sum() == present:  # the usual block: every text has its offset
        values = _cast(texts, zoned=True)
        if values is not None and _as_is(values):
            return values, []
    elif with_offset.any():  # cast in place, the other rows given a time to cast meanwhile
        values = _cast(pc.if_else(pa.array(with_offset), texts, _SOME_TIME), zoned=True)
    nanos = np.zeros(size, dtype=np.int64)
    known = np.zeros(size, dtype=bool)  # rows whose time is settled
    if values is not None:  # (None: a text of that form Arrow refuses, a 13th month)
        rows = np.flatnonzero(with_offset)
        _settle(nanos, known, rows, _nanos(values)[rows])
    left = np.flatnonzero(valid & ~with_offset)
    if len(left):  # the texts without offset
        rows = left[_mask(pc.match_substring_regex(texts.take(pa.array(left)), _NAIVE))]
        values = _cast(texts.take(pa.array(rows)), zoned=False) if len(rows) else None
        if values is not None:
            _settle(nanos, known, rows, _nanos(values))
    refused: list[tuple[int, str]] = []
    exact = np.flatnonzero(valid & ~known)
    if len(exact):
        modelled, refused = _model_times(texts.take(pa.array(exact)).to_pylist())
        for at, value in modelled.items():
            nanos[exact[at]] = value
            known[exact[at]] = True
        refused = [(int(exact[at]), message) for at, message in refused]
    return _times(nanos, known), refused


def _settle(nanos: np.ndarray[Any, np.dtype[np.int64]], known: np.ndarray[Any, Any],
            rows: np.ndarray[Any, np.dtype[np.intp]],
            got: np.ndarray[Any, np.dtype[np.int64]]) -> None:
    """Take `got` (the times of `rows`) where it falls in the model's years (the others
    are left to the model, which says why)."""
    fits = (got >= _FIRST) & (got < _END)
    nanos[rows[fits]] = got[fits]
    known[rows[fits]] = True


#: A time any cast reads (in place of a text a cast is not for).
_SOME_TIME: Final = pa.scalar("1970-01-01T00:00:00Z")


def _with_offset(texts: pa.Array, valid: np.ndarray[Any, np.dtype[np.bool_]]
                 ) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """Which texts are of a form with an offset that Arrow casts as the model reads it:
    those ending with ``Z`` at least `_MINUTES` long without a regex (a third of its
    time), the others by `_ZONED`. Of the forms Arrow takes that end with ``Z`` (a date,
    ``T`` or a space, hours, minutes, seconds, decimals), only hours without minutes
    (``...T09Z``) are refused by the model, and they are shorter (the property test
    holds this)."""
    utc = _mask(pc.and_(pc.ends_with(texts, "Z"),
                        pc.greater_equal(pc.binary_length(texts), _MINUTES)))
    others = np.flatnonzero(valid & ~utc)
    if len(others):
        zoned = pc.match_substring_regex(texts.take(pa.array(others)), _ZONED)
        utc[others[_mask(zoned)]] = True
    return utc


#: The length of a date and time to the minute ending with Z (``2025-03-01T09:00Z``).
_MINUTES: Final = 17


def _cast(texts: pa.Array, *, zoned: bool) -> pa.Array | None:
    """Arrow's reading of `texts` as UTC nanoseconds, or None when it refuses one."""
    try:
        if zoned:  # (kept in the block's table: in the reader's pool, see `heap`)
            values = pc.cast(texts, TIME, memory_pool=reader_pool())
        else:  # no offset: the clock time is UTC
            values = pc.cast(texts, pa.timestamp("ns")).cast(pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    return values


def _nanos(values: pa.Array) -> np.ndarray[Any, np.dtype[np.int64]]:
    """`values` (times, no nulls among the rows used) as int64 nanoseconds, to the
    microsecond below as the model keeps them (its times are Python datetimes)."""
    nanos: np.ndarray[Any, np.dtype[np.int64]] = (
        values.cast(pa.int64()).fill_null(0).to_numpy().copy())
    if (nanos % 1000).any():  # decimals past the sixth (rare): dropped, as the model does
        nanos -= nanos % 1000  # (floored, so a time before 1970 is not moved later)
    return nanos


def _as_is(values: pa.Array) -> bool:
    """Whether Arrow's times `values` are the model's as they are: in its years, and
    whole microseconds (looked at without a copy when no time is null)."""
    nanos = values.view(pa.int64())
    if nanos.null_count:
        nanos = nanos.fill_null(_FIRST)
    lowest, highest = (v.as_py() for v in pc.min_max(nanos).values())
    if lowest < _FIRST or highest >= _END:
        return False
    return not (nanos.to_numpy() % 1000).any()


def _mask(mask: pa.Array) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """A boolean Arrow array as numpy, null as False."""
    out: np.ndarray[Any, np.dtype[np.bool_]] = mask.fill_null(False).to_numpy(
        zero_copy_only=False)
    return out


def _times(nanos: np.ndarray[Any, np.dtype[np.int64]],
           known: np.ndarray[Any, np.dtype[np.bool_]]) -> pa.Array:
    """`nanos` as the column's times, null where not `known`."""
    return pc.cast(pa.array(nanos, type=pa.int64(), mask=~known), TIME,
                   memory_pool=reader_pool())


@functools.cache
def _adapter() -> Any:
    from pydantic import TypeAdapter

    from .events import Timestamp

    return TypeAdapter(list[Timestamp])


def _model_times(texts: list[str]) -> tuple[dict[int, int], list[tuple[int, str]]]:
    """The model's reading of `texts`: {index: UTC nanoseconds} for those it takes,
    (index, message) for those it refuses; two calls of its type at most."""
    from pydantic import ValidationError

    adapter = _adapter()
    refused: list[tuple[int, str]] = []
    taken = list(range(len(texts)))
    try:
        times = adapter.validate_python(texts)
    except ValidationError as exc:  # in the words the model's refusals use (each at its index)
        refused = [(int(p.key or 0), p.message) for p in validation_problems(exc)]
        bad = {at for at, _ in refused}
        taken = [at for at in taken if at not in bad]
        times = adapter.validate_python([texts[at] for at in taken])
    stamps = pa.array(times, type=pa.timestamp("us", tz="UTC")).cast(pa.int64()).to_numpy()
    return {at: int(value) * 1000 for at, value in zip(taken, stamps, strict=True)}, refused
