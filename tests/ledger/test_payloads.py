"""Payload texts parsed into dicts: one at a time or many at once, the same dicts; the
garbage collector paused only while many are parsed, and as it was after."""

from __future__ import annotations

import gc
import json
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from crewbook.core.gc_pause import paused_gc
from crewbook.ledger import payloads
from crewbook.ledger.payloads import PayloadArray, parse_payload, payload_dicts

from .conftest import without_nulls

#: JSON values with nulls at any depth, and texts that hold the word "null".
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.sampled_from(
        ["null", "a null here", "", "é"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["a", "null", "b c", "ü"]), inner, max_size=3),
    max_leaves=12)


@given(st.dictionaries(st.sampled_from(["x", "null", "y"]), values, max_size=4), st.booleans())
def test_a_payload_reads_without_its_nulls_however_it_is_written(
        payload: dict[str, Any], spaced: bool) -> None:
    text = json.dumps(payload, ensure_ascii=spaced, separators=None if spaced else (",", ":"))
    assert parse_payload(text) == without_nulls(payload)
    assert payload_dicts([text, None, "[1]"]) == [without_nulls(payload), None, {}]


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_paused_while_parsing_and_left_as_it_was(enabled: bool) -> None:
    seen: list[bool] = []
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        with paused_gc():
            seen.append(gc.isenabled())
        assert (seen, gc.isenabled()) == ([False], enabled)
        with pytest.raises(json.JSONDecodeError), paused_gc():
            json.loads("{oops")  # a failure inside: restored all the same
        assert gc.isenabled() is enabled
        with pytest.raises(json.JSONDecodeError):
            payload_dicts(['{"a":1}', "{oops"])
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def test_every_way_of_reading_a_payload_column_gives_the_same_dicts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Row by row, iterated (a few rows at a time, the collector on between them), as a
    list, as an array: the same dicts, None where a payload is missing."""
    monkeypatch.setattr(payloads, "_ITER_ROWS", 3)
    texts = [json.dumps({"n": i, "k": None if i % 2 else [i, None]}) for i in range(10)]
    texts[4] = None
    array = PayloadArray(pa.chunked_array([pa.array(texts[:7]), pa.array(texts[7:])]))
    expected = [None if t is None else parse_payload(t) for t in texts]
    between: list[bool] = []
    iterated = []
    for value in array:
        between.append(gc.isenabled())
        iterated.append(value)
    assert iterated == expected
    assert all(between) or not gc.isenabled()
    assert array.tolist() == expected
    assert [array[i] for i in range(len(array))] == expected
    assert np.asarray(array).tolist() == expected
