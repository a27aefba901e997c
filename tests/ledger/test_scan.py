"""The fast path reads any valid ledger as the exact path does: any key order, spacing,
null fields, unknown keys, nesting, escapes and line endings, whether the payloads come
from one decode of the block (`ledger.known_keys`) or from its bytes (`ledger.scan`)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crewbook.ledger import parse
from crewbook.ledger.parse import Parsed, parse_bytes
from crewbook.ledger.scan import scan

# Texts that trip a naive cut: quotes, backslashes, brackets, colons, the key's name.
_TRICKY = st.lists(st.sampled_from([*'ab"\\{}[]:, \té\u2028', '"payload":{']),
                   max_size=6).map("".join)
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), _TRICKY,
                     st.floats(allow_nan=False, allow_infinity=False))
_PAYLOADS = st.recursive(
    _SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                      st.dictionaries(_TRICKY, inner, max_size=3)),
    max_leaves=8).map(lambda v: {"value": v})

#: (comma, colon, padding inside brackets) as writers space them.
_SPACING = [(",", ":", ""), (", ", ": ", ""), (" , ", " : ", " "), (",\t", ":\t", "\t")]
_OPTIONAL = {
    "role": st.sampled_from(["qa", "developer"]),
    "stage": st.sampled_from(["build", "verify"]),
    "verdict": st.sampled_from(["go", "no-go"]),
    "attempt": st.integers(1, 3),
    "version": st.integers(0, 2),
    "summary": _TRICKY,
    "tokens_in": st.integers(0, 10**6),
    "tokens_out": st.integers(0, 10**6),
    "cost": st.floats(0, 10),
    "duration_ms": st.integers(0, 10**7),
}


def dump(value: Any, spacing: tuple[str, str, str], ascii_only: bool,
         escaped_keys: frozenset[str] = frozenset()) -> str:
    """`value` as JSON with the given spacing; the top-level keys in `escaped_keys`
    written with \\u escapes (the same key to a JSON parser)."""
    comma, colon, pad = spacing
    if isinstance(value, dict):
        def key(k: str) -> str:
            if k in escaped_keys:
                return '"' + "".join(f"\\u{ord(c):04x}" for c in k) + '"'
            return json.dumps(k, ensure_ascii=ascii_only)
        items = [key(k) + colon + dump(v, spacing, ascii_only) for k, v in value.items()]
        return "{" + pad + comma.join(items) + pad + "}"
    if isinstance(value, list):
        return "[" + pad + comma.join(dump(v, spacing, ascii_only) for v in value) + pad + "]"
    return json.dumps(value, ensure_ascii=ascii_only)


@st.composite
def ledger_lines(draw: st.DrawFn) -> str:
    """One line of a ledger as any writer may write it (rarely an invalid one: an
    unknown key)."""
    obj: dict[str, Any] = {"v": 1, "ts": "2025-03-01T09:00:00Z", "run": "r1", "seq": 0,
                           "loop": "crew", "kind": "verdict", "role": "qa",
                           "stage": "verify", "verdict": "go"}
    for name, values in _OPTIONAL.items():
        how = draw(st.sampled_from(["absent", "null", "value"]))
        if how == "null" and name not in ("role", "stage", "verdict"):
            obj[name] = None
        elif how == "value":
            obj[name] = draw(values)
    how = draw(st.sampled_from(["absent", "null", "object", "object", "object"]))
    if how != "absent":
        obj["payload"] = None if how == "null" else draw(_PAYLOADS)
    if draw(st.integers(0, 9)) == 0:  # an unknown key: the model refuses the line
        obj[draw(st.sampled_from(["extra", "payloads", "Run"]))] = draw(
            st.sampled_from([None, 1, {"payload": {}}, "x"]))
    order = draw(st.permutations(list(obj)))
    obj = {k: obj[k] for k in order}
    escaped = frozenset(draw(st.sets(st.sampled_from(list(obj)), max_size=1))
                        if draw(st.integers(0, 7)) == 0 else ())
    text = dump(obj, draw(st.sampled_from(_SPACING)), draw(st.booleans()), escaped)
    return text + draw(st.sampled_from(["\n", "\n", "\r\n"]))


#: The ways the fast path finds the payloads, and how each is forced.
PAYLOAD_PATHS = ("decode", "keyed", "piece bytes", "block bytes")


def force_payload_path(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the fast path find the payloads one way: one decode of each piece when its
    keys are all fields (the usual way); each line as a dict (a piece with an unknown
    key); the bytes of a piece (when that decode refuses it); the bytes of the whole
    block (when the pieces do not add up to its lines)."""
    from crewbook.ledger import known_keys

    def undecoded(data: bytes, start: int, end: int) -> list[Any]:
        return [(a, b, None) for a, b in known_keys.pieces(data, start, end)]

    if path != "decode":
        monkeypatch.setattr(parse, "decoded_pieces", undecoded)
    if path in ("piece bytes", "block bytes"):
        monkeypatch.setattr(parse, "keyed_payloads", lambda *args: None)
    if path == "block bytes":
        monkeypatch.setattr(parse.BlockParser, "decoded_payloads", lambda *args: None)


@pytest.fixture(params=PAYLOAD_PATHS)
def payload_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each way of finding the payloads in turn (`force_payload_path`)."""
    force_payload_path(str(request.param), monkeypatch)
    return str(request.param)


def exactly(data: bytes, monkeypatch: pytest.MonkeyPatch) -> Parsed:
    """What the exact path (every line by `json` and the model) makes of `data`."""
    with monkeypatch.context() as patch:
        patch.setattr(parse, "arrow_read", lambda *args: None)
        return parse_bytes(data, "l.jsonl")


def same(fast: Parsed, exact: Parsed) -> None:
    assert sorted((p.line, p.key) for p in fast.problems) == sorted(
        (p.line, p.key) for p in exact.problems)
    assert fast.table.to_pylist() == exact.table.to_pylist()
    assert fast.payloads == exact.payloads


@settings(max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(lines=st.lists(ledger_lines(), min_size=1, max_size=12))
def test_the_fast_path_answers_as_the_exact_path_on_any_key_order(
        lines: list[str], monkeypatch: pytest.MonkeyPatch, payload_path: str) -> None:
    data = "".join(lines).encode()
    fast = parse_bytes(data, "l.jsonl")
    same(fast, exactly(data, monkeypatch))


@settings(max_examples=15, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(lines=st.lists(ledger_lines(), min_size=1, max_size=8))
def test_many_lines_in_one_arrow_block_answer_as_the_exact_path(
        lines: list[str], monkeypatch: pytest.MonkeyPatch, payload_path: str) -> None:
    # more lines than a refused block is read line by line: Arrow reads them together
    repeated = lines * (parse.SMALL_BLOCK // len(lines) + 1)
    data = "".join(repeated).encode()
    fast = parse_bytes(data, "l.jsonl")
    same(fast, exactly(data, monkeypatch))


def test_unknown_keys_are_refused_even_with_a_null_value(monkeypatch: pytest.MonkeyPatch,
                                                         payload_path: str) -> None:
    good = '{"v":1,"ts":"2025-03-01T09:00:00Z","run":"r1","seq":0,"loop":"crew","kind":"init"'
    lines = [good + ',"payload":{"extra":null}}'] * 300
    lines[7] = good + ',"extra":null}'
    lines[9] = good + ',"verdict":null,"payload":{"a":1}}'  # a known key: fine
    data = "\n".join(lines).encode() + b"\n"
    parsed = parse_bytes(data, "l.jsonl")
    assert [(p.line, p.key) for p in parsed.problems] == [(8, "extra")]
    assert "unknown key 'extra'" in parsed.problems[0].message
    same(parsed, exactly(data, monkeypatch))


def test_the_scan_finds_top_level_keys_and_the_payload_in_any_order() -> None:
    lines = [b'{"payload" : {"a":{"b":[1,"}"]}} , "run":"x\\"y","kind":"act"}',
             b'{"run":"payload","payload":null,"x":{"payload":{}}}',
             b'{"p\\u0061yload":{},"kind":"a"}',
             b'{"kind":"act","payload":[1]}\r']
    data = b"\n".join(lines) + b"\n"
    raw = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(raw == 10)
    starts = np.concatenate(([0], ends[:-1] + 1))
    found = scan(raw, starts, ends)
    keys = [(int(line), data[a:b].decode()) for line, a, b in
            zip(found.key_line, found.key_first, found.key_stop, strict=True)]
    assert keys == [(0, "payload"), (0, "run"), (0, "kind"),
                    (1, "run"), (1, "payload"), (1, "x"),
                    (2, "p\\u0061yload"), (2, "kind"),
                    (3, "kind"), (3, "payload")]
    assert found.key_null.tolist() == [False, False, False, False, True, False,
                                       False, False, False, False]
    payloads = [data[a:b].decode() for a, b in
                zip(found.payload_first, found.payload_stop, strict=True)]
    assert payloads[:2] == ['{"a":{"b":[1,"}"]}}', ""]  # an object; a null (none)
    assert found.has_payload.tolist() == [True, True, False, True]
    # an escaped key and a payload that is not an object: parsed, not cut
    assert found.doubtful.tolist() == [False, False, True, True]


def test_names_are_compared_exactly_eight_bytes_at_a_time() -> None:
    from crewbook.ledger.events import FIELDS
    from crewbook.ledger.scan import named

    assert len({name[:8] for name in FIELDS}) == len(FIELDS)  # what `named` needs
    keys = ["v", "ts", "tokens_in", "tokens_out", "duration_ms", "payload", "tokens_i",
            "tokens_inn", "payloa", "payload2", "Payload", "duration_ns", "", "vv", "cost"]
    data = ("".join(f'"{k}"' for k in keys)).encode()
    raw = np.frombuffer(data, dtype=np.uint8)
    quotes = np.flatnonzero(raw == 34)
    found = named(raw, quotes[0::2] + 1, quotes[1::2], tuple(n.encode() for n in FIELDS))
    assert found.tolist() == [k in FIELDS for k in keys]


@pytest.mark.parametrize("names", [("payload",), ("payload", "ts"), ("v", "")])
def test_a_few_names_are_compared_whole_by_length(names: tuple[str, ...]) -> None:
    from crewbook.ledger.scan import named

    # the last key ends the bytes (a name's length from the end); lookalikes on every side
    keys = ["payloa", "payload2", "Payload", "payload", "ts", "t", "tss", "", "v", "w",
            "payloae", "xpayload", "payload"]
    data = ("".join(f'"{k}"' for k in keys)).encode()[:-1]
    raw = np.frombuffer(data, dtype=np.uint8)
    quotes = np.append(np.flatnonzero(raw == 34), len(raw))
    found = named(raw, quotes[0::2] + 1, quotes[1::2], tuple(n.encode() for n in names))
    assert found.tolist() == [k in names for k in keys]


def test_a_block_is_scanned_in_chunks_of_whole_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    from crewbook.ledger import scan as module

    lines = [b'{"run":"r","payload":{"n":%d,"s":"a\\"b"},"x":null}' % i for i in range(50)]
    data = b"\r\n".join(lines) + b"\n"
    raw = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(raw == 10)
    ends = np.concatenate((ends[:-1] - 1, ends[-1:]))  # before the \r, as any white space
    starts = np.concatenate(([0], np.flatnonzero(raw == 10)[:-1] + 1))
    whole = scan(raw, starts, ends)
    monkeypatch.setattr(module, "CHUNK", 100)  # a chunk of one or two lines
    chunked = scan(raw, starts, ends)
    for name in ("key_first", "key_stop", "key_line", "key_null", "payload_first",
                 "payload_stop", "has_payload", "doubtful"):
        assert getattr(chunked, name).tolist() == getattr(whole, name).tolist(), name
    assert whole.key_line.tolist() == [i // 3 for i in range(150)]


def test_a_block_a_little_over_a_chunk_is_scanned_in_one_go(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from crewbook.ledger import scan as module

    lines = [b'{"run":"r","payload":{"n":%02d}}' % i for i in range(40)]  # one length
    data = b"\n".join(lines) + b"\n"
    raw = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(raw == 10)
    starts = np.concatenate(([0], ends[:-1] + 1))
    calls: list[int] = []
    real = module._scan

    def counted(raw: Any, starts: Any, ends: Any) -> Any:
        calls.append(len(starts))
        return real(raw, starts, ends)

    monkeypatch.setattr(module, "_scan", counted)
    monkeypatch.setattr(module, "CHUNK", len(data) - 40)  # the block: a line over a chunk
    whole = scan(raw, starts, ends)
    assert calls == [40]
    monkeypatch.setattr(module, "CHUNK", len(data) // 4)  # four pieces of ten lines
    calls.clear()
    assert scan(raw, starts, ends).key_line.tolist() == whole.key_line.tolist()
    assert calls == [10, 10, 10, 10]


def test_only_keys_that_may_be_unknown_are_compared_with_the_field_names(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from crewbook.ledger import scan as module

    head = '{"v":1,"ts":"2025-03-01T09:00:00Z","run":"r1","seq":0,"loop":"crew"'
    lines = [head + ',"kind":"init","payload":{"x":null}}',  # every key has a value
             head + ',"kind":"init","verdict":null}',  # a known key, null
             head + ',"kind":"init","extra":null}',  # an unknown key, null
             head + ',"kind":"init","extra":2}',  # an unknown key with a value
             head + ',"kind":"init","verdict":null,"other":[]}',  # a null, an unknown
             '{"kind":"init",' + head[1:] + ',"payload":null}']  # payload null, reordered
    data = ("\n".join(lines) + "\n").encode()
    compared: list[int] = []
    real = module.named

    def counting(raw: Any, first: Any, stop: Any, names: tuple[bytes, ...]) -> Any:
        if len(names) > 1:
            compared.append(len(first))
        return real(raw, first, stop, names)

    monkeypatch.setattr(module, "named", counting)
    force_payload_path("block bytes", monkeypatch)  # the scan of the whole block
    parsed = parse_bytes(data, "l.jsonl")
    assert [(p.line, p.key) for p in parsed.problems] == [(3, "extra"), (4, "extra"),
                                                          (5, "other")]
    # the null-valued keys of lines 2, 3 and 6, every key of lines 4 and 5 (one key
    # with a value more than their fields with a value), not the block's 45 keys
    assert compared == [1 + 1 + 7 + 8 + 1]
    same(parsed, exactly(data, monkeypatch))


def test_every_field_is_read_by_the_fast_path_and_is_a_column() -> None:
    # what adding a field to events.FIELDS needs besides the model (docs/ledger.md):
    # an Arrow type in columns.ARROW_SCHEMA, a place in reader.COLUMNS; the scan and the
    # decode, nothing
    from crewbook.ledger.columns import ARROW_SCHEMA, FAST_SCHEMA
    from crewbook.ledger.events import FIELDS
    from crewbook.ledger.known_keys import _decoder
    from crewbook.ledger.reader import COLUMNS

    assert [*ARROW_SCHEMA.names, "payload"] == list(FIELDS), "a field without an Arrow type"
    assert FAST_SCHEMA.names == list(FIELDS)
    assert _decoder().type.__struct_fields__ == FIELDS  # the decode: made from FIELDS
    assert set(COLUMNS) == set(FIELDS) - {"v"}, "a field that is not a column of the frame"
