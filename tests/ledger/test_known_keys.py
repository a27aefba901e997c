"""The payloads of a block whose keys are all fields, by one decode (`ledger.known_keys`)."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from crewbook.ledger import known_keys, parse
from crewbook.ledger.known_keys import as_payloads, decoded_pieces, keyed_payloads, text_array
from crewbook.ledger.parse import parse_bytes

HEAD = '"v":1,"ts":"2025-03-01T09:00:00Z","run":"r1","loop":"crew","kind":"init"'


def block(*lines: str, end: str = "\n") -> bytes:
    return "".join(line + end for line in lines).encode()


def texts(data: bytes, **options: Any) -> list[str] | None:
    """The payload column's texts of `data` by the decode, or None where it gives way."""
    pieces = decoded_pieces(data, 0, len(data))
    if any(found is None for _, _, found in pieces):
        return None
    every = [text for _, _, found in pieces for text in found or []]
    answer = as_payloads(text_array(every), **options)
    return answer.texts.to_pylist() if answer.readable else None


def test_payloads_are_kept_as_written_in_any_key_order_and_spacing() -> None:
    data = block('{"payload": {"b":1,  "a":[1, "}"]}, ' + HEAD + ',"seq":0}',
                 '{' + HEAD + ',"seq":1,"payload":null}',
                 '{"seq" : 2 , ' + HEAD + ' }',
                 '{"p\\u0061yload":{"x":"\\"q\\""},' + HEAD + ',"seq":3,"verdict":null}',
                 end="\r\n")
    assert texts(data) == ['{"b":1,  "a":[1, "}"]}', "{}", "{}", '{"x":"\\"q\\""}']


@pytest.mark.parametrize("line", [
    '{' + HEAD + ',"seq":0,"extra":1}',  # an unknown key
    '{' + HEAD + ',"seq":0,"extra":null}',  # ... with a null value: the model refuses it
    '{' + HEAD + ',"seq":0,"Payload":{}}',  # a field's name in another case
    '{' + HEAD + ',"seq":0,"summary":[1]}',  # a value no field holds
])
def test_the_decode_gives_way_when_it_cannot_vouch_for_every_line(line: str) -> None:
    good = '{' + HEAD + ',"seq":5,"payload":{"a":1}}'
    assert texts(block(good, line, good)) is None


def test_each_line_as_a_dict_names_the_keys_that_are_not_fields() -> None:
    data = block('{' + HEAD + ',"seq":0,"extra":null,"payload":{"a":1}}',
                 '{"p\\u0061yload":{"b":2},' + HEAD + ',"seq":1}',
                 '{' + HEAD + ',"seq":2,"payload":[1],"Run":"x","more":{"payload":{}}}',
                 '{' + HEAD + ',"seq":3,"payload":null}')
    assert keyed_payloads(data, 0, len(data)) == (
        [b'{"a":1}', b'{"b":2}', b"{}", b"{}"], [(0, "extra"), (2, "Run"), (2, "more")])
    assert keyed_payloads(b'{"\xff":1}\n', 0, 8) is None  # a key that is not UTF-8


def test_two_objects_on_a_line_are_two_decoded_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    # the caller counts the lines: more objects than lines, and it reads another way
    line = '{' + HEAD + ',"seq":0}'
    data = block(line + line, line)
    assert [len(found or []) for _, _, found in decoded_pieces(data, 0, len(data))] == [3]
    parsed = parse_bytes(data, "l.jsonl")
    assert [p.line for p in parsed.problems] == [1]
    assert len(parsed.table) == 1


def test_payload_bytes_that_are_not_utf8_are_not_readable_when_asked() -> None:
    data = b'{' + HEAD.encode() + b',"seq":0,"payload":{"s":"\xff"}}\n'
    every = [t for _, _, found in decoded_pieces(data, 0, len(data)) for t in found or []]
    assert not as_payloads(text_array(every), check_utf8=True).readable
    assert as_payloads(text_array(every)).readable  # not checked: Arrow read those bytes
    parsed = parse_bytes(data, "l.jsonl")  # read again the exact way, and refused
    assert [p.line for p in parsed.problems] == [1]


def test_a_block_is_decoded_in_pieces_of_whole_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = ['{' + HEAD + f',"seq":{i},"payload":{{"n":{i},"s":"{"x" * (i % 7) * 9}"}}}}'
             for i in range(60)]
    data = block(*lines)
    whole = texts(data)
    monkeypatch.setattr(known_keys, "PIECE", 150)  # a piece: a line or two, some longer
    pieces = list(known_keys.pieces(data, 0, len(data)))
    assert len(pieces) > 20
    assert pieces[0][0] == 0
    assert pieces[-1][1] == len(data)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(pieces))
    assert all(data[stop - 1:stop] == b"\n" for _, stop in pieces)
    assert texts(data) == whole
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


def test_nesting_deeper_than_the_decode_goes_is_read_from_the_bytes() -> None:
    deep = "[" * 3000 + "]" * 3000
    data = block(*['{' + HEAD + f',"seq":{i},"payload":{{"x":{deep}}}}}' for i in range(3)])
    assert texts(data) is None
    assert keyed_payloads(data, 0, len(data)) is None
    parsed = parse_bytes(data, "l.jsonl")
    assert parsed.problems == []
    assert parsed.texts is not None
    assert parsed.texts.to_pylist() == [f'{{"x":{deep}}}'] * 3
