"""The reader's memory: its Arrow pool, chosen at the first read, and heap trimming."""

from __future__ import annotations

import pyarrow as pa
import pytest

from crewbook.ledger.heap import reader_pool
from crewbook.ledger.parse import parse_bytes

from .conftest import event, line


def test_the_reader_pool_is_chosen_at_the_first_read(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(pa, "jemalloc_set_decay_ms", calls.append)
    reader_pool.cache_clear()
    try:
        assert reader_pool.cache_info().currsize == 0
        assert calls == []
        parsed = parse_bytes((line(event(0)) + "\n").encode(), "p.jsonl")
        assert parsed.table.num_rows == 1
        pool = reader_pool()
        assert reader_pool.cache_info().currsize == 1
        default = pa.default_memory_pool().backend_name
        # the process-wide jemalloc setting is changed only for a pool of the reader's own
        assert calls == ([0] if pool.backend_name == "jemalloc" != default else [])
        assert pool.backend_name in ("jemalloc", "system")
        assert pool.backend_name != default
    finally:
        reader_pool.cache_clear()


def test_the_heap_is_trimmed_where_glibc_can() -> None:
    import platform

    from crewbook.ledger.heap import _malloc_trim, trim_heap

    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        assert _malloc_trim() is not None
    trim_heap()  # the real call, wherever the suite runs: it never raises


def test_a_block_keeps_its_rows_in_the_readers_pool_also_with_a_refused_line() -> None:
    # rows kept after a refused line are filtered copies; in the default pool, which keeps
    # what is freed (mimalloc), a file of such blocks peaked at 2.53x its frame (now 2.07x)
    lines = [line(event(i, summary="x" * 200, payload={"i": i})) for i in range(5000)]
    lines[77] = lines[77][:-1] + ',"extra":null}'
    lines[3000] = line(event(3000, ts="2025-03-01t09:00:00z"))  # a time the model reads
    data = "".join(text + "\n" for text in lines).encode()
    default = pa.default_memory_pool()
    parse_bytes(data, "warm.jsonl")
    before = default.bytes_allocated()
    parsed = parse_bytes(data, "l.jsonl")
    assert [p.line for p in parsed.problems] == [78]
    held = default.bytes_allocated() - before
    assert held < parsed.table.nbytes // 10, (held, parsed.table.nbytes)
