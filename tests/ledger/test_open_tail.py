"""Opening a `Ledger` reads the tail of the file, not all of it: memory stays bounded on
a big generated ledger, and every run still gets the right next `seq`."""

from __future__ import annotations

import json
import random
import tracemalloc
from pathlib import Path

import pytest

from crewbook.ledger import writer
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
    monkeypatch.setattr(writer, "_STREAM_BYTES", 64 * 1024 + 7)  # many odd-sized chunks
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
