"""Arrow's reading of a block of JSON lines with the reader's explicit schema: how many
threads and how big Arrow's own blocks, and the checks Arrow leaves out (UTF-8 in the
values and in the keys)."""

from __future__ import annotations

from typing import Final

import pyarrow as pa
import pyarrow.json as pj

from .columns import FAST_SCHEMA, READ_SCHEMA
from .heap import reader_pool

#: The smallest block Arrow's threads are given.
ARROW_BLOCK: Final = 64 << 10


def arrow_read(buf: pa.Buffer, with_payload: bool, exact: bool) -> pa.Table | None:
    """Arrow's reading of the JSON lines in `buf`, or None when Arrow refuses them.
    `exact` infers every key not in the schema (payload too); else the payload is read
    as an empty object (fast; the keys are then checked by `_Parser.accept`)."""
    if not with_payload:
        options = pj.ParseOptions(explicit_schema=READ_SCHEMA,
                                  unexpected_field_behavior="ignore")
    elif exact:
        options = pj.ParseOptions(explicit_schema=READ_SCHEMA,
                                  unexpected_field_behavior="infer")
    else:
        options = pj.ParseOptions(explicit_schema=FAST_SCHEMA,
                                  unexpected_field_behavior="ignore")
    reading = read_options(len(buf), with_payload)
    for attempt in range(2):
        try:
            table = pj.read_json(pa.BufferReader(buf), parse_options=options,
                                 memory_pool=reader_pool(), read_options=reading)
            table.validate(full=True)  # Arrow's JSON reader lets invalid UTF-8 through
            decode_field_names(table.schema)  # ... even in keys: validate() does not check
        except (pa.ArrowException, ValueError) as exc:  # ArrowInvalid, bad UTF-8...
            if attempt or _STRADDLING not in str(exc):
                return None
            # a line longer than Arrow's block (a payload of a MB or more): read the
            # whole of `buf` as one block, rather than splitting it down to single lines
            reading = pj.ReadOptions(block_size=len(buf) + 1, use_threads=False)
            continue
        return table
    return None


#: What Arrow says of a line longer than its block (matched to read it again as one
#: block; were the words to change, such a block would be split as any refused one).
_STRADDLING: Final = "straddl"



def read_options(size: int, with_payload: bool) -> pj.ReadOptions:
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


def decode_field_names(schema: pa.Schema) -> None:
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

