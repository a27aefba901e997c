"""Parsing internals: the fast path and the line-by-line path agree with the model."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from crewbook.ledger.events import REQUIRED_BY_KIND, LedgerEvent
from crewbook.ledger.lines import cut_short, is_object_prefix, parse_line
from crewbook.ledger.parse import SMALL_BLOCK, parse_bytes

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


#: JSON values a writer or a hand may put in any field (written as they are).
ODD_VALUES = ("null", "1", "0", "-1", "1.0", "1e3", "-0", "0.5", "true", '"1"', '""', '"x"',
              "[]", "{}", "[1]", '{"a":1}', "9223372036854775807", "9223372036854775808",
              "1e400", "123456789012345678901234567890", '"\\u0000"', '"\\ud800"')
FULL = {"v": 1, "ts": "2025-03-03T09:02:00Z", "run": "r", "seq": 0, "loop": "crew",
        "kind": "report", "role": "qa", "stage": "s", "verdict": "go", "attempt": 1,
        "version": 1, "summary": "x", "tokens_in": 1, "tokens_out": 2, "cost": 0.5,
        "duration_ms": 3, "payload": {}}


def answer(problems: list[Any]) -> set[str]:
    return {p.key or "" for p in problems}


@pytest.mark.parametrize("field", sorted(FULL))
def test_a_block_of_one_odd_value_reads_as_the_model_reads_its_line(field: str) -> None:
    # every line alike, more of them than a block read line by line: the fast path's
    # answer (Arrow's columns, the checks, the decode), whatever the value, null too
    for value in ODD_VALUES:
        rest = {k: v for k, v in FULL.items() if k not in (field, "seq")}
        lines = [json.dumps(rest)[:-1] + f', "seq": {n}, "{field}": {value}}}'
                 for n in range(SMALL_BLOCK + 44)]
        if field == "seq":
            lines = [json.dumps(rest)[:-1] + f', "seq": {value}}}'] * (SMALL_BLOCK + 44)
        problems: list[Any] = []
        taken = parse_line(lines[0].encode(), "l.jsonl", 1, problems) is not None
        parsed = parse_bytes("".join(t + "\n" for t in lines).encode(), "l.jsonl")
        assert parsed.table.num_rows == (len(lines) if taken else 0), (field, value)
        assert answer(parsed.problems) == answer(problems), (field, value)


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


@pytest.mark.parametrize("bad", [b'"payload":{"a":"\xff"}}', b'"\xffx":1,"payload":{"a":1}}'])
def test_the_fast_read_leaves_no_invalid_utf8_through(bad: bytes) -> None:
    lines = [line(event(i, payload={"a": i})).encode() for i in range(30)]
    lines[7] = line(event(7)).encode()[:-1] + b"," + bad  # compact: the slicing path
    parsed = parse_bytes(b"\n".join(lines) + b"\n", "p.jsonl")
    assert [p.line for p in parsed.problems] == [8]
    assert parsed.table.num_rows == 29
    assert parsed.payloads is not None
    assert parsed.payloads[7] == {"a": 8}


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




@settings(max_examples=80, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 599), candidate), max_size=8), st.booleans())
def test_a_few_bad_lines_in_a_block_read_as_the_model_reads_each_line(
        bad: list[tuple[int, dict[str, Any]]], crlf: bool) -> None:
    """Bad lines anywhere in a block of 600 (more than a block read line by line): the
    rows, their payloads and the lines refused are the model's, line by line."""
    from crewbook.ledger.lines import parse_line
    from crewbook.ledger.payloads import parse_payload

    objs: list[dict[str, Any]] = [event(i, payload={"n": i}) for i in range(600)]
    for at, obj in bad:
        objs[at] = {k: v for k, v in obj.items() if v is not None or k == "payload"}
    ending = "\r\n" if crlf else "\n"
    data = "".join(json.dumps(o) + ending for o in objs).encode()
    parsed = parse_bytes(data, "p.jsonl")
    problems: list[Any] = []
    rows = [e for i, o in enumerate(objs)
            if (e := parse_line(json.dumps(o).encode(), "p.jsonl", i + 1, problems))]
    assert sorted({p.line for p in parsed.problems}) == sorted({p.line for p in problems})
    assert parsed.table.column("seq").to_pylist() == [e.seq for e in rows]
    assert parsed.table.column("kind").to_pylist() == [e.kind for e in rows]
    # (null-valued keys are left out when a payload is read)
    assert parsed.payloads == [parse_payload(json.dumps(e.payload)) for e in rows]


def test_bad_lines_are_set_aside_not_split_down_to_single_lines(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Three bad lines in 2,000: no line of the block is read by the model but those
    three, and Arrow reads the block a few times, not once per split."""
    from crewbook.ledger import parse

    by_line: list[int] = []
    reads: list[int] = []
    real_by_line, real_read = parse.BlockParser.line_by_line, parse.arrow_read
    monkeypatch.setattr(parse.BlockParser, "line_by_line",
                        lambda self, lo, hi: by_line.append(hi - lo) or real_by_line(self, lo, hi))
    monkeypatch.setattr(parse, "arrow_read", lambda *a: reads.append(1) or real_read(*a))
    lines = [line(event(i, payload={"n": i})) for i in range(2_000)]
    lines[10] = "{oops"
    lines[999] = line({**event(999), "seq": "x"})
    lines[1_500] = line({**event(1_500), "payload": "text"})
    parsed = parse_bytes(("\n".join(lines) + "\n").encode(), "p.jsonl")
    assert [p.line for p in parsed.problems] == [11, 1_000, 1_501]
    assert parsed.table.num_rows == 1_997
    assert parsed.table.column("seq").to_pylist()[9:11] == [9, 11]
    assert by_line == []
    assert len(reads) <= 3  # the fast read, the exact one, the block without the three


def test_a_line_set_aside_that_is_valid_after_all_keeps_its_place(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Were the decode to set aside a valid line, its row would come out of order: the
    block is then split as before, and every row stays in its place."""
    from crewbook.ledger import known_keys, parse

    lines = [line(event(i)) for i in range(400)]
    lines[200] = "{oops"
    data = ("\n".join(lines) + "\n").encode()
    real = known_keys.refused_lines

    def also_a_valid_one(data: bytes, start: int, end: int, limit: int,
                         ) -> list[tuple[int, int]]:
        first = data.index(lines[100].encode())
        return sorted([*(real(data, start, end, limit) or []),
                       (first, first + len(lines[100]))])

    monkeypatch.setattr(parse, "refused_lines", also_a_valid_one)
    parsed = parse_bytes(data, "p.jsonl")
    assert [p.line for p in parsed.problems] == [201]
    assert parsed.table.column("seq").to_pylist() == [i for i in range(400) if i != 200]
