"""The rules of `LedgerEvent` checked on whole Arrow columns (a few kernels per block
of a valid file), and what to say about each broken one."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import did_you_mean
from .columns import FIXED
from .events import FIELDS, KINDS, MINIMUMS, REQUIRED_BY_KIND, missing_message

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


#: `present_counts` of a block, computed when first asked (only the byte scan needs it).
Present = Callable[[], np.ndarray[Any, np.dtype[np.int64]]]


def present_counts(table: pa.Table) -> np.ndarray[Any, np.dtype[np.int64]]:
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


@functools.lru_cache(maxsize=256)
def unknown_key(key: str) -> str:
    """What to say about a top-level key that is not a field (remembered: a ledger with
    an unknown key mostly has it on many lines, and the nearest field is looked for by
    difflib, a tenth of a millisecond a time)."""
    return f"unknown key {key!r}{did_you_mean(key, FIELDS)}; put extra data under 'payload'"


def _needs(kinds: pa.ChunkedArray, name: str) -> Callable[[int], str]:
    def message(row: int) -> str:
        return f"a {kinds[row].as_py()!r} event needs {name}"

    return message


def _below(column: pa.ChunkedArray, name: str, low: int) -> Callable[[int], str]:
    def message(row: int) -> str:
        return f"{name} is {column[row].as_py()}; it must be ≥ {low}"

    return message

