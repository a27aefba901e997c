"""``crewbook ledger import`` and ``crewbook ledger export --otlp``, through the real
``crewbook`` entry point (`main`)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from crewbook import import_runs, read_ledger
from crewbook.commands import main

from .test_importers import LOGS
from .test_otlp import HISTORY


def test_import_writes_one_ledger_of_every_source(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.jsonl"
    sources = [LOGS / "openhands", LOGS / "swe-agent", LOGS / "aider"]
    assert main(["ledger", "import", *map(str, sources), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    events = len(import_runs(LOGS / "openhands" / "basic_gui_mode.json"))
    assert f"basic_gui_mode.json: openhands, 1 run, {events} events" in printed
    assert f"wrote {out}" in printed
    pd.testing.assert_frame_equal(read_ledger(out), import_runs(sources).drop(columns="source"))


def test_import_with_from_and_json(tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.jsonl"
    traj = sorted((LOGS / "swe-agent").glob("*.traj"))[0]
    assert main(["ledger", "import", str(traj), "--from", "swe-agent", "-o", str(out),
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    # init, a model call and a tool call for each of its 5 steps, finish
    assert data["read"] == [{"source": str(traj), "format": "swe-agent", "events": 12,
                             "runs": 1}]


def test_import_of_an_unknown_file_fails_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "notes.md"
    other.write_text("# my notes\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["ledger", "import", str(other), "-o", str(out)]) == 1
    assert "import_unknown_source" in capsys.readouterr().err
    assert not out.exists()
    assert main(["ledger", "import", str(tmp_path / "nope.json"), "-o", str(out)]) == 2


def test_export_then_import_gives_the_same_events(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    spans, back = tmp_path / "spans.json", tmp_path / "back.jsonl"
    assert main(["ledger", "export", str(HISTORY), "--otlp", "-o", str(spans)]) == 0
    assert "wrote" in capsys.readouterr().out
    assert main(["ledger", "import", str(spans), "-o", str(back)]) == 0
    pd.testing.assert_frame_equal(read_ledger(back), read_ledger(HISTORY))
