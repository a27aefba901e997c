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


def test_a_line_longer_than_arrows_block_is_read_by_arrow_not_line_by_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A payload of a few hundred KB in a block of small lines: longer than a quarter of
    the block (Arrow's block), so Arrow's first read straddles; the block is read again
    as one Arrow block, not split down to single lines."""
    from crewbook.ledger import parse

    by_line: list[int] = []
    real = parse.BlockParser.line_by_line
    monkeypatch.setattr(parse.BlockParser, "line_by_line",
                        lambda self, lo, hi: by_line.append(hi - lo) or real(self, lo, hi))
    lines = [line(event(i, payload={"n": i})) for i in range(600)]
    lines[300] = line(event(300, payload={"diff": "+ a line\n" * 40_000}))
    data = ("\n".join(lines) + "\n").encode()
    assert len(lines[300]) > len(data) // 4  # longer than Arrow's block
    parsed = parse_bytes(data, "l.jsonl")
    assert (by_line, parsed.problems, parsed.table.num_rows) == ([], [], 600)
    assert parsed.payloads is not None
    assert parsed.payloads[300] == {"diff": "+ a line\n" * 40_000}
    assert parsed.payloads[299] == {"n": 299}
