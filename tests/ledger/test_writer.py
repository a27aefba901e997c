"""The writer: seq per run, reopening, validation, fsync, display, crashes and concurrency."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crewbook.errors import LedgerError
from crewbook.ledger import Ledger, LedgerEvent, LedgerWarning, read_ledger, validate_ledger
from crewbook.ledger.reader import PROBLEMS_ATTR

from .conftest import without_nulls

ACT = {"kind": "act", "role": "developer", "stage": "build"}


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_append_numbers_stamps_and_returns_the_stored_event(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "a.jsonl"
    with Ledger(path, run="r1", loop="crew") as ledger:
        before = datetime.now(UTC)
        first = ledger.append({"kind": "init", "payload": {"goal": "CSV export"}})
        second = ledger.append(ACT)
    assert (first.seq, second.seq) == (0, 1)
    assert first.run == "r1"
    assert first.loop == "crew"
    assert before <= first.ts <= second.ts <= datetime.now(UTC)
    assert [json.loads(x) for x in lines_of(path)] == [
        json.loads(first.to_line()), json.loads(second.to_line())]


def test_seq_is_per_run_and_given_seq_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    with Ledger(path, run="a", loop="crew") as ledger:
        ledger.append(ACT)
        assert ledger.append({**ACT, "run": "b", "seq": 41}).seq == 0
        assert ledger.append(ACT).seq == 1
        model = LedgerEvent.model_validate({**ACT, "ts": "2025-03-01T09:00:00Z", "run": "b",
                                            "seq": 99, "loop": "crew"})
        stored = ledger.append(model)
    assert (stored.run, stored.seq) == ("b", 1)
    assert stored.ts == datetime(2025, 3, 1, 9, tzinfo=UTC)  # a given ts is kept


def test_reopening_continues_each_run(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    with Ledger(path, run="a", loop="crew") as ledger:
        for _ in range(3):
            ledger.append(ACT)
        ledger.append({**ACT, "run": "b"})
    with Ledger(path, loop="crew") as again:  # run=None: the run of the last event
        assert again.run == "b"
        assert again.events == 4
        assert again.append(ACT).seq == 1
        assert again.append({**ACT, "run": "a"}).seq == 3


def test_an_empty_ledger_gets_a_new_run_id(tmp_path: Path) -> None:
    with Ledger(tmp_path / "a.jsonl", loop="crew") as one, \
            Ledger(tmp_path / "b.jsonl", loop="crew") as two:
        assert one.run != two.run
        assert one.run[:8].isdigit()
        assert one.append(ACT).run == one.run


def test_catching_up_on_a_big_file_uses_arrow_and_agrees(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    rows = [{"v": 1, "ts": "2025-03-01T09:00:00Z", "run": f"r{i % 3}", "seq": i // 3,
             "loop": "crew", "kind": "note", "payload": {"pad": "x" * 200}} for i in range(9000)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert path.stat().st_size > 1 << 20
    with Ledger(path, loop="crew") as ledger:
        assert ledger.events == 9000
        assert ledger.run == "r2"
        assert ledger.append(ACT).seq == 3000
        assert ledger.append({**ACT, "run": "r0"}).seq == 3000


def test_an_invalid_event_raises_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    with Ledger(path, run="r1", loop="crew") as ledger:
        with pytest.raises(LedgerError) as info:
            ledger.append({"kind": "verdict", "role": "qa", "verdit": "go"})
        assert path.read_bytes() == b""
        assert set(info.value.codes) == {"ledger_bad_event"}
        assert "verdit" in str(info.value)
        assert "did you mean 'verdict'" in str(info.value)
        assert ledger.append(ACT).seq == 0


def test_loop_is_required_somewhere(tmp_path: Path) -> None:
    with Ledger(tmp_path / "a.jsonl", run="r") as ledger, pytest.raises(LedgerError,
                                                                         match="loop"):
        ledger.append(ACT)


def test_closed_ledgers_refuse_appends(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "a.jsonl", run="r", loop="crew")
    ledger.close()
    ledger.close()  # twice is fine
    assert ledger.closed
    with pytest.raises(ValueError, match="closed"):
        ledger.append(ACT)


@pytest.mark.parametrize(("policy", "per_event"), [("close", False), ("always", True)])
def test_fsync_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, policy: Any,
                      per_event: bool) -> None:
    calls: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real(fd))[1])
    with Ledger(tmp_path / "a.jsonl", run="r", loop="crew", fsync=policy) as ledger:
        for _ in range(3):
            ledger.append(ACT)
        assert len(calls) == (3 if per_event else 0)
    assert len(calls) == (4 if per_event else 1)  # and once on close
    with pytest.raises(ValueError, match="fsync"):
        Ledger(tmp_path / "b.jsonl", fsync="sometimes")  # type: ignore[arg-type]


def test_repr_and_html_say_what_it_is(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "a<b>.jsonl", run="r1", loop="crew")
    ledger.append(ACT)
    assert repr(ledger) == (f"Ledger({str(tmp_path / 'a<b>.jsonl')!r}, run='r1', events=1, "
                            "next_seq=1, open)")
    html = ledger._repr_html_()
    assert "a&lt;b&gt;.jsonl" in html
    assert "r1" in html
    assert "open" in html
    ledger.close()
    assert repr(ledger).endswith("closed)")
    assert len(ledger.read()) == 1


def test_a_cut_last_line_is_sealed_by_the_next_writer(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    with Ledger(path, run="r", loop="crew") as ledger:
        for _ in range(3):
            ledger.append(ACT)
    whole = path.read_bytes()
    path.write_bytes(whole[:-25])  # the third line loses its end
    with pytest.warns(UserWarning, match="cut short"), Ledger(path, loop="crew") as ledger:
        assert ledger.append(ACT).seq == 2  # the cut event never counted
    with pytest.warns(LedgerWarning):
        frame = read_ledger(path)
    assert frame["seq"].tolist() == [0, 1, 2]
    [problem] = frame.attrs[PROBLEMS_ATTR]
    assert (problem.code, problem.line, problem.severity) == (
        "ledger_truncated_line", 3, "warning")


# -- property: what goes in comes out ------------------------------------------------------

json_leaf = st.one_of(st.booleans(), st.integers(-(2**62), 2**62), st.text(max_size=8),
                      st.floats(allow_nan=False, allow_infinity=False, width=32))
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(min_size=1, max_size=5), inner,
                                            max_size=3)),
    max_leaves=8,
)
events = st.fixed_dictionaries(
    {"kind": st.sampled_from(["act", "report", "verdict"]),
     "role": st.sampled_from(["analyst", "developer", "qa", "reviewer"]),
     "run": st.sampled_from(["r1", "r2"])},
    optional={"stage": st.text(min_size=1, max_size=6),
              "verdict": st.sampled_from(["go", "no-go", "done"]),
              "attempt": st.integers(1, 9), "tokens_in": st.integers(0, 10**9),
              "cost": st.floats(0, 1e6, allow_nan=False), "summary": st.text(max_size=30),
              "payload": st.dictionaries(st.text(min_size=1, max_size=6), json_value,
                                         max_size=4)},
).map(lambda e: {**e, "verdict": e.get("verdict", "go")} if e["kind"] == "verdict" else e)


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(events, min_size=1, max_size=12))
def test_what_is_appended_is_read_back(batch: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "p.jsonl"
        with Ledger(path, loop="crew") as ledger:
            stored = [ledger.append(e) for e in batch]
        frame = read_ledger(path)
        assert list(validate_ledger(path)) == []
    assert len(frame) == len(batch)
    for (_, row), e in zip(frame.iterrows(), stored, strict=True):
        expected = e.model_dump()
        assert row["ts"].to_pydatetime() == expected["ts"]
        for name in ("run", "seq", "kind", "role", "stage", "verdict", "attempt",
                     "tokens_in", "cost", "summary"):
            got = None if pd.isna(row[name]) else row[name]
            assert got == expected[name], name
        assert row["payload"] == without_nulls(expected["payload"])


# -- crashes and concurrency ------------------------------------------------------------------

WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from crewbook.ledger import Ledger
    path, run, count, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    Path(f"{go}.{run}.ready").touch()  # imports done
    while not go.exists():
        time.sleep(0.005)
    with Ledger(path, run=run, loop="crew") as ledger:
        for i in range(count):
            ledger.append({"kind": "act", "role": "developer", "stage": "build",
                           "summary": "x" * (i % 40), "payload": {"i": i}})
""")


def _spawn(path: Path, run: str, count: int, go: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(path), run, str(count), str(go)])


def test_kill_9_mid_stream_loses_nothing_complete(tmp_path: Path) -> None:
    path, go = tmp_path / "victim.jsonl", tmp_path / "go"
    go.touch()
    child = _spawn(path, "victim", 100_000, go)
    deadline = time.monotonic() + 60
    while (not path.exists() or path.stat().st_size < 300_000) and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL
    data = path.read_bytes()
    complete = data.count(b"\n")
    assert 1000 < complete < 100_000, "the writer was not killed mid-stream"
    if not data.endswith(b"\n"):  # the kill cut the last write: reported, not fatal
        with pytest.warns(LedgerWarning):
            frame = read_ledger(path)
    else:  # the kill fell between writes; cut the last line as a crash mid-write would
        path.write_bytes(data[:-7])
        complete -= 1
        with pytest.warns(LedgerWarning, match="cut short"):
            frame = read_ledger(path)
    assert frame["seq"].tolist() == list(range(complete))  # nothing earlier lost
    assert frame["payload"].map(lambda p: p["i"]).tolist() == list(range(complete))
    [problem] = frame.attrs[PROBLEMS_ATTR]
    assert (problem.code, problem.line) == ("ledger_truncated_line", complete + 1)
    # a new writer seals the cut line and goes on where the complete lines stopped
    with pytest.warns(UserWarning, match="sealed"):
        ledger = Ledger(path, loop="crew")  # catching up seals the cut line
    with ledger:
        assert ledger.run == "victim"
        assert ledger.append(ACT).seq == complete
    with pytest.warns(LedgerWarning):
        again = read_ledger(path)
    assert again["seq"].tolist() == list(range(complete + 1))


def test_four_processes_append_to_one_file_without_loss(tmp_path: Path) -> None:
    path, go = tmp_path / "shared.jsonl", tmp_path / "go"
    children = [_spawn(path, f"p{n}", 10_000, go) for n in range(4)]
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("go.*.ready"))) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()  # all four start together
    for child in children:
        assert child.wait(timeout=120) == 0
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    assert len(lines) - 1 == 40_000
    frame = read_ledger(path)  # raises if any line does not parse
    assert len(frame) == 40_000
    for run, group in frame.groupby("run", observed=True):
        assert group["seq"].tolist() == list(range(10_000)), run
        assert group["payload"].map(lambda p: p["i"]).tolist() == list(range(10_000))
    runs_in_file_order = frame["run"].astype(str).tolist()
    assert len(set(runs_in_file_order[:2000])) > 1, "the writers did not overlap"


def test_a_payload_that_is_not_json_is_refused(tmp_path: Path) -> None:
    with Ledger(tmp_path / "a.jsonl", run="r", loop="crew") as ledger:
        with pytest.raises(LedgerError, match="not JSON") as info:
            ledger.append({**ACT, "payload": {"handle": object()}})
        assert info.value.codes == ["ledger_bad_event"]
        assert ledger.append(ACT).seq == 0
    assert len(lines_of(tmp_path / "a.jsonl")) == 1


def test_append_many_writes_an_act_at_once_or_not_at_all(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.jsonl"
    with Ledger(path, run="r", loop="crew") as ledger:
        ledger.append(ACT)
        writes: list[int] = []
        real = os.write
        monkeypatch.setattr(os, "write", lambda fd, data: (writes.append(len(data)),
                                                            real(fd, data))[1])
        stored = ledger.append_many([
            {"kind": "report", "role": "developer", "verdict": "done"},
            {"kind": "verdict", "role": "qa", "verdict": "go", "run": "other"},
            {"kind": "rewind", "summary": "back to act 1"},
        ])
        assert [(e.run, e.seq) for e in stored] == [("r", 1), ("other", 0), ("r", 2)]
        assert len(writes) == 1
        with pytest.raises(LedgerError) as info:
            ledger.append_many([ACT, {"kind": "verdict", "role": "qa"}, {"kind": "nope"}])
        assert [p.key for p in info.value.problems] == ["[1].verdict", "[2].kind"]
        assert ledger.append_many([]) == []
    assert len(lines_of(path)) == 4


@pytest.mark.parametrize("event", [
    {"kind": "init", "tokens_in": 2**63},
    {"kind": "init", "version": 2**63},
    {"kind": "report", "role": "qa", "attempt": 2**64},
    {"kind": "init", "summary": "half \ud800 a character"},
    {"kind": "init", "payload": {"\udc00": 1}},
    {"kind": "init", "payload": {"deep": [{"x": "\ud83d"}]}},
])
def test_the_writer_refuses_what_its_reader_cannot_read(tmp_path: Path,
                                                       event: dict[str, object]) -> None:
    path = tmp_path / "run.jsonl"
    with Ledger(path, run="r", loop="crew") as ledger, pytest.raises(LedgerError) as info:
        ledger.append(event)
    assert info.value.codes == ["ledger_bad_event"]
    assert path.read_bytes() == b""
