"""Arrow payload structs to plain Python dicts, key by key, with the collector paused.

Arrow infers one struct type per block for all the payloads in it (the union of
their keys); a row's struct then holds None for every key the event did not have.
`payload_dicts` gives each event back exactly its own keys.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..sources import paused_gc


def payload_dicts(table: pa.Table) -> list[dict[str, Any]]:
    """The payload of each row as a plain dict holding only the keys the event had.

    Arrow infers one struct type for all payloads of a block (the union of their
    keys), so a row's struct has None for every key it did not have; those (and
    explicit JSON nulls, which Arrow cannot tell apart) are dropped, at every depth.
    Work is done column by column, so it costs one Python step per key present,
    not per key known.
    """
    n = table.num_rows
    if "payload" not in table.column_names or n == 0:
        return [{} for _ in range(n)]
    column = table.column("payload").combine_chunks()
    if not pa.types.is_struct(column.type):
        return [{} for _ in range(n)]
    with paused_gc():
        return [d if d is not None else {} for d in _to_python(column)]


def _to_python(array: pa.Array) -> list[Any]:
    """Python values of `array`, with structs as dicts of their non-null fields only."""
    kind = array.type
    if pa.types.is_struct(kind):
        if array.null_count:
            out: list[Any] = [{} if ok else None for ok in array.is_valid().to_pylist()]
        else:
            out = [{} for _ in range(len(array))]
        for field_, child in zip(kind, array.flatten(), strict=True):
            nulls = child.null_count
            if nulls == len(child):
                continue
            name = field_.name
            if nulls:
                present = child.is_valid()
                rows = pc.indices_nonzero(present).to_pylist()
                for row, value in zip(rows, _to_python(child.filter(present)), strict=True):
                    out[row][name] = value
            else:
                for item, value in zip(out, _to_python(child), strict=True):
                    item[name] = value
        return out
    if _is_list(kind) and _has_struct(kind.value_type):
        values = _to_python(array.flatten())
        offsets = array.offsets.to_pylist()
        valid = array.is_valid().to_pylist() if array.null_count else None
        first = offsets[0]
        return [values[offsets[i] - first:offsets[i + 1] - first]
                if valid is None or valid[i] else None for i in range(len(array))]
    return array.to_pylist()  # type: ignore[no-any-return]


def _is_list(t: pa.DataType) -> bool:
    return bool(pa.types.is_list(t) or pa.types.is_large_list(t))


def _has_struct(t: pa.DataType) -> bool:
    if pa.types.is_struct(t):
        return True
    if _is_list(t):
        return _has_struct(t.value_type)
    return False
