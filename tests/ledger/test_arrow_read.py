"""Arrow's reading of a block: its threads and block sizes."""

from __future__ import annotations

import pyarrow as pa
import pytest

from crewbook.ledger.parse import parse_bytes

from .conftest import event, line


@pytest.mark.parametrize(("cpus", "with_payload", "threads"), [
    (2, True, False),  # the decode and Arrow's read already keep both cores busy
    (2, False, True),  # nothing to decode: Arrow's threads share the block
    (1, True, False),
    (8, True, True),
])
def test_arrow_reads_in_one_thread_only_when_the_decode_needs_the_other_core(
        monkeypatch: pytest.MonkeyPatch, cpus: int, with_payload: bool, threads: bool) -> None:
    from crewbook.ledger import arrow_read

    monkeypatch.setattr(pa, "cpu_count", lambda: cpus)
    options = arrow_read.read_options(4 << 20, with_payload)
    assert options.use_threads is threads
    assert options.block_size == (4 << 20) // 4 + 1
    data = "".join(line(event(i)) + "\n" for i in range(50)).encode()
    assert len(parse_bytes(data, "l.jsonl", with_payload=with_payload).table) == 50
