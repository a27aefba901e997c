"""`Ledger.append_built`, the engines' trusted path (issue 25): the events an engine built
itself, checked only where a report's value could still be wrong, numbered before the lock,
written with one lock and one write. Its lines are the lines `append_batch` (and so
`append_many`) writes; anything outside its forms goes through `append_batch` whole."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from crewbook.core.loop import append_events
from crewbook.errors import LedgerError, UsageError
from crewbook.ledger import Ledger, read_ledger

from .test_writer_batch import EVENTS, TS

#: Events as engines build them (`datetime.isoformat` times, several shapes, one run).
ACT: list[dict[str, Any]] = [
    {"loop": "crew", "ts": "2026-12-03T20:11:54.696107+00:00", "kind": "verdict", "role": "qa",
     "stage": "verify", "verdict": "go", "attempt": 2, "version": 2, "summary": "qa go",
     "payload": {"act": 5, "story": "Story 1", "data": {}}, "run": "r"},
    {"loop": "crew", "ts": "2026-12-03T20:11:54.696107+00:00", "kind": "transition",
     "stage": "story", "summary": "next story: Story 2", "payload": {"from": "S1", "to": "S2"},
     "run": "r"},
    {"loop": "coordinator", "ts": "2025-03-01T09:00:00+00:00", "kind": "report",
     "role": "developer", "duration_ms": 900_000, "verdict": "done", "version": 1,
     "cost": 0.25, "tokens_in": 10, "summary": "é\u2028\x1f \"quoted\"", "run": "r"},
    {"ts": "2025-03-01T09:00:00.000000+00:00", "kind": "note", "payload": {"x": float("nan")}},
    {"ts": datetime(2025, 1, 1, 12, tzinfo=UTC), "kind": "note", "run": "r"},
]


def _lines(path: Path, method: str, events: list[dict[str, Any]], repeat: int = 2) -> list[str]:
    with Ledger(path, run="r", loop="L") as ledger:
        for _ in range(repeat):  # the second time every shape is known: the fast path
            getattr(ledger, method)([dict(e) for e in events])
    return path.read_text("utf-8").split("\n")[:-1]  # not splitlines: a summary holds U+2028


@pytest.mark.parametrize("events", [ACT, EVENTS], ids=["engine-built", "unusual"])
def test_built_lines_are_the_lines_append_batch_and_append_many_write(
        tmp_path: Path, events: list[dict[str, Any]]) -> None:
    built = _lines(tmp_path / "built.jsonl", "append_built", events)
    assert built == _lines(tmp_path / "batch.jsonl", "append_batch", events)
    assert built == _lines(tmp_path / "many.jsonl", "append_many", events)
    assert len(read_ledger(tmp_path / "built.jsonl")) == 2 * len(events)


def test_one_act_is_one_write_numbered_after_other_writers(tmp_path: Path) -> None:
    """Numbered before the lock from this writer's count; another writer's lines (seen by
    the size under the lock) renumber it, so each run's seq stays consecutive."""
    path = tmp_path / "shared.jsonl"
    act = [{"kind": "note", "ts": TS, "loop": "L"}] * 2
    with Ledger(path, run="a") as one, Ledger(path, run="b") as two:
        assert one.append_built(act) == 2
        two.append_built([*act, {"kind": "note", "ts": TS, "loop": "L", "run": "b"}])
        two.append_built([{"kind": "note", "ts": TS, "loop": "L", "run": "a"}])
        assert one.append_built(act) == 2
        assert (one.next_seq, two.next_seq) == (5, 3)
    seqs = [(e["run"], e["seq"]) for e in map(json.loads, path.read_text().splitlines())]
    assert seqs == [("a", 0), ("a", 1), ("b", 0), ("b", 1), ("b", 2), ("a", 2), ("a", 3),
                    ("a", 4)]


@pytest.mark.parametrize(("bad", "key"), [
    ({"version": -1}, "version"),
    ({"attempt": 0}, "attempt"),
    ({"cost": float("inf")}, "cost"),
    ({"run": ""}, "run"),
    ({"kind": "finish"}, "verdict"),
    ({"kind": "nope"}, "kind"),
    ({"ts": "1500-03-01T09:00:00+00:00"}, "ts"),
    ({"summary": "\ud800"}, "summary"),
    ({"attempt": True}, "attempt"),
    ({"summary": 5}, "summary"),
    ({"loop": ""}, "loop"),
], ids=["negative", "attempt-0", "inf-cost", "empty-run", "needs-verdict", "kind", "year",
        "surrogate", "bool-count", "number-text", "empty-loop"])
def test_values_a_report_could_carry_are_still_refused(tmp_path: Path, bad: dict[str, Any],
                                                        key: str) -> None:
    """A shape already known, a value that breaks the format: the model's refusal, whole."""
    good = {"kind": "note", "ts": TS, "version": 1, "attempt": 1, "cost": 0.5, "run": "x",
            "summary": "s"}
    with Ledger(tmp_path / "l.jsonl", run="r", loop="L") as ledger:
        assert ledger.append_built([good]) == 1
        with pytest.raises(LedgerError) as err:
            ledger.append_built([good, {**good, **bad}])
        assert err.value.problems[0].key == f"[1].{key}"
        assert ledger.events == 1  # all or nothing


def test_append_events_takes_the_trusted_path_and_a_closed_ledger_refuses(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ledger = Ledger(tmp_path / "e.jsonl", run="r", loop="L")
    seen: list[int] = []
    built = ledger.append_built
    monkeypatch.setattr(ledger, "append_built", lambda events: seen.append(len(events))
                        or built(events))
    append_events(ledger, [{"kind": "note", "ts": TS}])
    assert seen == [1]
    assert ledger.append_built([]) == 0
    ledger.close()
    with pytest.raises(UsageError):
        ledger.append_built([{"kind": "note", "ts": TS}])
    with pytest.raises(UsageError):
        ledger.append_built([])


def test_a_field_none_in_a_known_key_set_is_left_out_as_append_batch_does(
        tmp_path: Path) -> None:
    """A key set the builders know, then the same keys with a None: that field is not
    written (the line is `append_batch`'s), and a value there again is written."""
    first = {"kind": "report", "ts": TS, "role": "dev", "verdict": "done", "version": 1,
             "summary": "s"}
    events = [first, {**first, "version": None}, {**first, "version": 2}]
    built = _lines(tmp_path / "built.jsonl", "append_built", events, repeat=1)
    assert built == _lines(tmp_path / "batch.jsonl", "append_batch", events, repeat=1)
    assert ["version" in json.loads(line) for line in built] == [True, False, True]


def test_each_known_key_set_gets_straight_line_code_once(tmp_path: Path) -> None:
    """The builders are made per key set, once, and only from the model's field names."""
    from crewbook.ledger import shapes

    event = {"loop": "L", "ts": TS, "kind": "note", "summary": "s", "run": "r",
             "tokens_in": 3}
    with Ledger(tmp_path / "k.jsonl") as ledger:
        ledger.append_built([event])
        build = shapes.BUILDERS[tuple(event)]
        ledger.append_built([dict(event)])
        assert shapes.BUILDERS[tuple(event)] is build
        assert build is not None
        assert build({**event, "tokens_in": -1}, "r", "L") is None
        with pytest.raises(LedgerError):  # not a field: the model's refusal, no code made
            ledger.append_built([{**event, "role'] = 1 #": "x"}])
    assert (tuple({**event, "role'] = 1 #": "x"}) not in shapes.BUILDERS
            or shapes.BUILDERS[tuple({**event, "role'] = 1 #": "x"})] is None)


def test_usual_act_syncs_with_fsync_always_and_counts_what_it_wrote(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The usual act (nobody else wrote) is written inline in `AppendFile.land`: it still
    syncs each act with ``fsync="always"`` (not with ``"close"``), and the writer's count
    (events, each run's next seq) follows what it wrote."""
    import os

    synced: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    one = {k: v for k, v in ACT[0].items() if k != "run"}
    for policy, acts in (("close", 0), ("always", 3)):
        synced.clear()
        path = tmp_path / f"{policy}.jsonl"
        ledger = Ledger(path, run="r", loop="L", fsync=policy)  # type: ignore[arg-type]
        for _ in range(3):
            assert ledger.append_built([dict(one)]) == 1
        assert len(synced) == acts  # before close
        assert (ledger.events, ledger.next_seq) == (3, 3)
        with Ledger(path, run="r") as other:  # another writer of the same run
            other.append_built([dict(one)])
        assert ledger.append_built([dict(one)]) == 1  # caught up: numbered after it
        ledger.close()
        seqs = [json.loads(line)["seq"] for line in path.read_text("utf-8").splitlines()]
        assert seqs == [0, 1, 2, 3, 4]
