"""`runs_by_change`: agent sessions tied to the OpenSpec change they served, by the
command typed, the files written, the paths a change's tasks name, and the git branch;
sessions tied to nothing are their own row."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from crewbook import import_runs, runs_by_change
from crewbook.artifacts.change_runs import UNTIED
from crewbook.commands import main


def _project(root: Path) -> Path:
    changes = root / "openspec" / "changes"
    (changes / "add-export").mkdir(parents=True)
    (changes / "add-export" / "proposal.md").write_text("# Add export\n", encoding="utf-8")
    (changes / "add-export" / "tasks.md").write_text(
        "## 1. Export\n- [ ] 1.1 Write `src/export.py`\n", encoding="utf-8")
    (changes / "archive" / "2025-01-10-fix-login").mkdir(parents=True)
    (changes / "archive" / "2025-01-10-fix-login" / "proposal.md").write_text(
        "# Fix login\n", encoding="utf-8")
    return root


def _session(folder: Path, sid: str, branch: str, steps: list[dict[str, Any]]) -> Path:
    """A Claude Code transcript: each step is a prompt, a model call (with a tool use)
    and its tool result, a minute apart."""
    lines: list[dict[str, Any]] = []
    base = {"sessionId": sid, "cwd": "/repo", "gitBranch": branch, "version": "2.0.0"}
    for n, step in enumerate(steps):
        stamp = f"2025-02-0{step.get('day', 1)}T10:{n:02d}:00Z"
        if "prompt" in step:
            lines.append({**base, "type": "user", "timestamp": stamp,
                          "message": {"role": "user", "content": step["prompt"]}})
        content: list[dict[str, Any]] = [{"type": "text", "text": "ok"}]
        if "write" in step:
            content.append({"type": "tool_use", "id": f"t{n}", "name": "Write",
                            "input": {"file_path": step["write"], "content": "x"}})
        lines.append({**base, "type": "assistant", "timestamp": stamp, "message": {
            "id": f"{sid}-m{n}", "model": "claude-sonnet-4-5", "role": "assistant",
            "content": content, "usage": {"input_tokens": 100, "output_tokens": 10,
                                          "cache_read_input_tokens": 0,
                                          "cache_creation_input_tokens": 0}}})
        if "write" in step:
            lines.append({**base, "type": "user", "timestamp": stamp, "message": {
                "role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}",
                                             "content": "done"}]}})
    path = folder / f"{sid}.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


def _apply(name: str) -> str:
    return (f"<command-message>openspec:apply</command-message>\n<command-name>"
            f"/openspec:apply</command-name>\n<command-args>{name}</command-args>")


@pytest.fixture
def logs(tmp_path: Path) -> tuple[Path, Path]:
    project = _project(tmp_path / "proj")
    logs = tmp_path / "logs"
    logs.mkdir()
    _session(logs, "s1-propose", "main", [
        {"prompt": "/openspec:proposal add-export", "day": 1},
        {"write": "/repo/openspec/changes/add-export/proposal.md", "day": 1},
        {"write": "/repo/openspec/changes/add-export/tasks.md", "day": 1}])
    _session(logs, "s2-apply", "main", [
        {"prompt": _apply("add-export"), "day": 2},
        {"write": "/repo/src/export.py", "day": 2}])
    _session(logs, "s3-branch", "feat/fix-login", [{"prompt": "fix the login bug", "day": 3}])
    _session(logs, "s4-nothing", "main", [{"prompt": "what is this repo?", "day": 4}])
    _session(logs, "s5-again", "main", [
        {"prompt": "fix the export", "day": 5},
        {"write": "/repo/src/export.py", "day": 5}])
    return project, logs


def test_each_session_counts_for_the_change_and_phase_it_served(
        logs: tuple[Path, Path]) -> None:
    project, folder = logs
    df = runs_by_change(project, import_runs(sorted(folder.glob("*.jsonl"))))
    rows = {(r.change, r.phase): r for r in df.itertuples()}
    assert list(rows) == [("add-export", "proposal"), ("add-export", "tasks"),
                          ("add-export", "apply"), ("fix-login", "other"),
                          (UNTIED, "(none)")]
    # s1: the command and proposal.md → proposal (its 3 calls: the one that wrote
    # tasks.md comes before the write), then the write of tasks.md → tasks
    assert rows["add-export", "proposal"].model_calls == 3
    assert rows["add-export", "tasks"].sessions == 1
    # s2 (the command) and s5 (writes a file the change's tasks name) → apply
    assert rows["add-export", "apply"].sessions == 2
    assert rows["add-export", "apply"].model_calls == 4
    assert rows["add-export", "apply"].tokens_in == 400
    assert rows["add-export", "apply"].rework == 1  # s5 came after the first apply
    assert rows["fix-login", "other"].sessions == 1  # by its branch only
    assert rows[UNTIED, "(none)"].sessions == 1  # never dropped
    assert rows["add-export", "proposal"].wall_time == pd.Timedelta(minutes=2)
    assert df["model_calls"].sum() == 9  # every call of every session is in one row
    assert (df["cost"] > 0).all()  # priced from the table: tokens and a model, no cost


def test_by_change_command_prints_a_table_and_json(
        logs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    project, folder = logs
    files = [str(p) for p in sorted(folder.glob("*.jsonl"))]
    assert main(["ledger", "by-change", *files, "--project", str(project), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    by = {(r["change"], r["phase"]): r for r in data["rows"]}
    assert by["add-export", "apply"]["sessions"] == 2
    assert by[UNTIED, "(none)"]["model_calls"] == 1
    assert main(["ledger", "by-change", *files, "--project", str(project)]) == 0
    text = capsys.readouterr().out
    assert "add-export" in text
    assert UNTIED in text


def test_by_change_of_a_missing_project_is_a_clear_error(
        logs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, folder = logs
    nowhere = tmp_path / "no-project"
    nowhere.mkdir()
    code = main(["ledger", "by-change", str(folder / "s1-propose.jsonl"),
                 "--project", str(nowhere)])
    assert code == 2  # as every command that finds no project
    assert "no `_codev/` or `openspec/` folder" in capsys.readouterr().err


def test_ticking_tasks_off_while_applying_stays_apply_and_archiving_is_not_rework(
        tmp_path: Path) -> None:
    project = _project(tmp_path / "proj")
    logs = tmp_path / "logs"
    logs.mkdir()
    _session(logs, "a1", "main", [
        {"prompt": _apply("add-export"), "day": 1},
        {"write": "/repo/openspec/changes/add-export/tasks.md", "day": 1}])
    _session(logs, "a2", "main", [{"prompt": "/openspec:archive add-export", "day": 2}])
    df = runs_by_change(project, sorted(logs.glob("*.jsonl")))
    assert df[["change", "phase", "sessions", "rework"]].values.tolist() == [
        ["add-export", "apply", 1, 0], ["add-export", "archive", 1, 0]]


def test_a_codev_project_ties_files_written_under_its_changes_folder(tmp_path: Path) -> None:
    from crewbook import example_project

    root = Path(example_project())  # a codev project (`_codev/`) with change add-csv-export
    logs = tmp_path / "logs"
    logs.mkdir()
    _session(logs, "c1", "main", [
        {"prompt": "write the design", "day": 1},
        {"write": f"{root}/_codev/changes/add-csv-export/design.md", "day": 1}])
    df = runs_by_change(root, sorted(logs.glob("*.jsonl")))
    assert df[["change", "phase", "sessions", "model_calls"]].values.tolist() == [
        ["add-csv-export", "design", 1, 2]]


def test_a_sub_agents_own_transcript_counts_for_its_sessions_change(tmp_path: Path) -> None:
    project = _project(tmp_path / "proj")
    logs = tmp_path / "logs"
    (logs / "s").mkdir(parents=True)
    _session(logs / "s", "sess", "main", [{"prompt": _apply("add-export"), "day": 1}])
    agent = logs / "s" / "sess" / "subagents"
    agent.mkdir(parents=True)
    line = {"sessionId": "sess", "agentId": "a1b2", "isSidechain": True, "type": "assistant",
            "timestamp": "2025-02-01T10:00:30Z", "message": {
                "id": "sub-m0", "model": "claude-haiku-4-5", "role": "assistant",
                "content": [{"type": "text", "text": "found it"}],
                "usage": {"input_tokens": 50, "output_tokens": 5}}}
    (agent / "agent-a1b2.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    runs = import_runs(logs)
    assert sorted(runs["run"].astype(str).unique()) == ["sess", "sess/a1b2"]
    init = runs[(runs["run"] == "sess/a1b2") & (runs["kind"] == "init")]["payload"].iloc[0]
    assert init["parent_run"] == "sess"
    df = runs_by_change(project, runs)
    assert df[["change", "phase", "sessions", "model_calls"]].values.tolist() == [
        ["add-export", "apply", 1, 2]]  # the session's call and its sub-agent's


@pytest.mark.parametrize("log", ["mini-swe-agent/django__django-16255.traj.json",
                                 "swe-agent", "openhands"])
def test_every_sources_model_calls_are_counted(tmp_path: Path, log: str) -> None:
    """Every importer's model calls count, one per model response of the raw file
    (an OpenHands V0 list's responses ride on its actions: 0 calls were counted)."""
    import crewbook

    path = Path(__file__).parents[1] / "data" / "agent_logs" / log
    files = (sorted(path.glob("*.traj*")) or sorted(path.glob("*.json"))) if path.is_dir() \
        else [path]
    calls = 0
    for file in files:
        raw = json.loads(file.read_text())
        if isinstance(raw, dict) and "info" not in raw:  # OpenHands' {"trajectory": [...]}
            raw = raw["trajectory"]
        if isinstance(raw, list):  # OpenHands V0: its distinct model responses
            calls += len({e["tool_call_metadata"]["model_response"]["id"] for e in raw
                          if isinstance(e.get("tool_call_metadata"), dict)
                          and isinstance(e["tool_call_metadata"].get("model_response"),
                                         dict)})
        elif "trajectory" in raw:  # SWE-agent: a step is one model response
            calls += len(raw["trajectory"])
        else:  # mini-SWE-agent: its assistant messages
            calls += sum(1 for m in raw["messages"] if m.get("role") == "assistant")
    assert calls > 0
    project = crewbook.example_project(dest=tmp_path / "tour")
    df = runs_by_change(project, [str(f) for f in files])
    assert df["model_calls"].sum() == calls
