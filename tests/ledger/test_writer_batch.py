"""`Ledger.append_batch`, the engines' path (issue 25): engine-built dicts checked by the
model's rules without building a model, one lock and one write per batch. Whatever it
stores or refuses, `append_many` stores or refuses the same way."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from crewbook.errors import LedgerError, UsageError
from crewbook.ledger import Ledger, read_ledger

TS = "2025-03-01T09:00:00+00:00"

#: Events the quick rules settle, and events only the model can settle (it decides).
EVENTS: list[dict[str, Any]] = [
    {"kind": "note", "ts": TS},
    {"kind": "note", "ts": "2025-03-01T09:00:00.123+02:00", "run": "other", "loop": "crew"},
    {"kind": "report", "role": "qa", "ts": "2025-03-01T09:00:00", "attempt": 2, "version": 0,
     "cost": 0.5, "tokens_in": 3, "summary": "é\u2028\x1f", "duration_ms": 10,
     "payload": {"a": (1, 2), "b": {1: 2}, "c": [None, True, "x"]}},
    {"kind": "verdict", "role": "qa", "verdict": "go",
     "ts": datetime(2025, 1, 1, tzinfo=timezone(timedelta(hours=5)))},
    {"kind": "note", "ts": TS, "cost": 0},  # an int cost: the model turns it into 0.0
    {"kind": "note", "ts": TS, "payload": {"x": float("nan")}},  # the model writes null
    {"kind": "note", "ts": TS, "payload": {"when": datetime(2025, 1, 1)}},
    {"kind": "note", "ts": TS, "payload": None, "seq": 41, "v": 1},
    {"kind": "note", "ts": "2025-03-01T09:00:00.000000+00:00"},
]

#: Events both refuse, and the key each refusal names.
BAD: list[tuple[dict[str, Any], str]] = [
    ({"kind": "finish", "ts": TS}, "verdict"),
    ({"kind": "note", "ts": "1500-03-01T09:00:00Z"}, "ts"),
    ({"kind": "note", "ts": 12}, "ts"),
    ({"kind": "nope", "ts": TS}, "kind"),
    ({"kind": "note", "ts": TS, "bogus": 1}, "bogus"),
    ({"kind": "note", "ts": TS, "summary": "\ud800"}, "summary"),
    ({"kind": "note", "ts": TS, "payload": {1: 2}}, "payload.1.[key]"),
    ({"kind": "note", "ts": TS, "attempt": True}, "attempt"),
    ({"kind": "note", "ts": TS, "version": -1}, "version"),
    ({"kind": "note", "ts": TS, "run": ""}, "run"),
]


def _write(path: Path, method: str, events: list[dict[str, Any]]) -> list[str]:
    with Ledger(path, run="r", loop="L") as ledger:
        getattr(ledger, method)([dict(e) for e in events])
    return path.read_text("utf-8").split("\n")[:-1]  # not splitlines: a summary holds U+2028


def test_batch_lines_are_the_lines_append_many_writes(tmp_path: Path) -> None:
    batch = _write(tmp_path / "batch.jsonl", "append_batch", EVENTS)
    many = _write(tmp_path / "many.jsonl", "append_many", EVENTS)
    assert batch == many
    assert [json.loads(line)["seq"] for line in batch] == [0, 0, 1, 2, 3, 4, 5, 6, 7]
    frame = read_ledger(tmp_path / "batch.jsonl")
    assert len(frame) == len(EVENTS)


@pytest.mark.parametrize(("event", "key"), BAD, ids=[k for _, k in BAD])
def test_batch_refuses_what_append_many_refuses(tmp_path: Path, event: dict[str, Any],
                                                key: str) -> None:
    refusals = []
    for method in ("append_batch", "append_many"):
        path = tmp_path / f"{method}.jsonl"
        with Ledger(path, run="r", loop="L") as ledger, pytest.raises(LedgerError) as err:
            getattr(ledger, method)([{"kind": "note", "ts": TS}, dict(event)])
        assert path.read_bytes() == b""  # all or nothing
        refusals.append([(p.key, p.message) for p in err.value.problems])
    assert refusals[0] == refusals[1]
    assert refusals[0][0][0] == f"[1].{key}"


def test_batches_continue_each_runs_seq_after_other_writers(tmp_path: Path) -> None:
    path = tmp_path / "shared.jsonl"
    with Ledger(path, run="a", loop="L") as one, Ledger(path, run="b", loop="L") as two:
        assert one.append_batch([{"kind": "note", "ts": TS}] * 3) == 3
        two.append_batch([{"kind": "note", "ts": TS}, {"kind": "note", "ts": TS, "run": "a"}])
        one.append_batch(iter([{"kind": "note", "ts": TS}]))  # any iterable
        assert one.next_seq == 5
    seqs = [(e["run"], e["seq"]) for e in map(json.loads, path.read_text().splitlines())]
    assert seqs == [("a", 0), ("a", 1), ("a", 2), ("b", 0), ("a", 3), ("a", 4)]


def test_batch_stamps_the_time_when_an_event_has_none(tmp_path: Path) -> None:
    path = tmp_path / "now.jsonl"
    before = datetime.now(UTC)
    _write(path, "append_batch", [{"kind": "note"}])
    stamped = json.loads(path.read_text())["ts"]
    assert stamped.endswith("Z")
    assert datetime.fromisoformat(stamped.replace("Z", "+00:00")) >= before.replace(
        microsecond=0)


@pytest.mark.parametrize(("good", "bad", "key"), [
    ({"version": 1}, {"version": -1}, "version"),
    ({"version": 1}, {"version": True}, "version"),
    ({"attempt": 1}, {"attempt": 0}, "attempt"),
    ({"cost": 0.5}, {"cost": float("inf")}, "cost"),
    ({"payload": {"a": 1}}, {"payload": {2: 1}}, "payload.2.[key]"),
    ({"run": "x"}, {"run": ""}, "run"),
], ids=["negative", "bool", "attempt-0", "inf-cost", "int-key", "empty-run"])
def test_a_shape_seen_before_still_has_its_values_checked(
        tmp_path: Path, good: dict[str, Any], bad: dict[str, Any], key: str) -> None:
    """The writer checks each shape of event (keys, value types) once: an event of a shape
    it already wrote is still refused for its values, as `append_many` refuses it."""
    with Ledger(tmp_path / "l.jsonl", run="r", loop="L") as ledger:
        assert ledger.append_batch([{"kind": "note", "ts": TS, **good}]) == 1
        with pytest.raises(LedgerError) as err:
            ledger.append_batch([{"kind": "note", "ts": TS, **good},
                                 {"kind": "note", "ts": TS, **bad}])
        assert err.value.problems[0].key == f"[1].{key}"
        assert ledger.events == 1  # all or nothing


def test_an_empty_batch_writes_nothing_and_a_closed_ledger_refuses_it(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "e.jsonl", run="r", loop="L")
    assert ledger.append_batch([]) == 0
    assert ledger.append_batch([{"kind": "note", "ts": TS}] * 2) == 2
    assert ledger.next_seq == 2
    ledger.close()
    with pytest.raises(UsageError):
        ledger.append_batch([])
