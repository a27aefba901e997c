"""Opening a `Ledger` reads the tail of the file, not all of it: memory stays bounded on
a big generated ledger, and every run still gets the right next `seq`."""

from __future__ import annotations

import json
import random
import tracemalloc
from pathlib import Path

import pytest

from crewbook.ledger import appendfile
from crewbook.ledger.writer import Ledger


def _generate(path: Path, megabytes: int, seed: int = 23) -> dict[str, int]:
    """A ledger of about `megabytes` MiB, runs interleaved; returns each run's event count."""
    rng = random.Random(seed)
    runs = [f"run-{i}" for i in range(5)]
    counts = dict.fromkeys(runs, 0)
    pad = "x" * 200
    with open(path, "w", encoding="utf-8") as handle:
        while handle.tell() < megabytes << 20:
            run = rng.choice(runs[:4])  # run-4 only at the very start
            if counts["run-4"] == 0:
                run = "run-4"
            line = {"run": run, "seq": counts[run], "loop": "crew", "kind": "report",
                    "ts": "2026-01-01T00:00:00Z", "summary": pad}
            counts[run] += 1
            handle.write(json.dumps(line) + "\n")
    return counts


def test_opening_a_big_ledger_reads_its_tail_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    counts = _generate(path, 24)
    tracemalloc.start()
    try:
        ledger = Ledger(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 6 << 20, f"opening a 24 MiB ledger took {peak / 2**20:.1f} MiB"
    last = json.loads(path.read_bytes().splitlines()[-1])
    assert ledger.run == last["run"]
    assert ledger.next_seq == counts[last["run"]]
    stored = ledger.append({"kind": "note", "loop": "crew", "summary": "tail"})
    assert stored.seq == counts[last["run"]]
    ledger.close()


def test_a_run_further_back_is_found_by_a_streamed_scan(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    monkeypatch.setattr(appendfile, "_STREAM_BYTES", 64 * 1024 + 7)  # many odd-sized chunks
    path = tmp_path / "big.jsonl"
    counts = _generate(path, 3)
    with Ledger(path) as ledger:
        old = ledger.append({"kind": "note", "loop": "crew", "run": "run-4", "summary": "old"})
        assert old.seq == counts["run-4"]
        assert ledger.events == sum(counts.values()) + 1
        new = ledger.append({"kind": "note", "loop": "crew", "run": "run-9", "summary": "new"})
        assert new.seq == 0
    with Ledger(path, run="run-0") as again:
        assert again.next_seq == counts["run-0"]


def test_a_cut_last_line_is_still_sealed(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    counts = _generate(path, 2)
    with open(path, "ab") as handle:
        handle.write(b'{"run": "run-0", "seq": 99999, "kin')
    last = json.loads(path.read_bytes().splitlines()[-2])
    with pytest.warns(UserWarning, match="cut short"), Ledger(path) as ledger:
        stored = ledger.append({"kind": "note", "loop": "crew", "summary": "after the cut"})
    assert stored.seq == counts[last["run"]]
    assert path.read_bytes().endswith(b"\n")


def _line(run: str, seq: int, **extra: object) -> str:
    return json.dumps({"run": run, "seq": seq, "loop": "crew", "kind": "report",
                       "ts": "2026-01-01T00:00:00Z", **extra})


@pytest.fixture
def small_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tail of 4 KiB and chunks of odd sizes, so a few hundred KiB is 'big'."""
    monkeypatch.setattr(appendfile, "_TAIL_BYTES", 4096)
    monkeypatch.setattr(appendfile, "_STREAM_BYTES", 1000 + 7)


def test_a_run_is_found_backwards_without_scanning_the_whole_file(
        tmp_path: Path, small_windows: None) -> None:
    path = tmp_path / "big.jsonl"
    counts = _generate(path, 1)
    with Ledger(path, run="run-4") as ledger:  # run-4 is only at the very start
        assert ledger.next_seq == counts["run-4"]
        assert "+," in repr(ledger)  # "events=N+": the whole count was not scanned
        assert ledger.append({"kind": "note", "loop": "crew", "summary": "x"}).seq == 1
    with Ledger(path, run="run-new") as fresh:
        assert fresh.append({"kind": "note", "loop": "crew", "summary": "x"}).seq == 0
        assert fresh.events == sum(counts.values()) + 2  # asking for the count scans it


def test_the_backward_search_reads_every_spelling_of_a_run(tmp_path: Path,
                                                             small_windows: None) -> None:
    lines = [
        _line("team/a", 0), _line("team/a", 1).replace('"team/a"', '"team\\/a"'),
        _line("run-7", 4).replace('"run-7"', '"\\u0072un-7"'),
        _line("run-8", 2).replace('"run"', '"\\u0072un"'),
        _line("équipe", 5), _line("run-0", 0, payload={"runs": ["run-7", "run-8"]}),
    ]
    lines += [_line("run-0", seq, summary="y" * 100) for seq in range(1, 200)]
    path = tmp_path / "spellings.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = {"team/a": 2, "run-7": 5, "run-8": 3, "équipe": 6, "run-0": 200, "run-9": 0}
    for run, seq in expected.items():
        with Ledger(path, run=run) as ledger:
            assert ledger.next_seq == seq, run
    with Ledger(path) as ledger:  # several runs numbered in one batch
        stored = ledger.append_many([{"kind": "note", "loop": "crew", "run": run}
                                     for run in ("run-7", "run-8", "run-7", "team/a")])
        assert [e.seq for e in stored] == [5, 3, 6, 2]
