"""The payload texts of ledger lines whose top-level keys are all fields: msgspec decodes
of a block, 16 KiB of whole lines at a time, the payloads kept as they are written
(`msgspec.Raw`).

This is the reader's usual case (`parse`), and the fast one: the decode refuses any
top-level key that is not a field (also when its value is null, as the model does),
whatever the key order, spacing, escapes or line ending, and keeps each payload's bytes
without parsing them into objects. A piece it refuses (an unknown key, a value of a type
not the type Arrow read the field with) is decoded again line by line as dicts of raw
values (`keyed_payloads`), which names each unknown key and its line; only what that
decode refuses too goes to the scan of the bytes (`payloads.line_payloads`). Adding a field
to the ledger needs nothing here: the decoded structs are made from `columns.READ_SCHEMA`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any, Final

import pyarrow as pa
import pyarrow.compute as pc

from .columns import READ_SCHEMA
from .events import FIELDS
from .payloads import TEXT, LinePayloads

_FIELD_SET: Final = frozenset(FIELDS)
#: What a decode raises for lines it refuses: msgspec's `DecodeError` and `ValidationError`
#: (both `ValueError`s; named so without importing msgspec at start-up), or a
#: `RecursionError` for nesting deeper than msgspec goes.
_REFUSED: Final = (ValueError, RecursionError)


#: A block is decoded this many bytes at a time (whole lines): the decoded lines are
#: Python objects, several times the bytes they come from, dropped piece by piece; and
#: a piece holding an unknown key is read again from its bytes, that piece only.
PIECE: Final = 16 << 10


def pieces(data: bytes | bytearray, start: int, end: int) -> Iterator[tuple[int, int]]:
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
    """Lines whose top-level keys are all fields, each field of the type Arrow read it
    with (`_typed_fields`: a tenth faster than any scalar), the payload kept raw."""
    import msgspec

    fields = _typed_fields()
    fields.append(("payload", msgspec.Raw, msgspec.Raw(b"{}")))
    line = msgspec.defstruct("Line", fields, forbid_unknown_fields=True, gc=False)
    return msgspec.json.Decoder(line)


def _typed_fields() -> list[tuple[str, Any, Any]]:
    """Every field but the payload, of its Arrow type (a ``ts`` is a text), or null."""

    def kind(type_: Any) -> Any:
        if pa.types.is_integer(type_):
            return int | None
        if pa.types.is_floating(type_):
            return float | None
        return str | None  # a text, or a time written as text

    return [(f.name, kind(f.type), None) for f in READ_SCHEMA]


Piece = tuple[int, int, list[bytes] | None]


def decoded_pieces(data: bytes | bytearray, start: int, end: int) -> list[Piece]:
    """``data[start:end]`` (whole JSON lines) cut into `pieces`, each decoded: (first
    byte, stop byte, the payload texts of its lines as written: ``null`` where a payload
    is null, ``{}`` where there is none), the texts None when a line of the piece holds
    a top-level key that is not a field (or is not one JSON object of fields)."""

    decode = _decoder().decode_lines
    out: list[Piece] = []
    with memoryview(data) as view:
        for first, stop in pieces(data, start, end):
            try:
                lines = decode(view[first:stop])
            except _REFUSED:
                out.append((first, stop, None))  # (RecursionError: deeper than msgspec goes)
                continue
            out.append((first, stop, [bytes(line.payload) for line in lines]))
            del lines  # (their payloads are views of `data`)
    return out


@functools.cache
def _typed_decoder() -> Any:
    """Lines decoded as Arrow's fast read takes them: each field of its Arrow type (a
    ``ts`` as text), the payload kept raw, any other key let through (the fast read
    names those)."""
    import msgspec

    fields = _typed_fields()
    # an object whose keys are skipped unread (a struct of no field), or null
    fields.append(("payload", msgspec.defstruct("AnObject", [], gc=False) | None, None))
    return msgspec.json.Decoder(msgspec.defstruct("TypedLine", fields, gc=False))


def refused_lines(data: bytes | bytearray, start: int, end: int, limit: int,
                  ) -> list[tuple[int, int]] | None:
    """The lines of ``data[start:end]`` (whole lines) that Arrow's fast read refuses as
    far as a typed decode tells (not one JSON object, a field of another type, a payload
    that is not an object), each as (its first byte, the byte of its newline or `end`).

    Each piece is decoded whole; only a piece the decode refuses is decoded line by line.
    A line this lets through may still be refused (a time Arrow cannot read): the
    caller checks the rest with Arrow all the same. None as soon as more than `limit`
    lines are refused (a file that is not a ledger, say: then nothing is gained)."""

    decoder = _typed_decoder()
    refused: list[tuple[int, int]] = []
    with memoryview(data) as view:
        for first, stop in pieces(data, start, end):
            try:
                decoder.decode_lines(view[first:stop])
                continue  # the usual piece: no line refused
            except _REFUSED:
                pass
            at = first
            while at < stop:
                newline = data.find(b"\n", at, stop)
                close = stop if newline < 0 else newline
                if data[at:close].strip():
                    try:
                        decoder.decode(view[at:close])
                    except _REFUSED:
                        refused.append((at, close))
                        if len(refused) > limit:
                            return None
                at = close + 1
    return refused


@functools.cache
def _keyed_decoder() -> Any:
    import msgspec

    return msgspec.json.Decoder(dict[str, msgspec.Raw])


def keyed_payloads(data: bytes | bytearray, first: int, stop: int,
                   ) -> tuple[list[bytes], list[tuple[int, str]]] | None:
    """The payload texts of the JSON lines in ``data[first:stop]`` ('{}' where a line
    has none, or not an object) and their top-level keys that are not fields (line
    index, key; null-valued ones too), each line decoded as a dict of raw values; None
    when that decode refuses them (keys that are not UTF-8, say)."""

    with memoryview(data) as view:
        try:
            lines = _keyed_decoder().decode_lines(view[first:stop])
        except _REFUSED:
            return None
        texts = [b"{}" if (payload := line.get("payload")) is None else bytes(payload)
                 for line in lines]
        known = _FIELD_SET.issuperset
        unknown = [(index, key) for index, line in enumerate(lines) if not known(line)
                   for key in line if key not in _FIELD_SET]
        del lines  # (their values are views of `data`)
    if any(text[:1] != b"{" for text in texts):  # a payload that is not an object
        texts = [text if text[:1] == b"{" else b"{}" for text in texts]
    return texts, unknown


def text_array(texts: list[bytes], pool: pa.MemoryPool | None = None) -> pa.Array:
    """Decoded payload texts as one Arrow string array, as written (not checked)."""
    return pa.array(texts, type=pa.binary(), memory_pool=pool).view(TEXT)


def as_payloads(texts: pa.Array, pool: pa.MemoryPool | None = None, *, nulls: bool = True,
                check_utf8: bool = False) -> LinePayloads:
    """Payload texts as the payload column holds them: '{}' for a null payload (when
    `nulls` says there may be one); with `check_utf8`, texts that are not UTF-8 give an
    answer that is not `readable`."""
    if check_utf8:
        try:
            texts.validate(full=True)
        except pa.ArrowInvalid:
            return LinePayloads(texts, readable=False)
    if nulls:
        texts = pc.if_else(pc.equal(texts, "null"), "{}", texts, memory_pool=pool)
    return LinePayloads(texts)
