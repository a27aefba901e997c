"""A ledger file read in blocks of whole lines (`parse_file`): each block parsed as
`parse_bytes` parses a whole file, Arrow reading the next block in a thread meanwhile;
line numbers counted from the start of the file; memory bounded by the frame and a block."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Final

import numpy as np
import pyarrow as pa

from .arrow_read import ARROW_BLOCK, arrow_read
from .columns import concat, empty_table
from .heap import trim_heap
from .parse import NOT_SPACE, BlockParser, Parsed, empty_problem
from .payloads import TEXT

#: A file is read at most this many bytes at a time (whole lines), so reading needs
#: memory for the frame and one block, not for the whole file as well. A block's
#: transient memory is several times its size: a big share of the peak for a file of
#: tens of MB, less for one of hundreds. On 300,000 events (74-134 MB) 2 MiB blocks
#: peak at 1.4-2.2x the frame, 4 MiB ones at 1.4-2.5x, in the same time.
FILE_BLOCK: Final = 2 << 20
#: ... and at least this many (files below `SMALL_FILE` bytes). On 100,000 events
#: (25 MB) 1 MiB blocks peak at 2.0-2.3x the frame, 2 MiB ones at 2.7-2.8x; they cost
#: about a tenth more time (within this 2-core machine's noise).
MIN_FILE_BLOCK: Final = 1 << 20
SMALL_FILE: Final = 64 << 20
#: Freed heap pages are handed back to the system every this many bytes read (see
#: `trim_heap`).
TRIM_EVERY: Final = 4 << 20


def parse_file(path: str | os.PathLike[str], name: str, *, with_payload: bool = True,
               block: int | None = None) -> Parsed:
    """`parse_bytes` of a file, read `block` bytes (whole lines) at a time (by default
    `file_block` of its size): the same result, with line numbers counted from the
    start of the file."""
    parts: list[Parsed] = []
    line0 = 0
    blank = True
    with open(path, "rb") as handle, ThreadPoolExecutor(1) as pool:
        size = os.fstat(handle.fileno()).st_size
        if block is None:
            block = file_block(size)
        exact = not with_payload
        # one buffer for every block's per-byte masks (a block is `block` bytes plus
        # the start of a line carried over, at most the file; a longer one, or a file
        # grown since, gets masks of its own)
        scratch = np.empty(min(block, size) + ARROW_BLOCK, dtype=bool)
        ahead: tuple[bytearray, Future[pa.Table | None]] | None = None
        read = untrimmed = 0
        for data in _whole_lines(handle, block):
            read += len(data)
            untrimmed += len(data)
            if untrimmed >= TRIM_EVERY:
                trim_heap()
                untrimmed = 0
            # Arrow reads the next block (in its threads, GIL released) while this one
            # is checked and sliced: the serial Python/numpy part overlaps Arrow's
            if data.endswith(b"\n"):
                following = (data, pool.submit(arrow_read, pa.py_buffer(data),
                                               with_payload, exact))
            else:
                following = None
            if ahead is not None:
                line0, blank = _parse_block(ahead[0], ahead[1], name, with_payload, line0,
                                            blank, parts, scratch)
            ahead = following
            if following is None:
                line0, blank = _parse_block(data, None, name, with_payload, line0, blank,
                                            parts, scratch)
            del data, following
        if ahead is not None:
            line0, blank = _parse_block(ahead[0], ahead[1], name, with_payload, line0, blank,
                                        parts, scratch)
        del ahead
        if not parts:
            parts.append(BlockParser(b"", name, with_payload, line0, whole=False).run())
    del scratch
    if read >= MIN_FILE_BLOCK:  # the last blocks' garbage, before the frame is built
        trim_heap()
    problems = [p for part in parts for p in part.problems]
    if blank and not problems:
        problems.append(empty_problem(name))
    if len(parts) == 1:
        return Parsed(parts[0].table, parts[0].texts, problems)
    tables = [part.table for part in parts if part.table.num_rows] or [empty_table()]
    texts = None
    if with_payload:
        texts = pa.chunked_array([c for part in parts if part.texts is not None
                                  for c in part.texts.chunks], type=TEXT)
    return Parsed(concat(tables), texts, problems)


def _whole_lines(handle: io.BufferedIOBase, block: int) -> Iterator[bytearray]:
    """The bytes of `handle`, about `block` at a time, each piece whole lines (the last
    one maybe not ending with a newline).

    Each piece is read into a buffer of its own (the carried-over part of a line
    first), then cut at its last newline in place: no piece is ever copied whole, so
    reading holds one block's bytes, not two or three. A line longer than a block is
    read on in reads as long as what is carried over (the buffer doubles), and only the
    bytes just read are searched for a newline (what is carried over holds none): a
    line of any length costs reading it, not its length squared."""
    rest = b""
    while True:
        data = bytearray(len(rest) + max(block, len(rest)))
        data[:len(rest)] = rest
        with memoryview(data) as view, view[len(rest):] as into:
            got = handle.readinto(into) or 0
        size = len(rest) + got
        if not got:
            del data[size:]
            if data:
                yield data
            return
        cut = data.rfind(b"\n", len(rest), size) + 1
        if cut == 0:  # no newline yet: a line longer than the block, read on
            del data[size:]
            rest = bytes(data)
            continue
        rest = bytes(data[cut:size])
        del data[cut:]  # in place: a bytearray shrinks without a copy
        yield data
        del data


def _parse_block(data: bytes | bytearray, ahead: Future[pa.Table | None] | None, name: str,
                 with_payload: bool, line0: int, blank: bool, parts: list[Parsed],
                 scratch: np.ndarray[Any, np.dtype[np.bool_]] | None = None,
                 ) -> tuple[int, bool]:
    """Parse one piece of a file into `parts`: (lines so far, all blank so far)."""
    parser = BlockParser(data, name, with_payload, line0, whole=False, ahead=ahead,
                         scratch=scratch)
    parts.append(parser.run())
    return line0 + parser.newline_count(), blank and not NOT_SPACE.search(data)


def file_block(size: int) -> int:
    """How many bytes of a file of `size` bytes to read at a time (see `FILE_BLOCK`)."""
    return MIN_FILE_BLOCK if size < SMALL_FILE else FILE_BLOCK

