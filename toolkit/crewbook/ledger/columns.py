"""The Arrow form of a ledger's fixed columns: the schema Arrow reads them with, the
category columns kept dictionary-encoded, the narrow widths a parsed block keeps them in,
and the joining of blocks into one table (widened where blocks differ).

Adding a field to the ledger is one line of `ARROW_SCHEMA` (and `events.FIELDS`): the
reading paths (`parse`, `known_keys`, `scan`) take their field lists from here."""

from __future__ import annotations

from typing import Final

import pyarrow as pa
import pyarrow.compute as pc

from .heap import reader_pool

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
#: What Arrow reads a block with: the fixed columns, `ts` as its text (read as the model
#: reads it by `timestamps.read_times`: Arrow's own reading of times is not the model's).
READ_SCHEMA: Final = ARROW_SCHEMA.set(ARROW_SCHEMA.get_field_index("ts"),
                                      pa.field("ts", pa.string()))
#: The fast read: the fixed columns, and `payload` checked to be an object (or null)
#: but not read (its keys ignored); unknown top-level keys are found by `line_payloads`.
FAST_SCHEMA: Final = READ_SCHEMA.append(pa.field("payload", pa.struct([])))

#: Columns with few distinct values, kept dictionary-encoded (categories in the frame).
CATEGORIES: Final = ("run", "loop", "kind", "role", "stage", "verdict")
DICT_SCHEMA: Final = pa.schema([pa.field(f.name, pa.dictionary(pa.int32(), f.type))
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
                schema = schema.set(i, DICT_SCHEMA.field(field_.name))
        tables = [t.cast(schema) if t.schema != schema else t for t in tables]
    return pa.concat_tables(tables)


def empty_table() -> pa.Table:
    return DICT_SCHEMA.empty_table()

