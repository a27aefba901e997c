"""Parsing internals: the fast path and the line-by-line path agree with the model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from crewbook.ledger.events import REQUIRED_BY_KIND, LedgerEvent
from crewbook.ledger.lines import cut_short, is_object_prefix
from crewbook.ledger.parse import SMALL_BLOCK, parse_bytes, reader_pool

from .conftest import event, line

# Values that are sometimes valid and sometimes not, for every field.
field_values: dict[str, st.SearchStrategy[Any]] = {
    "v": st.sampled_from([1, 2, None, "1"]),
    "ts": st.sampled_from(["2025-03-01T09:00:00Z", "2025-03-01T09:00:00.5+01:00",
                           "2025-03-01T09:00:00", "yesterday", 17, None]),
    "run": st.sampled_from(["r1", "", 3, None]),
    "seq": st.sampled_from([0, 5, -1, 1.5, True, "2", None]),
    "loop": st.sampled_from(["crew", "", None]),
    "kind": st.sampled_from(["act", "verdict", "finish", "init", "bar", "acts", None]),
    "role": st.sampled_from(["qa", None, 4]),
    "stage": st.sampled_from(["build", None]),
    "verdict": st.sampled_from(["go", None, False]),
    "attempt": st.sampled_from([1, 0, 3, None, 2.5]),
    "version": st.sampled_from([0, -2, None]),
    "summary": st.sampled_from(["ok", None, ["x"]]),
    "tokens_in": st.sampled_from([0, 10, -1, None]),
    "tokens_out": st.sampled_from([3, None, "3"]),
    "cost": st.sampled_from([0.5, 2, -0.1, None, "0.1"]),
    "duration_ms": st.sampled_from([100, -5, None]),
    "payload": st.sampled_from([{}, {"a": 1}, {"a": [1, {"b": None}]}, [1], "x", None]),
    "extra": st.sampled_from([None, 1]),
}
# The same, limited to values of the right JSON type, so Arrow reads every line and the
# rules are checked column by column (the fast path) rather than by the model.
typed_values: dict[str, st.SearchStrategy[Any]] = {
    "v": st.sampled_from([1, 2, None]),
    "ts": st.sampled_from(["2025-03-01T09:00:00Z", "2025-03-01T09:00:00", None]),
    "run": st.sampled_from(["r1", "", None]),
    "seq": st.sampled_from([0, 5, -1, None]),
    "loop": st.sampled_from(["crew", "", None]),
    "kind": st.sampled_from(["act", "verdict", "finish", "bar", "escalate", "transition",
                             "acts", None]),
    "role": st.sampled_from(["qa", None]),
    "stage": st.sampled_from(["build", None]),
    "verdict": st.sampled_from(["go", None]),
    "summary": st.sampled_from(["ok", None]),
    "attempt": st.sampled_from([1, 0, None]),
    "version": st.sampled_from([0, -2, None]),
    "tokens_in": st.sampled_from([0, -1, None]),
    "tokens_out": st.sampled_from([3, -3, None]),
    "cost": st.sampled_from([0.5, -0.1, None]),
    "duration_ms": st.sampled_from([100, -5, None]),
    "payload": st.sampled_from([{}, {"a": 1}, None]),
    "extra": st.sampled_from([None, 1]),
}

BASE = {"v": 1, "ts": "2025-03-01T09:00:00Z", "run": "r1", "seq": 0, "loop": "crew",
        "kind": "verdict", "role": "qa", "stage": "verify", "verdict": "go", "attempt": 1}
# A valid event with up to three fields changed (None removes the field).


def changed(values: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """A valid event with up to three fields changed (None removes the field)."""
    return st.dictionaries(st.sampled_from(sorted(values)), st.none(), max_size=3).flatmap(
        lambda keys: st.fixed_dictionaries({k: values[k] for k in keys})
    ).map(lambda changes: {**BASE, **changes})


candidate = changed(field_values)
typed_candidate = changed(typed_values)


def model_accepts(obj: dict[str, Any]) -> bool:
    try:
        LedgerEvent.model_validate(obj)
    except ValidationError:
        return False
    return True


@settings(max_examples=300, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.lists(candidate, min_size=1, max_size=6),
                 st.lists(typed_candidate, min_size=1, max_size=6)))
def test_the_reader_accepts_exactly_what_the_model_accepts(objs: list[dict[str, Any]]) -> None:
    # null fields mean "absent" for the reader and the model alike, except payload
    objs = [{k: v for k, v in o.items() if v is not None or k == "payload"} for o in objs]
    data = "".join(json.dumps(o) + "\n" for o in objs).encode()
    parsed = parse_bytes(data, "p.jsonl")
    accepted = [i for i, o in enumerate(objs) if model_accepts(o)]
    rejected_lines = sorted({p.line for p in parsed.problems})
    assert rejected_lines == [i + 1 for i in range(len(objs)) if i not in accepted]
    assert parsed.table.num_rows == len(accepted)
    assert all(p.severity == "error" and p.code == "ledger_bad_event" for p in parsed.problems)


json_objects = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=6),
              st.floats(allow_nan=False, allow_infinity=False)),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=10,
).map(lambda v: {"value": v})


@settings(max_examples=200, deadline=None, database=None)
@given(json_objects, st.data())
def test_every_proper_prefix_of_an_object_is_a_cut_line(obj: dict[str, Any],
                                                         data: st.DataObject) -> None:
    text = json.dumps(obj, ensure_ascii=data.draw(st.booleans()))
    cut = data.draw(st.integers(1, len(text) - 1))
    assert is_object_prefix(text[:cut])
    assert cut_short(text.encode()[:cut])
    assert not cut_short(text.encode())


def test_corrupt_lines_are_not_cut_lines() -> None:
    for text in ("{not json", "garbage", '{"a":1}}', '{"a":1} {"b":2}', "[1,2", '{"a":1,,',
                 '{"a" 1', '{"a":1}x', '"text', '{"a":tx', ""):
        assert not cut_short(text.encode()), text


def test_small_refused_blocks_go_line_by_line_and_big_ones_are_split() -> None:
    lines = [line(event(i, payload={"x": i})) for i in range(SMALL_BLOCK * 8)]
    # x changes type: Arrow refuses the block when it infers the payload, which it does
    # when a line is not shown free of unknown keys by the fast read (a null verdict)
    lines[5] = line(event(5, verdict=None, payload={"x": "five"}))
    parsed = parse_bytes(("\n".join(lines) + "\n").encode(), "p.jsonl")
    assert parsed.problems == []
    assert parsed.table.column("seq").to_pylist() == list(range(SMALL_BLOCK * 8))
    assert parsed.payloads is not None
    assert parsed.payloads[5] == {"x": "five"}
    assert len(parsed.table.to_batches()) > 2  # read in several blocks


def test_empty_and_blank_input() -> None:
    for data in (b"", b"\n\n", b"  \n \t\n"):
        parsed = parse_bytes(data, "p.jsonl")
        assert parsed.table.num_rows == 0
        # an empty ledger is suspicious (the wrong file?): a warning, not an error
        assert [(p.code, p.severity) for p in parsed.problems] == [("ledger_empty", "warning")]


@pytest.mark.parametrize(("kind", "name"), [(k, f) for k, fs in REQUIRED_BY_KIND.items()
                                            for f in fs])
def test_the_fast_path_knows_what_each_kind_needs(kind: str, name: str) -> None:
    full = {"role": "qa", "stage": "verify", "verdict": "go", "summary": "why"}
    good = {**event(0), "kind": kind, **full}
    bad = {k: v for k, v in good.items() if k != name}
    lines = [line({**good, "seq": i}) for i in range(40)]
    lines[17] = line({**bad, "seq": 17})
    parsed = parse_bytes(("\n".join(lines) + "\n").encode(), "p.jsonl")
    assert len(parsed.table.to_batches()) == 1  # read by Arrow in one go: the fast path
    assert [(p.line, p.key, p.message) for p in parsed.problems] == [
        (18, name, f"a {kind!r} event needs {name}")]


def _tricky_lines() -> list[str]:
    """Valid events whose payload text cannot be cut out of the line naively."""
    head = line(event(0))[:-1]  # '{"v":1,...,"stage":"build"' without the brace
    return [
        head + ',"payload":{"a":1,"s":"}}"}}',  # braces in a string: sliced
        '{"payload":{"a":2},' + head[1:] + "}",  # payload first
        head + ',"payload":{"payload":{"b":3}}}',  # a nested key of the same name
        head + ', "payload" : {"a": 4} }',  # spaces
        head + ',"summary":"say \\"hi\\"","payload":{"q":"a\\"b"}}',  # escapes
        head + ',"p\\u0061yload":{"payload":{"x":5}}}',  # the key escaped, a nested one plain
        head + ',"summary":"payload","payload":{"a":6}}',  # the name as a value too
        head + ',"summary":"payload"}',  # ... and no payload
        head + ',"payload":null}',
        head + "}",
        head + ',"payload":{"a":7},"summary":"x"}',  # a field after the payload
        head + ',"payload":{"d":"2025-01-01","n":10,"t":"é"}}\r',  # CRLF, a date, non-ASCII
    ]


@pytest.mark.parametrize("copies", [1, 250])  # 250: enough unsliceable lines for DuckDB
def test_payload_texts_are_the_payloads_written(copies: int) -> None:
    tricky = _tricky_lines()
    lines = tricky * copies
    data = ("\ufeff" + "\n\n".join(lines) + "\n").encode()  # a BOM and blank lines too
    parsed = parse_bytes(data, "p.jsonl")
    assert parsed.problems == []
    expected = [{k: v for k, v in (json.loads(x).get("payload") or {}).items()
                 if v is not None} for x in lines]
    assert parsed.payloads == expected
    assert parsed.texts is not None
    texts = parsed.texts.to_pylist()
    assert texts[0] == '{"a":1,"s":"}}"}'  # exactly as written
    assert texts[-1] == '{"d":"2025-01-01","n":10,"t":"é"}'
    assert texts[9] == "{}"
    assert texts[8] == "{}"


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


@pytest.mark.parametrize("text", [
    '{"v":1,"extra":{"b":2},"ts":"2025-03-01T09:00:00Z","run":"r1","seq":3,"loop":"crew",'
    '"kind":"init","payload":{"a":1}}',
    '{"v":1,"ts":"2025-03-01T09:00:00Z","run":"r1","seq":3,"loop":"crew","kind":"init",'
    '"payload":{"a":{"c":[1,{"d":2}]}},"extra":{"b":2}}',  # after the payload: not its end
    '{"v":1,"ts":"2025-03-01T09:00:00Z","run":"r1","seq":3,"loop":"crew","kind":"init",'
    '"extra":"x\\"y","payload":{"a":1}}',  # an escape: the line is parsed
])
def test_the_fast_read_finds_unknown_keys_wherever_they_are(text: str) -> None:
    lines = [line(event(i, payload={"a": {"c": [i, {"d": i}]}})) for i in range(60)]
    lines[40] = text
    parsed = parse_bytes(("\n".join(lines) + "\n").encode(), "p.jsonl")
    assert [(p.line, p.key) for p in parsed.problems] == [(41, "extra")]
    assert parsed.table.num_rows == 59
    assert parsed.payloads is not None
    assert parsed.payloads[40] == {"a": {"c": [41, {"d": 41}]}}


@pytest.mark.parametrize("tail", ["", '{"v":1,"ts":"2025-0', "  \n"])
def test_a_file_read_in_blocks_gives_what_its_bytes_give(tmp_path: Path, tail: str) -> None:
    from crewbook.ledger.parse import parse_file

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


@pytest.mark.parametrize("bad", [b'"payload":{"a":"\xff"}}', b'"\xffx":1,"payload":{"a":1}}'])
def test_the_fast_read_leaves_no_invalid_utf8_through(bad: bytes) -> None:
    lines = [line(event(i, payload={"a": i})).encode() for i in range(30)]
    lines[7] = line(event(7)).encode()[:-1] + b"," + bad  # compact: the slicing path
    parsed = parse_bytes(b"\n".join(lines) + b"\n", "p.jsonl")
    assert [p.line for p in parsed.problems] == [8]
    assert parsed.table.num_rows == 29
    assert parsed.payloads is not None
    assert parsed.payloads[7] == {"a": 8}


def test_kept_blocks_are_narrow_and_widened_where_a_block_does_not_fit(
        tmp_path: Path) -> None:
    """Blocks keep their columns in narrow types (less memory than the frame they
    become); one whose values do not fit stays wide, and joining widens the rest, with
    every value exact."""
    from crewbook.ledger.parse import parse_file
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

    from crewbook.ledger.parse import _whole_lines

    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    pieces = list(_whole_lines(io.BufferedReader(io.BytesIO(data)), block))
    assert b"".join(pieces) == data
    assert all(piece for piece in pieces)
    assert all(piece.endswith(b"\n") for piece in pieces[:-1])
    assert all(piece.count(b"\n") >= 1 for piece in pieces[:-1])


def test_masks_use_the_scratch_buffer_when_it_is_long_enough() -> None:
    import numpy as np

    from crewbook.ledger.payloads import equal

    raw = np.frombuffer(b'a"b""\n"', dtype=np.uint8)
    scratch = np.ones(16, dtype=bool)
    mask = equal(raw, 34, scratch, extra=1)
    assert mask.tolist() == [False, True, False, True, True, False, True, False]
    assert np.shares_memory(mask, scratch)
    fresh = equal(raw, 34, np.ones(4, dtype=bool))
    assert fresh.tolist() == (raw == 34).tolist()
    assert equal(raw, 10).tolist() == (raw == 10).tolist()


def test_the_heap_is_trimmed_where_glibc_can() -> None:
    import platform

    from crewbook.ledger.parse import _malloc_trim, trim_heap

    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        assert _malloc_trim() is not None
    trim_heap()  # the real call, wherever the suite runs: it never raises


def test_reading_hands_freed_heap_back_every_few_mb_and_at_the_end(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every `TRIM_EVERY` bytes read, then once after the last block (before the frame is
    built); a small file, never (a widget refresh pays nothing)."""
    from crewbook.ledger import parse as parse_module

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
    from crewbook.ledger.parse import parse_file
    from crewbook.ledger.reader import read_ledger

    events = [event(i, role=f"role-{i:03d}", run=f"run-{i:03d}") for i in range(200)]
    path = tmp_path / "l.jsonl"
    path.write_text("".join(line(e) + "\n" for e in events))
    parsed = parse_file(path, "l.jsonl", block=len(path.read_bytes()) // 2 + 10)
    assert {chunk.type.index_type for chunk in parsed.table.column("role").chunks} == {
        pa.int8()}
    assert parsed.table.column("role").num_chunks == 2
    from crewbook.ledger import parse as parse_module

    monkeypatch.setattr(parse_module, "MIN_FILE_BLOCK", len(path.read_bytes()) // 2 + 10)
    frame = read_ledger(path)
    assert list(frame["role"].cat.categories) == [e["role"] for e in events]
    assert frame["role"].tolist() == [e["role"] for e in events]
    assert frame["run"].tolist() == [e["run"] for e in events]


@pytest.mark.parametrize(("cpus", "with_payload", "threads"), [
    (2, True, False),  # the decode and Arrow's read already keep both cores busy
    (2, False, True),  # nothing to decode: Arrow's threads share the block
    (1, True, False),
    (8, True, True),
])
def test_arrow_reads_in_one_thread_only_when_the_decode_needs_the_other_core(
        monkeypatch: pytest.MonkeyPatch, cpus: int, with_payload: bool, threads: bool) -> None:
    from crewbook.ledger import parse

    monkeypatch.setattr(pa, "cpu_count", lambda: cpus)
    options = parse._read_options(4 << 20, with_payload)
    assert options.use_threads is threads
    assert options.block_size == (4 << 20) // 4 + 1
    data = "".join(line(event(i)) + "\n" for i in range(50)).encode()
    assert len(parse_bytes(data, "l.jsonl", with_payload=with_payload).table) == 50
