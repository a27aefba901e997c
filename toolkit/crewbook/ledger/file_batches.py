"""Many small ledger files read as one block (`parse_files`): a folder of one file per run
holds thousands of files of a few events each, and reading each alone costs an Arrow
read, a thread and the column checks per file (2 ms a file: 14,500 files of 20 events
took 29 s, against 0.7 s for the same events in one file).

Neighbouring small files are joined into batches of about `BATCH` bytes, each batch
parsed as one file (`parse.BlockParser`), and every problem is put back in its own file
and line. Only files that read alone exactly as inside a batch are joined: regular ``.jsonl``
files of at most `BATCH_FILE` bytes that hold an event, end with a newline and do not
start with a byte-order mark. Any other file (empty, cut short at its end, big, a
spec-kit run, Parquet, unreadable) is read alone, in its place.
"""

from __future__ import annotations

import bisect
import stat
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Final

import pyarrow as pa

from ..errors import Problem
from .arrow_read import arrow_read
from .lines import TRUNCATED, truncated
from .parse import BOM, NOT_SPACE, BlockParser, Parsed

#: A ledger file at most this big may be read with its neighbours ...
BATCH_FILE: Final = 256 << 10
#: ... in batches of about this many bytes (a file of `file_blocks`' smallest block).
BATCH: Final = 1 << 20

#: What reads one file alone (the reader's `read_one`).
ReadOne = Callable[[Path, str], Parsed]


def parse_files(files: Sequence[tuple[Path, str]], with_payload: bool,
                read_one: ReadOne) -> list[Parsed]:
    """The parsed events of `files` (path, name shown), in order: small ledger files in
    batches (Arrow reading the next batch in a thread while this one is checked, as
    `file_blocks` reads a big file), any other by `read_one`; problems name their own
    file and line."""
    parts: list[Parsed] = []
    batch: list[tuple[str, bytes]] = []
    size = 0
    with ThreadPoolExecutor(1) as pool:
        ahead: _Batch | None = None

        def advance(batch: list[tuple[str, bytes]]) -> _Batch | None:
            """Start Arrow's read of `batch` (if any), then parse the batch before it."""
            following = None
            if batch:
                data = b"".join(data for _, data in batch)
                following = (batch, data, pool.submit(arrow_read, pa.py_buffer(data),
                                                      with_payload, not with_payload))
            if ahead is not None:
                parts.append(_parsed(*ahead, with_payload))
            return following

        for path, shown in files:
            data = _small_ledger(path)
            if data is None or size + len(data) > BATCH:
                ahead = advance(batch)
                batch, size = [], 0
            if data is None:
                ahead = advance([])
                parts.append(read_one(path, shown))
                continue
            batch.append((shown, data))
            size += len(data)
        ahead = advance(batch)
        advance([])
    return parts


def _small_ledger(path: Path) -> bytes | None:
    """The bytes of `path` when it may be read in a batch (see the module), else None."""
    if path.suffix != ".jsonl":
        return None
    try:
        info = path.stat()  # before opening: opening a FIFO would wait for a writer
        if not stat.S_ISREG(info.st_mode) or not 0 < info.st_size <= BATCH_FILE:
            return None
        with open(path, "rb") as handle:
            data = handle.read(BATCH_FILE + 1)
    except OSError:  # read alone, which says why
        return None
    if (len(data) > BATCH_FILE or not data.endswith(b"\n") or data.startswith(BOM)
            or not NOT_SPACE.search(data)):
        return None
    return data


#: A batch: its files (name shown, bytes), their bytes joined, Arrow's read of them.
_Batch = tuple[list[tuple[str, bytes]], bytes, "Future[pa.Table | None]"]


def _parsed(batch: list[tuple[str, bytes]], data: bytes, ahead: Future[pa.Table | None],
            with_payload: bool) -> Parsed:
    """The files of `batch` parsed as one (`data`, read by Arrow in `ahead`), each
    problem moved to its own file and line."""
    firsts: list[int] = []  # the batch's line number before each file's first line
    lines = 0
    for _, text in batch:
        firsts.append(lines)
        lines += text.count(b"\n")
    parsed = BlockParser(data, batch[0][0], with_payload, ahead=ahead).run()
    return Parsed(parsed.table, parsed.texts,
                  [_moved(p, batch, firsts) for p in parsed.problems])


def _moved(problem: Problem, batch: list[tuple[str, bytes]], firsts: list[int]) -> Problem:
    """`problem` (a line of the batch) told of the line of the file that holds it."""
    if problem.line is None:  # not about a line (a batch always holds events)
        return problem
    index = bisect.bisect_right(firsts, problem.line - 1) - 1
    shown, line = batch[index][0], problem.line - firsts[index]
    if problem.code == TRUNCATED:  # its message names the line
        return truncated(shown, line, last=False)
    return replace(problem, path=shown, line=line)
