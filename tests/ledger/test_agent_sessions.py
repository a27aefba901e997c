"""Claude Code transcripts and Codex rollouts (tests/data/agent_logs/claude-code/ and
codex/, real files from public repositories): every fact the importer gives equals the
one counted from the raw file by `agent_facts`, and every event points at its origin."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crewbook import import_runs
from crewbook.errors import LedgerError
from crewbook.ledger.analyses import run_outcomes
from crewbook.ledger.importers import (
    detect,
    import_events,
    model_calls,
    tool_calls,
    unknown_types,
)
from crewbook.ledger.prices import ESTIMATE_KEY

from .agent_facts import Facts, claude_facts, codex_facts, gemini_facts

LOGS = Path(__file__).resolve().parents[1] / "data" / "agent_logs"
CLAUDE = sorted((LOGS / "claude-code").glob("*.jsonl"))
CODEX = sorted((LOGS / "codex").glob("*.jsonl"))
GEMINI = sorted((LOGS / "gemini-cli").glob("session-*"))


def _check(path: Path, facts: Facts, source: str) -> pd.DataFrame:
    df = import_runs(path)
    assert set(df["source"]) == {source}
    assert df["run"].nunique() == 1
    calls = df[model_calls(df)]
    assert len(calls) == facts.calls
    assert int(calls["tokens_in"].fillna(0).sum()) == facts.tokens_in
    assert int(calls["tokens_out"].fillna(0).sum()) == facts.tokens_out
    tools = df[tool_calls(df)]
    assert len(tools) == facts.tools
    assert (tools["stage"] == tools["payload"].map(lambda p: p["tool"])).all()
    out = run_outcomes(df).iloc[0]
    assert out["started"] == facts.first
    assert out["ended"] == facts.last
    models = {p.get("model") for p in calls["payload"] if p.get("model")}
    assert models == facts.models
    if facts.cost is None:
        assert pd.isna(out["cost"])  # unknown, never a silent 0
    else:
        assert out["cost"] == pytest.approx(float(facts.cost), rel=1e-9)
    # every line of the file is reachable from an event (none dropped)
    lines = {p["origin"].get("line") for p in df["payload"]}
    skipped = sum(facts.skipped.values())
    assert len(lines - {None}) >= facts.lines - skipped - facts.tools - 2 * facts.calls
    # the lines skipped as repeats are counted by type on the finish, none as unknown
    finish = df[df["kind"] == "finish"]["payload"].iloc[-1]
    assert finish.get("skipped_lines", {}) == facts.skipped
    assert not set(facts.skipped) & {k.split(":", 1)[1] for k in unknown_types(df)}
    stages = df["stage"].dropna().astype(str)
    assert stages.str.len().max() <= 80  # a short name, never a dump
    return df


@pytest.mark.parametrize("path", CLAUDE, ids=lambda p: p.stem)
def test_claude_code_facts_equal_the_raw_count(path: Path) -> None:
    assert detect(path) == "claude-code"
    df = _check(path, claude_facts(path), "claude-code")
    assert df[df["kind"] == "finish"]["verdict"].tolist() == ["session_end"]


@pytest.mark.parametrize("path", CODEX, ids=lambda p: p.stem)
def test_codex_facts_equal_the_raw_count(path: Path) -> None:
    assert detect(path) == "codex"
    df = _check(path, codex_facts(path), "codex")
    records = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
    events = [r["payload"].get("type") for r in records if r.get("type") == "event_msg"
              and r["payload"].get("type") != "token_count"]
    outcome = "task_complete" if events and events[-1] == "task_complete" else "session_end"
    assert df[df["kind"] == "finish"]["verdict"].tolist() == [outcome]


@pytest.mark.parametrize("path", GEMINI, ids=lambda p: p.stem)
def test_gemini_cli_facts_equal_the_raw_count(path: Path) -> None:
    assert detect(path) == "gemini-cli"
    df = _check(path, gemini_facts(path), "gemini-cli")
    assert df[df["kind"] == "finish"]["verdict"].tolist() == ["session_end"]
    first = path.read_text(encoding="utf-8").split("\n", 1)[0]
    head = json.loads(first) if path.suffix == ".jsonl" else json.loads(path.read_text(
        encoding="utf-8"))
    assert df["run"].unique().tolist() == [head["sessionId"]]  # one run per session


def _gemini_tool_times(path: Path) -> list[tuple[str, str | None]]:
    """(reply timestamp, tool call timestamp or None) of each tool call, in file order,
    from the raw session (a JSON Lines message's last copy, at its first place)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        by_id: dict[str, dict[str, Any]] = {}
        for line in text.splitlines()[1:]:
            record = json.loads(line) if line.strip() else {}
            if "type" in record:
                by_id[record["id"]] = record
        messages = list(by_id.values())
    else:
        messages = json.loads(text)["messages"]
    return [(m["timestamp"], c.get("timestamp")) for m in messages
            for c in m.get("toolCalls", [])]


@pytest.mark.parametrize("path", GEMINI, ids=lambda p: p.stem)
def test_gemini_cli_tool_call_duration_runs_from_its_reply_to_its_result(path: Path) -> None:
    raw = _gemini_tool_times(path)
    df = import_runs(path)
    tools = df[tool_calls(df)]
    assert len(tools) == len(raw)
    for (asked, done), got in zip(raw, tools["duration_ms"], strict=True):
        if done is None:
            assert pd.isna(got)
        else:
            want = (pd.Timestamp(done) - pd.Timestamp(asked)) / pd.Timedelta(milliseconds=1)
            assert got == round(want)


def test_gemini_cli_durations_are_measured_on_the_samples() -> None:
    """The samples with tool calls time them: the check above compares real durations."""
    timed = [d for path in GEMINI for _, d in _gemini_tool_times(path) if d is not None]
    assert len(timed) >= 10


def test_a_gemini_cli_tool_call_without_its_time_has_no_duration(tmp_path: Path) -> None:
    session = {"sessionId": "s2", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z",
               "lastUpdated": "2026-01-01T00:00:09Z", "messages": [
                   {"id": "g", "timestamp": "2026-01-01T00:00:02Z", "type": "gemini",
                    "content": "", "model": "gemini-2.5-pro",
                    "toolCalls": [{"id": "a", "name": "glob", "status": "success"},
                                  {"id": "b", "name": "glob", "status": "success",
                                   "timestamp": "2026-01-01T00:00:01Z"}]}]}
    path = tmp_path / "session.json"
    path.write_text(json.dumps(session), encoding="utf-8")
    df = import_runs(path)
    tools = df[tool_calls(df)]
    assert tools["duration_ms"].isna().all()  # no time; a result before its reply
    assert tools["ts"].iloc[0] == pd.Timestamp("2026-01-01T00:00:02Z")


def test_gemini_cli_lines_keep_the_last_copy_of_a_message_at_its_first_place(
        tmp_path: Path) -> None:
    """The JSON Lines form writes a message again when its tool calls finish: one model
    call, with the tool calls of the last copy, and `$set` moves the session's end."""
    lines = [
        {"sessionId": "s1", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z",
         "lastUpdated": "2026-01-01T00:00:00Z", "kind": "main"},
        {"id": "u", "timestamp": "2026-01-01T00:00:01Z", "type": "user",
         "content": [{"text": "/plan add-export"}]},
        {"id": "g", "timestamp": "2026-01-01T00:00:02Z", "type": "gemini", "content": "",
         "model": "gemini-2.5-pro", "tokens": {"input": 10, "output": 1, "cached": 0,
                                                "thoughts": 2, "tool": 0, "total": 13}},
        {"id": "w", "timestamp": "2026-01-01T00:00:03Z", "type": "brand-new", "content": ""},
        {"id": "g", "timestamp": "2026-01-01T00:00:02Z", "type": "gemini", "content": "",
         "model": "gemini-2.5-pro", "tokens": {"input": 10, "output": 1, "cached": 0,
                                                "thoughts": 2, "tool": 0, "total": 13},
         "toolCalls": [{"id": "c", "name": "read_file", "status": "error",
                        "timestamp": "2026-01-01T00:00:04Z"}]},
        {"$set": {"lastUpdated": "2026-01-01T00:00:09Z"}},
    ]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    df = import_runs(path)
    work = df[df["kind"] != "init"]
    assert work["kind"].tolist() == ["act", "report", "report", "note", "finish"]
    assert work["stage"].tolist()[:4] == ["/plan", "model", "read_file", "brand-new"]
    call = work.iloc[1]
    assert (call["tokens_in"], call["tokens_out"]) == (10, 3)
    assert [p["origin"].get("line") for p in work["payload"]][:4] == [2, 5, 5, 4]
    assert work.iloc[2]["verdict"] == "error"
    assert unknown_types(df) == {"gemini-cli:brand-new": 1}
    assert run_outcomes(df).iloc[0]["ended"] == pd.Timestamp("2026-01-01T00:00:09Z")


def test_gemini_cli_refuses_what_is_not_a_session() -> None:
    with pytest.raises(LedgerError, match="not a Gemini CLI session"):
        import_events(CLAUDE[0], "gemini-cli")
    with pytest.raises(LedgerError, match="not a Gemini CLI session"):
        import_events(LOGS / "mini-swe-agent" / "django__django-16255.traj.json", "gemini-cli")


def test_claude_code_counts_a_reply_once_though_each_block_repeats_its_usage() -> None:
    path = LOGS / "claude-code" / "sidechain_integrated.jsonl"
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    repeated = [x for x in lines if x["message"].get("id") == "msg_017zj75dqWUNqVxCUrhqbTkf"]
    assert len(repeated) == 2  # the sample has one reply written on two lines
    df = import_runs(path)
    calls = df[df["stage"] == "model"]
    sub = calls[calls["role"] == "subagent"]
    usage = repeated[0]["message"]["usage"]
    assert len(sub) == 1
    assert sub["tokens_in"].iloc[0] == (usage["input_tokens"] + usage["cache_read_input_tokens"]
                                        + usage["cache_creation_input_tokens"])
    assert sub["tokens_out"].iloc[0] == usage["output_tokens"]
    grep = df[df["stage"] == "Grep"]
    assert grep["role"].tolist() == ["subagent"]  # the sidechain's tool call


def test_claude_code_tool_call_duration_runs_from_use_to_result() -> None:
    path = LOGS / "claude-code" / "sidechain_integrated.jsonl"
    df = import_runs(path)
    task = df[df["stage"] == "Task"].iloc[0]
    started = pd.Timestamp("2025-11-19T22:53:34.908Z")
    ended = pd.Timestamp("2025-11-19T22:55:34.463Z")
    assert task["duration_ms"] == round((ended - started).total_seconds() * 1000)
    assert task["verdict"] == "done"


def test_claude_code_slash_command_is_the_stage_and_its_argument_is_kept(tmp_path: Path) -> None:
    base = {"sessionId": "s1", "cwd": "/p", "gitBranch": "add-export", "version": "2.0.1"}
    text = ("<command-message>openspec:apply</command-message>\n<command-name>/openspec:apply"
            "</command-name>\n<command-args>add-export</command-args>")
    path = tmp_path / "s1.jsonl"
    path.write_text("\n".join(json.dumps({**base, **rec}) for rec in [
        {"type": "user", "timestamp": "2025-01-01T00:00:00Z",
         "message": {"role": "user", "content": text}},
        {"type": "user", "timestamp": "2025-01-01T00:00:01Z",
         "message": {"role": "user", "content": "/opsx:archive add-export now"}},
    ]) + "\n", encoding="utf-8")
    df = import_runs(path)
    prompts = df[(df["kind"] == "act") & (df["role"] == "user")]
    assert prompts["stage"].tolist() == ["/openspec:apply", "/opsx:archive"]
    assert [p["args"] for p in prompts["payload"]] == ["add-export", "add-export now"]
    init = df[df["kind"] == "init"].iloc[0]["payload"]
    assert (init["git_branch"], init["cwd"]) == ("add-export", "/p")


def test_unknown_line_types_are_kept_with_their_origin(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"type":"user","sessionId":"s","timestamp":"2025-01-01T00:00:00Z",'
        '"message":{"role":"user","content":"hi"}}\n'
        '{"type":"brand-new-thing","sessionId":"s","timestamp":"2025-01-01T00:00:02Z"}\n'
        '"a bare string"\n', encoding="utf-8")
    df = import_runs(path)
    kept = df[df["stage"].isin(["brand-new-thing", "json"])]
    assert sorted(p["origin"]["line"] for p in kept["payload"]) == [2, 3]
    # kept as the ledger's catch-all kind, marked, and counted
    assert set(kept["kind"]) == {"note"}
    assert unknown_types(df) == {"claude-code:brand-new-thing": 1, "claude-code:json": 1}


def test_codex_unknown_line_and_event_types_are_kept_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [
        {"timestamp": "2025-01-01T00:00:00Z", "type": "session_meta",
         "payload": {"id": "x", "cwd": "/p", "cli_version": "0.1"}},
        {"timestamp": "2025-01-01T00:00:01Z", "type": "brand_new", "payload": {"a": 1}},
        {"timestamp": "2025-01-01T00:00:02Z", "type": "event_msg",
         "payload": {"type": "novel_event"}},
    ]) + "\n", encoding="utf-8")
    df = import_runs(path)
    kept = df[df["payload"].map(lambda p: "unknown_type" in p)]
    assert [(p["unknown_type"], p["origin"]["line"]) for p in kept["payload"]] == [
        ("brand_new", 2), ("novel_event", 3)]
    assert set(kept["kind"]) == {"note"}
    assert unknown_types(df) == {"codex:brand_new": 1, "codex:novel_event": 1}


def test_a_line_that_is_not_json_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"type":"user","sessionId":"s","message":{"role":"user","content":"x"}}\n'
                    '{"type": "assistant", oops\n', encoding="utf-8")
    with pytest.raises(LedgerError) as info:
        import_events(path, "claude-code")
    (problem,) = info.value.problems
    assert (problem.line, problem.path) == (2, str(path))
    assert "not JSON" in problem.message


@pytest.mark.parametrize("source", ["claude-code", "codex"])
def test_from_x_refuses_content_that_is_not_x(source: str) -> None:
    other = CODEX[0] if source == "claude-code" else CLAUDE[0]
    expected = "Claude Code session transcript" if source == "claude-code" \
        else "Codex CLI rollout"
    looks = "codex" if source == "claude-code" else "claude-code"
    with pytest.raises(LedgerError, match=f"not a {expected}.*it looks like {looks}"):
        import_events(other, source)


def test_cost_is_estimated_and_marked_or_marked_unpriced() -> None:
    df = import_runs([*CODEX, *CLAUDE])
    tokens = df["tokens_in"].fillna(0) + df["tokens_out"].fillna(0)
    calls = df[(df["stage"] == "model") & (tokens > 0)]
    for _, row in calls.iterrows():
        note = row["payload"][ESTIMATE_KEY]
        if pd.isna(row["cost"]):
            assert note["status"] == "unpriced"
            assert note["reason"]
        else:
            assert note["by"].startswith("genai-prices ")
            assert note["model"]


def test_unpriced_note_does_not_depend_on_file_order() -> None:
    golden = LOGS / "codex" / "agent-history-codex-golden.jsonl"
    compact = LOGS / "codex" / "agent-history-session-with-compaction.jsonl"
    a = import_runs([golden, compact])
    b = import_runs([compact, golden])
    notes_a = sorted(json.dumps(p[ESTIMATE_KEY]) for p in a["payload"] if ESTIMATE_KEY in p)
    notes_b = sorted(json.dumps(p[ESTIMATE_KEY]) for p in b["payload"] if ESTIMATE_KEY in p)
    assert notes_a == notes_b


def test_a_folder_parsed_in_many_chunks_gives_the_same_frame(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import crewbook.ledger.importers as importers

    whole = import_runs([*CLAUDE, *CODEX])
    monkeypatch.setattr(importers, "_CHUNK", 1)  # one Arrow part per file
    pd.testing.assert_frame_equal(import_runs([*CLAUDE, *CODEX]), whole)


def test_a_transcript_starting_with_many_snapshots_is_still_recognised(tmp_path: Path) -> None:
    path = tmp_path / "log.txt"
    snapshots = [json.dumps({"type": "file-history-snapshot", "messageId": f"m{n}",
                             "snapshot": {}}) for n in range(60)]
    path.write_text("\n".join([*snapshots, CLAUDE[0].read_text(encoding="utf-8")]),
                    encoding="utf-8")
    assert detect(path) == "claude-code"


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**6) | st.text(max_size=8)
    | st.sampled_from(["user", "assistant", "summary", "session_meta", "response_item",
                       "event_msg", "token_count", "function_call", "function_call_output",
                       "message", "turn_context", "tool_use", "tool_result", "text",
                       "2025-01-01T00:00:00Z", "gemini", "info", "error"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["type", "message", "usage", "content", "id", "timestamp",
                         "sessionId", "payload", "info", "total_token_usage", "name",
                         "call_id", "isSidechain", "input_tokens", "model", "role",
                         "tool_use_id", "last_token_usage", "output", "arguments",
                         "agentId", "costUSD", "git", "toolCalls", "tokens", "$set",
                         "status", "projectHash", "lastUpdated"]), inner,
        max_size=6),
    max_leaves=20)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(_JSON, min_size=1, max_size=6),
       source=st.sampled_from(["claude-code", "codex", "gemini-cli"]))
def test_any_json_lines_import_or_fail_with_a_located_error(
        tmp_path: Path, records: list[Any], source: str) -> None:
    path = tmp_path / "log.jsonl"
    head = {"claude-code": {"type": "user", "sessionId": "s",
                            "message": {"role": "user", "content": "x"}},
            "codex": {"type": "session_meta", "payload": {"id": "s"}},
            "gemini-cli": {"sessionId": "s", "projectHash": "h"}}[source]
    path.write_text("\n".join(json.dumps(r) for r in [head, *records]) + "\n",
                    encoding="utf-8")
    problems: list[Any] = []
    events: list[Any] = []
    try:
        _, events = import_events(path, source)
    except LedgerError as exc:  # the only error allowed: it names the file
        problems = list(exc.problems)
    assert all(p.path == str(path) for p in problems)
    assert [e.seq for e in events] == list(range(len(events)))


@pytest.mark.parametrize("source", ["claude-code", "codex", "gemini-cli"])
def test_a_path_that_cannot_be_read_is_a_located_error(tmp_path: Path, source: str) -> None:
    folder = tmp_path / "not-a-file.jsonl"
    folder.mkdir()
    with pytest.raises(LedgerError) as info:
        import_events(folder, source)
    (problem,) = info.value.problems
    assert problem.path == str(folder)
    assert "cannot read it" in problem.message


def test_claude_code_unknown_types_are_only_the_truly_unknown() -> None:
    """Across the real transcripts, the unknown-types report names only lines no Claude
    Code version writes: a line that is not an object, a line without a type (both in
    edge_cases.jsonl); the progress and last-prompt lines are known repeats, skipped."""
    raw: dict[str, int] = {}
    for path in CLAUDE:
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if not isinstance(record, dict):
                raw["json"] = raw.get("json", 0) + 1
            elif "type" not in record:
                raw["unknown"] = raw.get("unknown", 0) + 1
    df = import_runs(CLAUDE)  # the transcripts, not the folder's PROVENANCE.md
    assert unknown_types(df) == {f"claude-code:{k}": n for k, n in sorted(raw.items())}
