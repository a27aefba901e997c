"""A file read in blocks of whole lines gives what its bytes give; blocks keep narrow
columns; the heap is trimmed as the file is read."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from crewbook.ledger.lines import TRUNCATED
from crewbook.ledger.parse import BlockParser, parse_bytes

from .conftest import event, line


@pytest.mark.parametrize("tail", ["", '{"v":1,"ts":"2025-0', "  \n"])
def test_a_file_read_in_blocks_gives_what_its_bytes_give(tmp_path: Path, tail: str) -> None:
    from crewbook.ledger.file_blocks import parse_file

    lines = [line(event(i, payload={"n": i})) for i in range(400)]
    lines[123] = line({**event(123), "seq": "x"})  # a bad line in a later block
    lines[250] = ""  # a blank line
    data = ("\n".join(lines) + "\n" + tail).encode()
    path = tmp_path / "l.jsonl"
    path.write_bytes(data)
    whole = parse_bytes(data, "l.jsonl")
    for block in (2_000, 10_000, 1 << 20):  # blocks of a few lines (read ahead), one block
        parsed = parse_file(path, "l.jsonl", block=block)
        assert parsed.problems == whole.problems
        assert parsed.table.to_pylist() == whole.table.to_pylist()
        assert parsed.payloads == whole.payloads
    assert [p.line for p in whole.problems] == [124] + ([401] if "ts" in tail else [])


def test_kept_blocks_are_narrow_and_widened_where_a_block_does_not_fit(
        tmp_path: Path) -> None:
    """Blocks keep their columns in narrow types (less memory than the frame they
    become); one whose values do not fit stays wide, and joining widens the rest, with
    every value exact."""
    from crewbook.ledger.file_blocks import parse_file
    from crewbook.ledger.reader import read_ledger

    first = [event(i, tokens_in=i) for i in range(100)]
    second = [event(100 + i, tokens_in=2**40 + i, role=f"role-{i}") for i in range(300)]
    path = tmp_path / "l.jsonl"
    path.write_text("".join(line(e) + "\n" for e in first + second))
    small = parse_file(path, "l.jsonl", block=len(path.read_bytes()) // 2)  # 2 blocks
    assert small.table.column("tokens_in").type == pa.int64()  # widened
    assert small.table.column("role").type.index_type == pa.int32()  # 200 roles in one
    assert small.table.column("tokens_in").to_pylist() == [e["tokens_in"] for e in first + second]
    assert small.table.column("role").to_pylist() == [e["role"] for e in first + second]
    narrow = parse_file(path, "l.jsonl", block=6_000).table.slice(0, 10)
    one = parse_bytes("".join(line(e) + "\n" for e in first).encode(), "l.jsonl").table
    assert one.column("tokens_in").type == pa.int32()
    assert one.column("kind").type.index_type == pa.int8()
    assert narrow.column("tokens_in").to_pylist() == list(range(10))
    frame = read_ledger(path)
    assert str(frame["tokens_in"].dtype) == "Int64"
    assert frame["tokens_in"].tolist() == [e["tokens_in"] for e in first + second]
    assert frame["role"].tolist() == [e["role"] for e in first + second]


@given(st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=30),
       st.booleans(), st.integers(min_value=1, max_value=64))
def test_a_file_is_cut_into_whole_lines_whatever_the_block(
        lines: list[bytes], final_newline: bool, block: int) -> None:
    import io

    from crewbook.ledger.file_blocks import _whole_lines

    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    pieces = list(_whole_lines(io.BufferedReader(io.BytesIO(data)), block))
    assert b"".join(pieces) == data
    assert all(piece for piece in pieces)
    assert all(piece.endswith(b"\n") for piece in pieces[:-1])
    assert all(piece.count(b"\n") >= 1 for piece in pieces[:-1])


def test_reading_hands_freed_heap_back_every_few_mb_and_at_the_end(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every `TRIM_EVERY` bytes read, then once after the last block (before the frame is
    built); a small file, never (a widget refresh pays nothing)."""
    from crewbook.ledger import file_blocks as parse_module

    calls: list[int] = []
    monkeypatch.setattr(parse_module, "trim_heap", lambda: calls.append(1))
    monkeypatch.setattr(parse_module, "TRIM_EVERY", 10_000)
    monkeypatch.setattr(parse_module, "MIN_FILE_BLOCK", 5_000)
    path = tmp_path / "l.jsonl"
    path.write_text("".join(line(event(i)) + "\n" for i in range(400)))  # about 50 KB
    size = path.stat().st_size
    parsed = parse_module.parse_file(path, "l.jsonl", block=2_000)
    assert parsed.table.num_rows == 400
    assert size // 10_000 <= len(calls) <= size // 10_000 + 2
    calls.clear()
    small = tmp_path / "s.jsonl"
    small.write_text(line(event(1)) + "\n")
    parse_module.parse_file(small, "s.jsonl")
    assert calls == []


def test_narrow_blocks_join_into_categories_wider_than_any_block(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two blocks of 100 roles each (8-bit codes each) make a frame of 200 roles: the
    frame's categories are not bound by a block's code width."""
    from crewbook.ledger.file_blocks import parse_file
    from crewbook.ledger.reader import read_ledger

    events = [event(i, role=f"role-{i:03d}", run=f"run-{i:03d}") for i in range(200)]
    path = tmp_path / "l.jsonl"
    path.write_text("".join(line(e) + "\n" for e in events))
    parsed = parse_file(path, "l.jsonl", block=len(path.read_bytes()) // 2 + 10)
    assert {chunk.type.index_type for chunk in parsed.table.column("role").chunks} == {
        pa.int8()}
    assert parsed.table.column("role").num_chunks == 2
    from crewbook.ledger import file_blocks as parse_module

    monkeypatch.setattr(parse_module, "MIN_FILE_BLOCK", len(path.read_bytes()) // 2 + 10)
    frame = read_ledger(path)
    assert list(frame["role"].cat.categories) == [e["role"] for e in events]
    assert frame["role"].tolist() == [e["role"] for e in events]
    assert frame["run"].tolist() == [e["run"] for e in events]


def test_a_line_longer_than_many_blocks_is_read_in_few_reads() -> None:
    """A line of 1,000 blocks: the buffer doubles, so about ten reads, not a thousand
    (each of which copied and searched everything carried over)."""
    import io

    from crewbook.ledger.file_blocks import _whole_lines

    class Counted(io.BufferedReader):
        reads = 0

        def readinto(self, buffer: Any) -> int:
            Counted.reads += 1
            return super().readinto(buffer)

    long_line = b'{"a":"' + b"x" * 64_000 + b'"}\n'
    data = b'{"b":1}\n' + long_line + b'{"c":2}'
    pieces = list(_whole_lines(Counted(io.BytesIO(data)), 64))
    assert b"".join(pieces) == data
    assert all(piece.endswith(b"\n") for piece in pieces[:-1])
    assert Counted.reads <= 16


def test_a_read_made_ahead_is_waited_for_also_when_unused() -> None:
    # a block whose last line is cut is read without Arrow's whole-block read made ahead;
    # the parser still waits for it, so no read of the block outlives `run`
    def slow_read() -> None:
        time.sleep(0.2)

    good = line(event(0))
    data = (good + "\n" + good[: len(good) // 2]).encode()
    with ThreadPoolExecutor(1) as pool:
        ahead = pool.submit(slow_read)
        parsed = BlockParser(data, "l.jsonl", True, whole=False, ahead=ahead).run()
        assert ahead.done()
    assert parsed.table.num_rows == 1
    assert [p.code for p in parsed.problems] == [TRUNCATED]
