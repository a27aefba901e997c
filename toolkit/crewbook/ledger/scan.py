"""The top level of JSON lines, found from their bytes: each line's keys and where its
payload's object starts and ends, in any key order, without parsing a line.

The reader's fast path (see `payloads.line_payloads`) has Arrow read the fixed fields;
this finds what Arrow skips: every top-level key (to refuse the ones that are not
fields, even when their value is null) and the payload's text, cut out of the line.
The reader decodes a block with msgspec first (`known_keys`: a struct of the fields,
then dicts of raw values for a piece holding an unknown key); this scan reads only what
both decodes refuse (a NaN literal, a key that is not UTF-8).
It works on a block of lines Arrow has read, so every line is one valid JSON object,
and it does a few numpy passes over the bytes, whatever the key order, spacing, nulls,
nesting or escapes:

1. the quotes that delimit strings (a quote after an odd run of backslashes is inside
   a string);
2. the colons and brackets outside strings (an even count of quotes before them), and
   the depth after each bracket (a running sum of +1 and -1);
3. a colon at depth 1 follows a top-level key, the string just before it (`named`
   compares key names: the ranges of a name's length byte for byte when there are a
   few names, else by length and two 8-byte words read in place); the key
   named ``payload`` has its value after the colon (and spaces): an object, cut up to
   the first bracket after it that closes back to depth 1, or ``null``.

A line whose top-level keys hold a backslash (``"p\\u0061yload"``), or whose payload is
neither an object nor null (Arrow's exact read lets a wrong type through, for the
checks to name), is marked `doubtful`: its caller parses it. Adding a field to the
ledger needs nothing here: the scan does not know the fields, the caller compares the
key names it gives with `events.FIELDS`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from numpy.lib.stride_tricks import as_strided

Ints = np.ndarray[Any, np.dtype[np.int64]]
Bools = np.ndarray[Any, np.dtype[np.bool_]]



@dataclass(frozen=True)
class Scan:
    """The top level of `count` lines, positions as offsets into the bytes scanned.

    `key_first`/`key_stop` bound each top-level key's text (between its quotes, in file
    order), `key_line` its line, `key_null` whether its value is ``null``;
    `payload_first`/`payload_stop` bound each line's payload
    object (equal where it has none, or a null); `has_payload` says which lines hold a
    ``payload`` key; `doubtful` marks the lines the scan cannot vouch for (see module).
    """

    key_first: Ints
    key_stop: Ints
    key_line: Ints
    key_null: Bools
    payload_first: Ints
    payload_stop: Ints
    has_payload: Bools
    doubtful: Bools


#: Lines are scanned about this many bytes at a time (whole lines): the scan's arrays
#: take a few times the bytes scanned (a big block of a file would raise the peak), and
#: its passes over the positions of quotes and brackets run in a core's L2 cache when a
#: piece is small: 256 KiB pieces take 10-20% less CPU than 1 MiB ones (64 KiB ones
#: more: a numpy call's fixed cost), on the writer's, shuffled and nested ledgers.
CHUNK: Final = 256 << 10


def scan(raw: np.ndarray[Any, np.dtype[np.uint8]], starts: Ints, ends: Ints) -> Scan:
    """The top level of the lines ``raw[starts[i]:ends[i]]``: sorted, non-overlapping
    ranges, each one valid JSON object (blank bytes may lie between them)."""
    count = len(starts)
    if not count:
        empty = np.zeros(0, dtype=np.int64)
        none = np.zeros(0, dtype=bool)
        return Scan(empty, empty, empty, none, empty, empty, none, none)
    # whole lines, in pieces of about the same size, at most 1.5 CHUNK each (a block
    # of a file a little over CHUNK is scanned in one go, not a second tiny piece)
    total = int(ends[-1]) - int(starts[0])
    piece = -(-total // max(round(total / CHUNK), 1))
    cuts = [0]
    while cuts[-1] < count:  # at least one line a piece
        limit = int(starts[cuts[-1]]) + piece
        cuts.append(max(int(np.searchsorted(ends, limit, side="right")), cuts[-1] + 1))
    if len(cuts) == 2:
        return _scan(raw, starts, ends)
    parts = [_scan(raw, starts[a:b], ends[a:b]) for a, b in itertools.pairwise(cuts)]
    lines = [np.asarray(part.key_line) + a for part, a in zip(parts, cuts, strict=False)]
    joined = {name: np.concatenate([getattr(part, name) for part in parts])
              for name in ("key_first", "key_stop", "key_null", "payload_first",
                           "payload_stop", "has_payload", "doubtful")}
    return Scan(key_line=np.concatenate(lines), **joined)


def _scan(raw: np.ndarray[Any, np.dtype[np.uint8]], starts: Ints, ends: Ints) -> Scan:
    """`scan` of lines in one go."""
    count = len(starts)
    low, high = int(starts[0]), int(ends[-1])
    window = raw[low:high]
    rel_starts = starts - low
    slashes = np.flatnonzero(window == 92)
    quotes = _string_quotes(window, slashes)
    # the keys: strings followed by ':', found by their closing quote (odd indexes)
    after = _skip_space(window, quotes[1::2] + 1)
    key = np.flatnonzero(window[after] == 58)
    colons = after[key]
    key *= 2  # each key's opening quote, as an index into `quotes`
    del after
    # brackets outside strings (an even count of quotes before), each counted at the
    # quote after it: the depth at each quote is then a running sum over the quotes
    folded = window | 32  # '[' and ']' fold onto '{' and '}' (no other byte does)
    brackets = np.flatnonzero((folded == 123) | (folded == 125))
    del folded
    next_quote = np.searchsorted(quotes, brackets)
    outside = (next_quote & 1) == 0
    brackets, next_quote = brackets[outside], next_quote[outside]
    opens = (window[brackets] | 32) == 123
    size = len(quotes) + 1
    depth = np.cumsum(np.bincount(next_quote[opens], minlength=size)
                      - np.bincount(next_quote[~opens], minlength=size))
    at_top = depth[key] == 1
    top = key[at_top]  # keys at depth 1
    # each quote's line: a running count of the lines starting before it
    first_quote = np.searchsorted(quotes, rel_starts)
    line_of = np.cumsum(np.bincount(first_quote, minlength=len(quotes) + 1)) - 1
    key_line = line_of[top]
    colons = colons[at_top]
    key_first, key_stop = quotes[top] + 1, quotes[top + 1]
    doubtful = np.zeros(count, dtype=bool)
    if len(slashes):  # an escape in a key: its name is not its bytes
        escaped = np.searchsorted(slashes, key_stop) > np.searchsorted(slashes, key_first)
        doubtful[key_line[escaped]] = True
    values = _skip_space(window, colons + 1)
    value_byte = window[values]
    key_null = value_byte == 110  # a valid value starting with 'n' is null
    is_payload = named(window, key_first, key_stop, (b"payload",))
    lines = key_line[is_payload]
    value = values[is_payload]
    has_payload = np.zeros(count, dtype=bool)
    has_payload[lines] = True
    is_object = value_byte[is_payload] == 123
    doubtful[lines[~is_object & ~key_null[is_payload]]] = True  # not an object nor null
    first = np.asarray(rel_starts, dtype=np.int64).copy()
    stop = first.copy()
    if is_object.any():
        opened = value[is_object]
        step = np.where(opens, 1, -1)
        back = brackets[(np.cumsum(step) == 1) & ~opens]  # brackets closing to depth 1
        first[lines[is_object]] = opened
        stop[lines[is_object]] = back[np.searchsorted(back, opened)] + 1
    return Scan(key_first + low, key_stop + low, key_line, key_null, first + low,
                stop + low, has_payload, doubtful)


def _string_quotes(window: np.ndarray[Any, np.dtype[np.uint8]], slashes: Ints) -> Ints:
    """Where the quotes that open or close a string are (not the escaped ones), given
    where the backslashes are."""
    quotes = np.flatnonzero(window == 34)
    if not len(slashes):
        return quotes
    after = slashes[window[np.minimum(slashes + 1, len(window) - 1)] == 34] + 1
    if not len(after):
        return quotes
    run = np.ones(len(after), dtype=np.int64)  # backslashes just before each
    going = np.ones(len(after), dtype=bool)
    while going.any():
        at = after - run - 1
        going &= (at >= 0) & (window[np.maximum(at, 0)] == 92)
        run += going
    keep = np.ones(len(quotes), dtype=bool)
    keep[np.searchsorted(quotes, after[run % 2 == 1])] = False
    return quotes[keep]


def named(raw: np.ndarray[Any, np.dtype[np.uint8]], first: Ints, stop: Ints,
          names: tuple[bytes, ...]) -> Bools:
    """Which of the ranges ``raw[first:stop]`` hold exactly one of `names` (whose first
    eight bytes differ). Up to `_FEW_NAMES` names, only the ranges of a name's length
    are compared with it, whole; more are compared by length and two 8-byte words, the
    first and last eight bytes of each range, read in place."""
    if not len(first):
        return np.zeros(0, dtype=bool)
    length = stop - first
    if len(names) <= _FEW_NAMES:
        return _named_by_length(raw, first, length, names)
    head = _words(raw, first, np.minimum(length, 8))
    tail = _words(raw, np.maximum(stop - 8, first), 8)
    tail[length < 8] = head[length < 8]
    want = [np.frombuffer(name[:8].ljust(8, b"\0"), dtype="<u8")[0] for name in names]
    order = np.argsort(want, kind="stable")
    heads = np.asarray(want, dtype=np.uint64)[order]
    lengths = np.array([len(names[i]) for i in order], dtype=np.int64)
    tails = np.array([np.frombuffer(names[i][-8:].ljust(8, b"\0"), dtype="<u8")[0]
                      if len(names[i]) >= 8 else want[i] for i in order], dtype=np.uint64)
    at = np.minimum(np.searchsorted(heads, head), len(heads) - 1)
    return np.asarray((heads[at] == head) & (lengths[at] == length) & (tails[at] == tail))


#: Up to this many names, `named` compares only the ranges of a name's length, byte for
#: byte (the payload's key among a line's keys); more go by 8-byte words.
_FEW_NAMES: Final = 2


def _named_by_length(raw: np.ndarray[Any, np.dtype[np.uint8]], first: Ints, length: Ints,
                     names: tuple[bytes, ...]) -> Bools:
    """`named` for a few names: the ranges as long as a name are copied out as rows of
    a strided view of `raw` and compared whole."""
    out = np.zeros(len(first), dtype=bool)
    for name in names:
        size = len(name)
        pick = np.flatnonzero(length == size)
        if not len(pick) or size == 0:
            out[pick] = size == 0
            continue
        rows = as_strided(raw, (len(raw) - size + 1, size), (1, 1), writeable=False)
        keys = np.ascontiguousarray(rows[first[pick]]).view(f"V{size}").ravel()
        out[pick] |= keys == np.frombuffer(name, dtype=f"V{size}")[0]
    return out


_MASKS: Final = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)


def _words(raw: np.ndarray[Any, np.dtype[np.uint8]], at: Ints, size: Any,
           ) -> np.ndarray[Any, np.dtype[np.uint64]]:
    """The `size` (<= 8) bytes at each of `at` as little-endian integers, read through an
    unaligned 8-byte view of `raw` (a padded copy of its end for the last few)."""
    count = len(raw) - 7
    late = at >= count
    if late.any():  # within 8 bytes of the end: read from a padded copy of the end
        tail = np.zeros(16, dtype=np.uint8)
        end = raw[max(len(raw) - 8, 0):]
        tail[:len(end)] = end
        words = np.zeros(len(at), dtype=np.uint64)
        words[~late] = _words(raw, at[~late], 8)
        words[late] = _words(tail, at[late] - max(len(raw) - 8, 0), 8)
    else:
        view = np.ndarray((count,), dtype="<u8", buffer=raw.data, strides=(1,))
        words = view[at]
    if isinstance(size, int) and size == 8:
        return words
    return np.asarray(words & _MASKS[size], dtype=np.uint64)


def _skip_space(window: np.ndarray[Any, np.dtype[np.uint8]], at: Ints) -> Ints:
    """Each position of `at` moved past the white space there."""
    while len(at):
        byte = window[at]
        space = (byte == 32) | (byte == 9) | (byte == 13)
        if not space.any():
            break
        at = at + space
    return at
