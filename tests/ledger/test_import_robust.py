"""Importing whatever a user points at: a folder imports every file it can and names
each one it skipped; ``--from X`` refuses what is not X; nothing is an empty success;
events of unknown types are kept, counted and reported; ``stage`` is a short name."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crewbook import import_runs
from crewbook.commands import main
from crewbook.errors import LedgerError
from crewbook.ledger.importers import (
    REGISTRY,
    SOURCES,
    Sniff,
    _common,
    _load,
    skipped_files,
    tool_calls,
    unknown_types,
)
from crewbook.ledger.reader import LedgerWarning, read_ledger

from .test_importers import LOGS, attempt, leaves

SDK = LOGS / "openhands-sdk"
MINI = LOGS / "mini-swe-agent"
#: A Claude Code transcript line (the shape of ~/.claude/projects/*/*.jsonl).
CLAUDE_LINE = {"type": "user", "sessionId": "5f0c", "cwd": "/work", "gitBranch": "main",
               "timestamp": "2026-01-02T10:00:00.000Z", "uuid": "u1", "parentUuid": None,
               "message": {"role": "user", "content": "/openspec:apply add-login"}}


def _folder(tmp_path: Path) -> Path:
    """Two real logs and two files that cannot be imported."""
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(MINI / "pvlib__pvlib-python-1606.traj.json", folder)
    shutil.copy(LOGS / "openhands" / "wrong_initial_state.json", folder)
    (folder / "broken.json").write_text('{"messages": [\n  {"role": }\n]}', encoding="utf-8")
    (folder / "notes.md").write_text("# my notes\n", encoding="utf-8")
    return folder


def test_a_folder_imports_every_file_it_can_and_names_the_ones_it_skipped(
        tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    with pytest.warns(LedgerWarning, match="skipped 2 of 4 files"):
        df = import_runs(folder)
    assert set(df["source"]) == {"mini-swe-agent", "openhands"}
    skipped = skipped_files(df)
    assert list(skipped["file"]) == [str(folder / "broken.json"), str(folder / "notes.md")]
    assert list(skipped["code"]) == ["import_unknown_source"] * 2
    assert "not valid JSON" in skipped["reason"].iloc[0]


def test_nothing_skipped_means_an_empty_skip_list(recwarn: pytest.WarningsRecorder) -> None:
    df = import_runs(MINI)
    assert skipped_files(df).empty
    assert not [w for w in recwarn if issubclass(w.category, LedgerWarning)]


def test_the_command_writes_what_it_could_and_exits_1_naming_the_skipped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder, out = _folder(tmp_path), tmp_path / "out.jsonl"
    assert main(["ledger", "import", str(folder), "-o", str(out), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [s["file"] for s in data["skipped"]] == [str(folder / "broken.json"),
                                                    str(folder / "notes.md")]
    assert data["skipped"][0]["problems"][0]["line"] == 2
    assert {r["format"] for r in data["read"]} == {"mini-swe-agent", "openhands"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LedgerWarning)
        expected = import_runs(folder).drop(columns="source")
    pd.testing.assert_frame_equal(read_ledger(out), expected)
    assert main(["ledger", "import", str(folder), "-o", str(out)]) == 1
    captured = capsys.readouterr()
    assert f"skipped {folder / 'notes.md'}: " in captured.err
    assert "skipped 2 files" in captured.out


def test_a_folder_where_nothing_imports_fails_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder, out = tmp_path / "logs", tmp_path / "out.jsonl"
    folder.mkdir()
    (folder / "notes.md").write_text("# my notes\n", encoding="utf-8")
    with pytest.raises(LedgerError) as caught:
        import_runs(folder)
    assert caught.value.problems[0].path == str(folder / "notes.md")
    assert main(["ledger", "import", str(folder), "-o", str(out)]) == 1
    assert "import_unknown_source" in capsys.readouterr().err
    assert not out.exists()
    (folder / "notes.md").unlink()
    with pytest.raises(LedgerError, match="nothing to import"):
        import_runs(folder)


@pytest.mark.parametrize("make", [
    lambda d: _write(d / "session.jsonl", json.dumps(CLAUDE_LINE) + "\n"),
    lambda d: LOGS / "openhands" / "basic_gui_mode.json",
    lambda d: MINI / "pvlib__pvlib-python-1606.traj.json",
], ids=["claude-code", "openhands", "mini-swe-agent"])
def test_from_otlp_refuses_what_is_not_otlp(tmp_path: Path, make: Any,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    path, out = make(tmp_path), tmp_path / "out.jsonl"
    with pytest.raises(LedgerError) as caught:
        import_runs(path, source="otlp")
    assert caught.value.codes == ["import_not_otlp"]
    assert caught.value.problems[0].path == str(path)
    assert main(["ledger", "import", str(path), "--from", "otlp", "-o", str(out)]) == 1
    assert "import_not_otlp" in capsys.readouterr().err
    assert not out.exists()


def test_a_forced_source_says_what_the_file_looks_like() -> None:
    path = MINI / "pvlib__pvlib-python-1606.traj.json"
    with pytest.raises(LedgerError, match="it looks like mini-swe-agent"):
        import_runs(path, source="openhands")


def test_from_crewbook_on_a_transcript_is_one_problem_not_one_per_line(
        tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", (json.dumps(CLAUDE_LINE) + "\n") * 500)
    with pytest.raises(LedgerError) as caught:
        import_runs(path, source="crewbook")
    assert caught.value.codes == ["import_not_crewbook"]


def test_a_detected_file_with_no_event_is_an_error_not_an_empty_success(
        tmp_path: Path) -> None:
    path = _write(tmp_path / "spans.json", '{"resourceSpans": []}')
    with pytest.raises(LedgerError) as caught:
        import_runs(path)
    assert caught.value.codes == ["import_empty_otlp"]
    with pytest.raises(LedgerError):
        import_runs(path, source="otlp")


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _sdk_events(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8"))
            for p in sorted((folder / "events").glob("event-*.json"))]


def test_unknown_event_types_are_kept_counted_and_reported(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = _sdk_events(SDK / "cd94562403b9487ebdd4018e3f531dfd")
    novel = {"id": "n1", "timestamp": "2026-02-05T11:24:50", "source": "environment",
             "kind": "BrowserRecordingEvent", "frames": 3}
    path = _write(tmp_path / "stream.json", json.dumps([*events[:3], novel, novel,
                                                        *events[3:]]))
    df = import_runs(path)
    kept = df[df["payload"].map(lambda p: p.get("unknown_type") == "BrowserRecordingEvent")]
    assert list(kept["kind"]) == ["note", "note"]
    assert all(p["origin"]["record"] in ("[3]", "[4]") for p in kept["payload"])
    assert unknown_types(df) == {"openhands:BrowserRecordingEvent": 2}
    out = tmp_path / "out.jsonl"
    assert main(["ledger", "import", str(path), "-o", str(out)]) == 0
    assert "kept 2 events of unknown type openhands:BrowserRecordingEvent as notes" \
        in capsys.readouterr().out


def test_an_sdk_stream_as_a_json_list_is_read_as_sdk_events(tmp_path: Path) -> None:
    """The misreading this replaces: SDK events taken for V0 ones, whole action dicts as
    stages, observations as transitions, and a MessageEvent refusing the file."""
    events = _sdk_events(SDK / "cd94562403b9487ebdd4018e3f531dfd")
    path = _write(tmp_path / "stream.json", json.dumps(events))
    df = import_runs(path)
    actions = [e for e in events if e["kind"] == "ActionEvent"]
    responses = {e["llm_response_id"] for e in events
                 if e.get("llm_response_id") and e["source"] == "agent"}
    assert (df["stage"] == "model").sum() == len(responses)
    tools = df[tool_calls(df)]
    assert list(tools["stage"]) == [e["tool_name"] for e in actions]
    assert not (df["kind"] == "transition").any()
    assert df["stage"].dropna().str.len().max() <= _common.STAGE_CHARS
    assert any(e["kind"] == "MessageEvent" and "action" not in e for e in events)


def test_a_stage_is_never_a_dump(tmp_path: Path) -> None:
    action = {"kind": "TerminalAction", "command": "x" * 5000}
    v0 = [{"id": 1, "timestamp": "2025-01-01T00:00:00", "source": "agent",
           "action": "run " + "y" * 500},
          {"id": 2, "timestamp": "2025-01-01T00:00:01", "source": "agent", "action": action}]
    df = import_runs(_write(tmp_path / "v0.json", json.dumps(v0)))
    assert df["stage"].dropna().str.len().max() <= _common.STAGE_CHARS
    assert "x" * 100 not in "".join(df["stage"].dropna())


def test_a_whole_json_file_over_the_cap_is_a_clear_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.traj.json"
    shutil.copy(MINI / "pvlib__pvlib-python-1606.traj.json", path)
    monkeypatch.setattr(_common, "MAX_BYTES", 1000)
    with pytest.raises(LedgerError, match="more than the 1,000 an import reads; split it"):
        import_runs(path)


def test_the_registry_names_every_source_and_each_part_loads(tmp_path: Path) -> None:
    assert tuple(s.name for s in REGISTRY) == SOURCES
    assert len(set(SOURCES)) == len(SOURCES)
    sniff = Sniff.of(_write(tmp_path / "x.txt", "nothing\n"))
    for entry in REGISTRY:
        assert entry.detects(sniff) is False, entry.name
        assert callable(_load(entry.importer)), entry.name
        assert entry.runs_under(tmp_path) == []


# -- hostile logs in the new shapes: a clean LedgerError or a frame, never a crash ------

sdk_streams = st.lists(st.fixed_dictionaries(
    {"id": leaves, "timestamp": st.one_of(leaves, st.just("2026-01-01T00:00:00")),
     "kind": st.sampled_from(["ActionEvent", "ObservationEvent", "MessageEvent",
                              "ConversationStateUpdateEvent", "AgentErrorEvent",
                              "PauseEvent", "Condensation", "SomethingNewEvent"])},
    optional={"source": st.sampled_from(["agent", "user", "environment"]) | leaves,
              "tool_name": leaves, "action_id": leaves, "llm_response_id": leaves,
              "action": leaves, "observation": leaves, "llm_message": leaves,
              "key": st.sampled_from(["stats", "execution_status"]) | leaves,
              "value": leaves | st.fixed_dictionaries({"usage_to_metrics": st.dictionaries(
                  st.text(max_size=3), st.fixed_dictionaries({}, optional={
                      "token_usages": st.lists(leaves, max_size=2), "costs": leaves,
                      "accumulated_cost": leaves, "model_name": leaves,
                      "accumulated_token_usage": leaves}), max_size=2)})}),
    min_size=1, max_size=6)
mini_trajectories = st.fixed_dictionaries(
    {"trajectory_format": st.just("mini-swe-agent-1"),
     "messages": st.lists(st.fixed_dictionaries(
         {"role": st.sampled_from(["system", "user", "assistant", "tool"]) | leaves},
         optional={"content": leaves | st.just("```bash\nls\n```"), "extra": leaves,
                   "tool_call_id": leaves, "tool_calls": leaves}), max_size=5)},
    optional={"info": st.dictionaries(st.sampled_from(
        ["exit_status", "model_stats", "config", "mini_version"]), leaves),
        "instance_id": leaves})
eval_lines = st.lists(st.fixed_dictionaries(
    {"instance_id": leaves, "history": st.lists(leaves, max_size=3)},
    optional={"metrics": leaves}), min_size=1, max_size=3)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.one_of(sdk_streams, mini_trajectories), lines=st.booleans())
def test_hostile_sdk_and_mini_logs_give_a_clean_error(tmp_path: Path, value: Any,
                                                      lines: bool) -> None:
    path = tmp_path / "log.json"
    if lines and isinstance(value, list):
        path.write_text("\n".join(json.dumps(v) for v in value), encoding="utf-8")
    else:
        path.write_text(json.dumps(value), encoding="utf-8")
    df, problems = attempt(path)
    assert all(p.path for p in problems)
    assert (df is None) == bool(problems)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=eval_lines)
def test_hostile_evaluation_outputs_give_a_clean_error(tmp_path: Path, value: Any) -> None:
    path = tmp_path / "output.jsonl"
    path.write_text("\n".join(json.dumps(v) for v in value), encoding="utf-8")
    df, problems = attempt(path)
    assert all(p.path for p in problems)
    assert (df is None) == bool(problems)
