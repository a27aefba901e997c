"""The ``ts`` column read as the model reads it (`ledger.timestamps`): same times, same
refusals, same words, on any text, and the usual forms without the model."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from crewbook.ledger import parse, timestamps
from crewbook.ledger.lines import parse_line
from crewbook.ledger.parse import parse_bytes
from crewbook.ledger.timestamps import read_times

HEAD = '"v":1,"run":"r1","loop":"crew","kind":"init"'


def line(ts: Any, seq: int = 0) -> str:
    return '{' + HEAD + f',"seq":{seq},"ts":{json.dumps(ts)}}}'


def by_the_model(ts: str) -> int | str:
    """The model's answer for a ``ts`` text: UTC nanoseconds, or what it says."""
    problems: list[Any] = []
    event = parse_line(line(ts).encode(), "l.jsonl", 1, problems)
    if event is None:
        assert [p.key for p in problems] == ["ts"]
        return str(problems[0].message)
    assert event.ts is not None
    return int(pd.Timestamp(event.ts).value)


def by_the_column(ts: str) -> int | str:
    times, refused = read_times(pa.array([ts]))
    if refused:
        assert times.null_count == 1
        assert [row for row, _ in refused] == [0]
        return refused[0][1]
    return int(times[0].value)


# texts of every part a writer, a person or a typo may put in a time
digits = st.text("0123456789", min_size=1, max_size=4)
DATES = st.one_of(
    st.sampled_from(["2025-03-03", "2024-02-29", "2025-02-29", "2025-13-01", "1677-12-31",
                     "1678-01-01", "2261-12-31", "2262-01-01", "0001-01-01", "9999-12-31",
                     "1969-12-31", "20250303", "2025-3-3", "2025-W10-1"]),
    st.builds(lambda y, m, d: f"{y}-{m}-{d}", digits, digits, digits))
TIMES = st.one_of(
    st.sampled_from(["", "09", "09:02", "09:02:00", "0902", "24:00:00", "23:59:60",
                     "23:59:59", "00:00:00", "9:02:00"]),
    st.builds(lambda h, m, s: f"{h}:{m}:{s}", digits, digits, digits))
FRACTIONS = st.one_of(st.just(""), st.builds(lambda sep, d: sep + d, st.sampled_from(".,"),
                                             st.text("0123456789", max_size=12)))
ZONES = st.one_of(
    st.sampled_from(["", "Z", "z", "+02", "+0200", "+02:00", "-00:00", "+00:00", "+24:00",
                     "+23:59", "-23:59", "+14:00", "+00:60", "+2:00", " Z", "UTC", "+02:00:00"]),
    st.builds(lambda s, h, m: f"{s}{h}:{m}", st.sampled_from("+-"), digits, digits))
TEXTS = st.one_of(
    st.builds(lambda d, sep, t, f, z: f"{d}{sep}{t}{f}{z}", DATES,
              st.sampled_from(["T", "t", " ", "", "_"]), TIMES, FRACTIONS, ZONES),
    st.text(max_size=30))


@settings(max_examples=400, deadline=None)
@given(TEXTS)
@example("2025-03-03t09:02:00z")  # lowercase: Arrow refuses it, the model takes it
@example("2025-03-03T09:02:00,5Z")  # a decimal comma
@example("2025-03-03T09:02:00.1234567890Z")  # ten decimals
@example("2025-03-03T09:02:00.9999999Z")  # past the sixth: dropped, not rounded
@example("1969-12-31T23:59:59.9999999Z")  # ... also before 1970
@example("2025-03-03T09:02:00+02")  # an offset of hours only: Arrow takes it, not the model
@example("2025-03-03T09")  # an hour without minutes: the same
@example("1677-12-31T23:59:59Z")  # a time Arrow holds, before the model's years
@example("1678-01-01T00:30:00+01:00")  # ... once in UTC
@example("2262-01-01T00:00:00+02:00")  # in the years once in UTC
@example("0001-01-01T00:00:00+02:00")  # before year 1 in UTC (was an OverflowError)
@example("2025-03-03")  # a date: midnight UTC
@example("2025-03-03T09Z")  # hours only, ending with Z: Arrow takes it, not the model
@example("2025-03-03 09Z")
@example("2025-03-03T0902Z")
@example("2025-03-03T09:02Z")
@example("2025-03-03T09:02:00.123456789Z")
def test_a_text_reads_as_the_model_reads_it(text: str) -> None:
    assert by_the_column(text) == by_the_model(text)


@settings(max_examples=60, deadline=None)
@given(st.lists(TEXTS, min_size=1, max_size=40))
def test_a_block_reads_as_its_lines_read_one_by_one(texts: list[str]) -> None:
    data = "".join(line(ts, seq) + "\n" for seq, ts in enumerate(texts)).encode()
    parsed = parse_bytes(data, "l.jsonl")
    answers = [by_the_model(ts) for ts in texts]
    taken = [answer for answer in answers if isinstance(answer, int)]
    assert parsed.table.column("ts").cast(pa.int64()).to_pylist() == taken
    assert [(p.line, p.key, p.message) for p in parsed.problems] == [
        (number, "ts", answer) for number, answer in enumerate(answers, 1)
        if isinstance(answer, str)]


def test_the_writers_forms_are_read_without_the_model(monkeypatch: pytest.MonkeyPatch
                                                     ) -> None:
    def refuse(texts: list[str]) -> Any:
        raise AssertionError(f"the model read {texts[:3]}")

    monkeypatch.setattr(timestamps, "_model_times", refuse)
    texts = ["2025-03-03T09:02:00Z", "2025-03-03T09:02:00.123456Z", "2025-03-03T11:02:00+02:00",
             "2025-03-03T04:02:00-0500", "2025-03-03 09:02:00+00:00", None, "2025-03-03T09:02",
             "2025-03-03", "2025-03-03T09:02:00.123"]
    times, refused = read_times(pa.array(texts))
    assert refused == []
    assert times.null_count == 1
    assert [t if t is None else t.isoformat() for t in times.to_pylist()] == [
        "2025-03-03T09:02:00+00:00", "2025-03-03T09:02:00.123456+00:00",
        "2025-03-03T09:02:00+00:00", "2025-03-03T09:02:00+00:00",
        "2025-03-03T09:02:00+00:00", None, "2025-03-03T09:02:00+00:00",
        "2025-03-03T00:00:00+00:00", "2025-03-03T09:02:00.123000+00:00"]


def test_a_block_of_lowercase_times_is_not_read_line_by_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: Any, lo: int, hi: int) -> None:
        raise AssertionError(f"lines {lo}-{hi} read one by one")

    monkeypatch.setattr(parse.BlockParser, "line_by_line", refuse)
    texts = [f"2025-03-03t09:{m:02d}:00z" for m in range(60)]
    parsed = parse_bytes("".join(line(ts, seq) + "\n" for seq, ts in enumerate(texts)).encode(),
                         "l.jsonl")
    assert parsed.problems == []
    assert parsed.table.column("ts").to_pylist() == [
        pd.Timestamp(f"2025-03-03T09:{m:02d}:00Z") for m in range(60)]


def test_a_refused_time_is_named_once_by_the_models_words() -> None:
    data = (line("2025-03-03T09:02:00Z") + "\n" + line("2025-03-03T09+02", 1) + "\n"
            + line("1677-12-31T23:59:59Z", 2) + "\n").encode()
    parsed = parse_bytes(data, "l.jsonl")
    assert len(parsed.table) == 1
    assert [(p.line, p.key) for p in parsed.problems] == [(2, "ts"), (3, "ts")]
    assert "is out of range (years 1678 to 2261)" in parsed.problems[1].message
    assert "missing" not in parsed.problems[0].message


def test_a_block_with_offsets_is_cast_once_also_when_the_model_settles_some(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # every text has its offset, one past the sixth decimal: Arrow's one cast is kept for
    # the others, and only that one goes to the model
    casts: list[int] = []
    cast = timestamps._cast

    def counted(texts: pa.Array, *, zoned: bool) -> pa.Array | None:
        casts.append(len(texts))
        return cast(texts, zoned=zoned)

    monkeypatch.setattr(timestamps, "_cast", counted)
    texts = ["2025-03-03T09:02:00Z", "2025-03-03T09:02:00.9999999Z", None,
             "2025-03-03T11:02:00+02:00"]
    times, refused = read_times(pa.array(texts))
    assert refused == []
    assert casts == [4]
    assert [by_the_column(t) for t in texts if t] == [by_the_model(t) for t in texts if t]
    assert times.cast(pa.int64()).to_pylist()[:3] == [
        by_the_model(texts[0]), by_the_model(texts[1]), None]
