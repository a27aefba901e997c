"""The payload texts of a block of ledger lines whose top-level keys are all fields: one
msgspec decode of the block, the payloads kept as they are written (`msgspec.Raw`).

This is the reader's usual case (`parse`), and the fast one: the decode rejects any
top-level key that is not a field (also when its value is null, as the model does),
whatever the key order, spacing, escapes or line ending, and keeps each payload's bytes
without parsing them into objects. When it rejects the block (an unknown key, a value
of a type no field has, a byte-order mark), the caller finds the keys and payloads
from the bytes instead (`payloads.line_payloads`), which can say which key of which line
is unknown. Adding a field to the ledger needs nothing here: the decoded type is made
from `events.FIELDS`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any, Final

import pyarrow as pa
import pyarrow.compute as pc

from .events import FIELDS
from .payloads import TEXT, LinePayloads

#: What a field other than the payload may hold, as far as the decode cares: Arrow has
#: already read those fields with their types and the checks judge the values.
_SCALAR: Any = int | float | str | None


#: A block is decoded this many bytes at a time (whole lines): the decoded lines are
#: Python objects, several times the bytes they come from, dropped piece by piece.
PIECE: Final = 256 << 10


def _pieces(data: bytes | bytearray, start: int, end: int) -> Iterator[tuple[int, int]]:
    """``data[start:end]`` cut into ranges of whole lines of about `PIECE` bytes."""
    while start < end:
        stop = data.rfind(b"\n", start, min(start + PIECE, end)) + 1
        if stop <= start:  # a line longer than a piece: up to its end
            stop = data.find(b"\n", start, end) + 1 or end
        if end - stop < PIECE // 4:  # no tiny last piece
            stop = end
        yield start, stop
        start = stop


@functools.cache
def _decoder() -> Any:
    import msgspec

    fields: list[tuple[str, Any, Any]] = [(name, _SCALAR, None) for name in FIELDS
                                          if name != "payload"]
    fields.append(("payload", msgspec.Raw, msgspec.Raw(b"{}")))
    line = msgspec.defstruct("Line", fields, forbid_unknown_fields=True, gc=False)
    return msgspec.json.Decoder(line)


def known_key_payloads(data: bytes | bytearray, start: int, end: int, count: int,
                       pool: pa.MemoryPool | None = None, *, check_utf8: bool = False,
                       ) -> LinePayloads | None:
    """The payload texts of the `count` JSON lines in ``data[start:end]`` ('{}' where a
    line has none, or null), or None when a line holds a top-level key that is not a
    field, or the block is not `count` JSON objects. With `check_utf8`, texts that are
    not UTF-8 give an answer that is not `readable`."""
    import msgspec

    decode = _decoder().decode_lines
    texts: list[bytes] = []
    with memoryview(data) as view:
        for first, stop in _pieces(data, start, end):
            try:
                lines = decode(view[first:stop])
            except (msgspec.DecodeError, msgspec.ValidationError):
                return None
            texts += [bytes(line.payload) for line in lines]
            del lines  # (their payloads are views of `data`)
    if len(texts) != count:
        return None
    raw = pa.array(texts, type=pa.binary(), memory_pool=pool)
    if check_utf8:
        try:
            raw.view(TEXT).validate(full=True)
        except pa.ArrowInvalid:
            return LinePayloads(raw.view(TEXT), readable=False)
    out = raw.view(TEXT)
    if b"null" in texts:
        out = pc.if_else(pc.equal(out, "null"), "{}", out, memory_pool=pool)
    return LinePayloads(out)
