"""Unknown event types, the same rule in every importer: a record of a type the source
writes but crewbook does not map is a ``note`` (not counted); a record of a type the
importer does not know is a ``note`` marked ``payload.unknown_type``, with its origin,
counted by `unknown_types` and reported by ``crewbook ledger import`` (text and --json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from crewbook import import_runs
from crewbook.commands import main
from crewbook.ledger.importers import unknown_types

LOGS = Path(__file__).resolve().parents[1] / "data" / "agent_logs"


def _lines(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def _codex(path: Path) -> Path:
    t = "2025-01-01T00:00:0{}Z".format
    return _lines(path, [
        {"timestamp": t(0), "type": "session_meta", "payload": {"id": "s", "cwd": "/p"}},
        {"timestamp": t(1), "type": "turn_context", "payload": {"model": "gpt-5"}},
        {"timestamp": t(2), "type": "response_item", "payload": {"type": "reasoning"}},
        {"timestamp": t(3), "type": "event_msg",
         "payload": {"type": "agent_message", "message": "hi"}},
        {"timestamp": t(4), "type": "event_msg", "payload": {"type": "token_count"}},
        {"timestamp": t(5), "type": "event_msg", "payload": {"type": "task_started"}},
        {"timestamp": t(6), "type": "hologram", "payload": {}},
        {"timestamp": t(7), "type": "event_msg", "payload": {"type": "hologram_delta"}},
    ])


def _claude(path: Path) -> Path:
    base = {"sessionId": "s", "cwd": "/p", "version": "2.0.0"}
    t = "2025-01-01T00:00:0{}Z".format
    return _lines(path, [
        {**base, "type": "user", "timestamp": t(0), "uuid": "u1",
         "message": {"role": "user", "content": "hello"}},
        {**base, "type": "summary", "summary": "a summary", "leafUuid": "u1"},
        {**base, "type": "system", "subtype": "local_command", "timestamp": t(1),
         "content": "ls"},
        {**base, "type": "file-history-snapshot", "timestamp": t(2), "snapshot": {}},
        {**base, "type": "queue-operation", "timestamp": t(3), "operation": "enqueue"},
        {**base, "type": "hologram", "timestamp": t(4)},
        {**base, "type": "hologram", "timestamp": t(5)},
    ])


def test_codex_counts_only_the_types_it_does_not_know(tmp_path: Path) -> None:
    df = import_runs(_codex(tmp_path / "rollout.jsonl"))
    assert unknown_types(df) == {"codex:hologram": 1, "codex:hologram_delta": 1}
    kept = df[df["kind"].astype(str) == "note"]
    # the known ones are kept too, as notes without the mark
    assert set(kept["stage"].astype(str)) >= {"turn_context", "reasoning", "agent_message",
                                              "token_count", "task_started"}
    marked = kept[kept["payload"].map(lambda p: "unknown_type" in p)]
    assert [p["origin"]["line"] for p in marked["payload"]] == [7, 8]


def test_claude_code_counts_only_the_types_it_does_not_know(tmp_path: Path) -> None:
    df = import_runs(_claude(tmp_path / "session.jsonl"))
    assert unknown_types(df) == {"claude-code:hologram": 2}
    stages = set(df.loc[df["kind"].astype(str) == "note", "stage"].astype(str))
    assert stages >= {"summary", "system:local_command", "file-history-snapshot",
                      "queue-operation", "hologram"}


def test_mini_swe_agent_keeps_a_message_of_an_unknown_role(tmp_path: Path) -> None:
    raw = json.loads((LOGS / "mini-swe-agent" / "django__django-16255.traj.json").read_text(
        encoding="utf-8"))
    raw["messages"].insert(2, {"role": "critic", "content": "looks wrong"})
    path = tmp_path / "x.traj.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    df = import_runs(path)
    assert unknown_types(df) == {"mini-swe-agent:critic": 1}
    kept = df[df["payload"].map(lambda p: p.get("unknown_type") == "critic")]
    assert kept["payload"].iloc[0]["origin"]["record"] == "messages[2]"
    assert kept["summary"].iloc[0] == "looks wrong"


def test_real_samples_count_no_known_type_as_unknown() -> None:
    """On the real Codex rollouts every line type is one Codex writes: none is counted."""
    df = import_runs(sorted((LOGS / "codex").glob("*.jsonl")))
    raw_types = set()
    for path in sorted((LOGS / "codex").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                raw_types.add(record["type"])
    assert raw_types <= {"session_meta", "turn_context", "response_item", "event_msg",
                         "compacted", "future_synthetic_record"}
    assert unknown_types(df) == {"codex:future_synthetic_record": 1}


def test_the_import_command_reports_every_source_s_unknown_types(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    _codex(folder / "rollout.jsonl")
    _claude(folder / "session.jsonl")
    out = tmp_path / "out.jsonl"
    assert main(["ledger", "import", str(folder), "-o", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["unknown_types"] == {"claude-code:hologram": 2, "codex:hologram": 1,
                                       "codex:hologram_delta": 1}
    assert main(["ledger", "import", str(folder), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "kept 2 events of unknown type claude-code:hologram as notes" in printed
    assert "codex:turn_context" not in printed
