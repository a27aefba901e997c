"""The payloads of a block whose keys are all fields, by one decode (`ledger.known_keys`)."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from crewbook.ledger import known_keys, parse
from crewbook.ledger.known_keys import known_key_payloads
from crewbook.ledger.parse import parse_bytes

HEAD = '"v":1,"ts":"2025-03-01T09:00:00Z","run":"r1","loop":"crew","kind":"init"'


def block(*lines: str, end: str = "\n") -> bytes:
    return "".join(line + end for line in lines).encode()


def texts(data: bytes, count: int, **options: Any) -> list[str] | None:
    found = known_key_payloads(data, 0, len(data), count, **options)
    return None if found is None else found.texts.to_pylist()


def test_payloads_are_kept_as_written_in_any_key_order_and_spacing() -> None:
    data = block('{"payload": {"b":1,  "a":[1, "}"]}, ' + HEAD + ',"seq":0}',
                 '{' + HEAD + ',"seq":1,"payload":null}',
                 '{"seq" : 2 , ' + HEAD + ' }',
                 '{"p\\u0061yload":{"x":"\\"q\\""},' + HEAD + ',"seq":3,"verdict":null}',
                 end="\r\n")
    assert texts(data, 4) == ['{"b":1,  "a":[1, "}"]}', "{}", "{}", '{"x":"\\"q\\""}']


@pytest.mark.parametrize("line", [
    '{' + HEAD + ',"seq":0,"extra":1}',  # an unknown key
    '{' + HEAD + ',"seq":0,"extra":null}',  # ... with a null value: the model refuses it
    '{' + HEAD + ',"seq":0,"Payload":{}}',  # a field's name in another case
    '{' + HEAD + ',"seq":0,"summary":[1]}',  # a value no field holds
    '{' + HEAD + ',"seq":0}{' + HEAD + ',"seq":1}',  # two objects on one line
])
def test_the_decode_gives_way_when_it_cannot_vouch_for_every_line(line: str) -> None:
    good = '{' + HEAD + ',"seq":5,"payload":{"a":1}}'
    data = block(good, line, good)
    assert texts(data, 3) is None


def test_a_count_that_differs_gives_way() -> None:
    data = block('{' + HEAD + ',"seq":0}', "", '{' + HEAD + ',"seq":1}')
    assert texts(data, 2) == ["{}", "{}"]  # a blank line is no line
    assert texts(data, 3) is None


def test_payload_bytes_that_are_not_utf8_are_not_readable_when_asked() -> None:
    data = b'{' + HEAD.encode() + b',"seq":0,"payload":{"s":"\xff"}}\n'
    found = known_key_payloads(data, 0, len(data), 1, check_utf8=True)
    assert found is not None
    assert not found.readable
    found = known_key_payloads(data, 0, len(data), 1)
    assert found is not None
    assert found.readable


def test_a_block_is_decoded_in_pieces_of_whole_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = ['{' + HEAD + f',"seq":{i},"payload":{{"n":{i},"s":"{"x" * (i % 7) * 9}"}}}}'
             for i in range(60)]
    data = block(*lines)
    whole = texts(data, 60)
    monkeypatch.setattr(known_keys, "PIECE", 150)  # a piece: a line or two, some longer
    pieces = list(known_keys._pieces(data, 0, len(data)))
    assert len(pieces) > 20
    assert pieces[0][0] == 0
    assert pieces[-1][1] == len(data)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(pieces))
    assert all(data[stop - 1:stop] == b"\n" for _, stop in pieces)
    assert texts(data, 60) == whole
    assert [json.loads(t)["n"] for t in whole or []] == list(range(60))


def test_a_valid_file_is_read_without_the_byte_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the byte scan ran on a block of known keys")

    monkeypatch.setattr(parse, "line_payloads", refuse)
    data = block(*['{' + HEAD + f',"seq":{i},"payload":{{"i":{i}}}}}' for i in range(500)])
    parsed = parse_bytes(data, "l.jsonl")
    assert parsed.payloads == [{"i": i} for i in range(500)]
    assert parsed.problems == []


def test_an_unknown_key_is_still_named_by_its_line(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = ['{' + HEAD + f',"seq":{i},"payload":{{"i":{i}}}}}' for i in range(500)]
    lines[321] = lines[321][:-1] + ',"extra":null}'
    parsed = parse_bytes(block(*lines), "l.jsonl")
    assert [(p.line, p.key) for p in parsed.problems] == [(322, "extra")]
    assert len(parsed.table) == 499
