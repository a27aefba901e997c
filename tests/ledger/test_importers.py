"""Importers on real logs (tests/data/agent_logs/<format>/): the facts each tool records
(tokens, cost, clock, exit status) come out right, each event points at its origin.

Expected figures are computed here from the raw files, independently of the importers.
The held-out samples (tests/data/agent_logs/heldout/) are used only by test_heldout.py.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crewbook import import_runs, import_speckit_runs
from crewbook.errors import LedgerError, UsageError
from crewbook.ledger.analyses import run_outcomes, timeline, usage_by_role
from crewbook.ledger.importers import SOURCES, detect, model_calls, tool_calls
from crewbook.ledger.reader import frame_events

from .conftest import SPECKIT_PROJECT
from .real_facts import v0_history

LOGS = Path(__file__).resolve().parents[1] / "data" / "agent_logs"
OPENHANDS = sorted((LOGS / "openhands").glob("*.json"))
SWE_ALL = sorted([*(LOGS / "swe-agent").glob("*.traj"),
                  *(LOGS / "swe-agent-templates").glob("*.traj"),
                  *(LOGS / "swe-agent-versions").glob("*.traj")])
#: Trajectories with a ``trajectory`` list (the history-only template has none).
SWE = [p for p in SWE_ALL if '"trajectory"' in p.read_text(encoding="utf-8")]
AIDER = sorted((LOGS / "aider").glob("*.md"))


def origin(row: pd.Series) -> dict[str, Any]:
    value: dict[str, Any] = row["payload"]["origin"]
    return value


# -- detection ------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "source"), [
    *((p, "openhands") for p in OPENHANDS), *((p, "swe-agent") for p in SWE_ALL),
    *((p, "aider") for p in AIDER)])
def test_each_sample_is_detected_from_its_content(path: Path, source: str,
                                                  tmp_path: Path) -> None:
    renamed = tmp_path / "log.txt"  # the name does not matter, the content does
    shutil.copy(path, renamed)
    assert detect(renamed) == source


def test_a_file_of_no_known_source_names_every_source_tried(tmp_path: Path) -> None:
    other = tmp_path / "notes.json"
    other.write_text('{"hello": "world"}\n', encoding="utf-8")
    with pytest.raises(LedgerError) as caught:
        import_runs(other)
    assert caught.value.codes == ["import_unknown_source"]
    message = str(caught.value)
    assert str(other) in message
    for name in SOURCES:
        assert f"{name}:" in message


def test_a_forced_source_that_does_not_fit_says_what_it_expected() -> None:
    with pytest.raises(LedgerError, match="not a SWE-agent trajectory") as caught:
        import_runs(OPENHANDS[0], source="swe-agent")
    assert caught.value.problems[0].path == str(OPENHANDS[0])
    with pytest.raises(UsageError, match="source must be"):
        import_runs(OPENHANDS[0], source="langfuse")


def test_a_bad_json_file_names_line_and_column(tmp_path: Path) -> None:
    bad = tmp_path / "run.traj"
    bad.write_text('{"trajectory": [\n  {"action": }\n]}', encoding="utf-8")
    with pytest.raises(LedgerError) as caught:
        import_runs(bad, source="swe-agent")
    problem = caught.value.problems[0]
    assert (problem.path, problem.line) == (str(bad), 2)


# -- OpenHands ------------------------------------------------------------------------


def _responses(raw: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Usage per distinct model response id, and how many events carry each."""
    seen: dict[str, dict[str, int]] = {}
    for event in raw:
        response = (event.get("tool_call_metadata") or {}).get("model_response")
        if response:
            usage = seen.setdefault(response["id"], {**response["usage"], "copies": 0})
            usage["copies"] += 1
    return seen


@pytest.mark.parametrize("path", OPENHANDS, ids=lambda p: p.stem)
def test_openhands_counts_each_model_response_once(path: Path) -> None:
    raw = v0_history(path)
    responses = _responses(raw)
    df = import_runs(path)
    calls = df[model_calls(df)]
    assert calls["tokens_in"].sum() == sum(r["prompt_tokens"] for r in responses.values())
    assert calls["tokens_out"].sum() == sum(r["completion_tokens"] for r in responses.values())
    assert calls["tokens_in"].notna().sum() == len(responses)


def test_the_openhands_samples_repeat_a_model_response() -> None:
    """What the test above checks needs a sample whose events repeat a response."""
    assert any(r["copies"] > 1 for path in OPENHANDS
               for r in _responses(v0_history(path)).values())


@pytest.mark.parametrize("path", OPENHANDS, ids=lambda p: p.stem)
def test_openhands_times_come_from_its_clock(path: Path) -> None:
    raw = v0_history(path)
    stamps = [pd.Timestamp(e["timestamp"], tz="UTC") for e in raw]
    out = run_outcomes(import_runs(path)).loc[path.stem]
    assert out["started"] == min(stamps)
    assert out["duration"] == max(stamps) - min(stamps)
    assert out["duration"] > pd.Timedelta(0)


def test_openhands_observation_durations_and_failures() -> None:
    path = LOGS / "openhands" / "basic_gui_mode.json"
    raw = {str(e["id"]): e for e in json.loads(path.read_text(encoding="utf-8"))}
    df = import_runs(path)
    reports = df[tool_calls(df)]
    assert len(reports) == sum(1 for e in raw.values() if e.get("cause") is not None)
    for _, row in reports.iterrows():
        obs = raw[str(row["payload"]["id"])]
        act = raw[str(obs["cause"])]
        expected = pd.Timestamp(obs["timestamp"]) - pd.Timestamp(act["timestamp"])
        assert row["duration_ms"] == int(expected.total_seconds() * 1000)
        assert row["stage"] == act["action"]
        assert (row["verdict"] == "failed") == (obs.get("success") is False)
    assert (reports["verdict"] == "failed").sum() == 1  # the server that timed out


def test_openhands_exit_status_is_the_finished_reason() -> None:
    df = import_runs([LOGS / "openhands"])
    outcomes = run_outcomes(df)["finished_reason"]
    assert pd.isna(outcomes.pop("issue-10730-trajectory"))
    reasons = outcomes.astype(str).to_dict()
    # wrong_initial_state, basic_interactions and the session folder (found by the walk,
    # named after its conversation) end with a finish action; basic_gui_mode rests
    # waiting for the user (its last agent_state_changed); the issue-10730 download,
    # cut while its agent was running, has no outcome (above)
    assert reasons == {"basic_gui_mode": "awaiting_user_input",
                       "basic_interactions": "finished", "wrong_initial_state": "finished",
                       "63b4315947a049e2b7a51249b3d4fcc3": "finished"}


@pytest.mark.parametrize("path", OPENHANDS, ids=lambda p: p.stem)
def test_openhands_events_point_at_their_record(path: Path) -> None:
    raw = {f"id {e['id']}": e for e in v0_history(path)}
    df = import_runs(path)
    for _, row in df[df["kind"] != "finish"].iterrows():
        where = origin(row)
        if where["record"] == "(end of list)":  # the usage of calls the list lacks
            assert row["stage"] == "usage"
            continue
        assert where["file"] == str(path)
        assert where["source"] == "openhands"
        entry = raw[where["record"]]
        assert pd.Timestamp(entry["timestamp"], tz="UTC") == row["ts"]


# -- SWE-agent -----------------------------------------------------------------------


@pytest.mark.parametrize("path", SWE, ids=lambda p: p.stem)
def test_swe_agent_totals_equal_its_model_stats(path: Path) -> None:
    raw = json.loads(path.read_text(encoding="utf-8"))
    stats = raw["info"]["model_stats"]
    out = run_outcomes(import_runs(path)).loc[path.stem]
    assert out["tokens_in"] == stats["tokens_sent"]
    assert out["tokens_out"] == stats["tokens_received"]
    assert out["cost"] == pytest.approx(stats["instance_cost"], abs=1e-12)
    assert out["finished_reason"] == raw["info"]["exit_status"]
    # acts: a model call per step and a tool call per action it ran
    assert out["acts"] == len(raw["trajectory"]) + sum(
        1 for s in raw["trajectory"] if s["action"].split())


@pytest.mark.parametrize("path", SWE, ids=lambda p: p.stem)
def test_swe_agent_has_no_clock_so_no_duration(path: Path) -> None:
    raw = json.loads(path.read_text(encoding="utf-8"))
    df = import_runs(path)
    assert df["ts"].isna().all()
    out = run_outcomes(df).loc[path.stem]
    assert pd.isna(out["started"])
    assert pd.isna(out["duration"])
    steps = df[tool_calls(df)]
    expected = [round(float(s["execution_time"]) * 1000) if "execution_time" in s else None
                for s in raw["trajectory"]]
    assert [None if pd.isna(v) else int(v) for v in steps["duration_ms"]] == expected
    assert [origin(r)["record"] for _, r in steps.iterrows()] == [
        f"trajectory[{i}]" for i in range(len(raw["trajectory"]))]
    assert list(steps["stage"]) == [s["action"].split()[0] for s in raw["trajectory"]]


@pytest.mark.parametrize("path", SWE_ALL, ids=lambda p: p.stem)
def test_swe_agent_step_is_one_model_call_then_one_tool_call(path: Path) -> None:
    """Each step (or, history only, each assistant message) is the model call that wrote
    it and the command it ran, both pointing at the step."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    where = "trajectory" if "trajectory" in raw else "history(assistant)"
    steps = raw.get("trajectory") or [m for m in raw["history"] if m["role"] == "assistant"]
    df = import_runs(path)
    work = df[model_calls(df) | tool_calls(df)]
    assert set(work["kind"]) == {"report"}
    expected: list[tuple[str, str, str]] = []
    for i, step in enumerate(steps):
        expected.append(("model", "model", f"{where}[{i}]"))
        if step["action"].split():
            expected.append(("tool", step["action"].split()[0], f"{where}[{i}]"))
    got = [("model" if m else "tool", s, origin(r)["record"]) for (_, r), m, s
           in zip(work.iterrows(), model_calls(work), work["stage"], strict=True)]
    assert got == expected
    assert (work["role"] == "agent").all()


# -- aider -----------------------------------------------------------------------------


def _aider_sessions(path: Path) -> dict[str, dict[str, Any]]:
    """Per session (by start): the last session cost, the tokens printed, the model calls
    (one ``Tokens:`` line each) and the model aider announced first."""
    sessions: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# aider chat started at "):
            current = sessions.setdefault(line[24:].replace(" ", "T"), {
                "cost": None, "sent": 0, "received": 0, "calls": 0, "model": None})
            continue
        current["calls"] += "Tokens:" in line
        announced = re.match(r"> (?:Main model|Models?): (\S+) with ", line)
        if announced and current["model"] is None:
            current["model"] = announced.group(1)
        for kind in ("sent", "received"):
            for number in re.findall(r"([\d.,]+k?) " + kind, line if "Tokens:" in line
                                     else ""):
                text = number.replace(",", "")
                current[kind] += round(float(text[:-1]) * 1000) if text.endswith("k") \
                    else int(text)
        session = re.findall(r"\$([\d.]+) session", line)
        if session:
            current["cost"] = float(session[-1])
    return sessions


@pytest.mark.parametrize("path", AIDER, ids=lambda p: p.name)
def test_aider_session_totals_equal_what_aider_printed(path: Path) -> None:
    expected = _aider_sessions(path)
    df = import_runs(path)
    outcomes = run_outcomes(df)
    prefix = path.name.split(".")[0]
    assert sorted(outcomes.index) == sorted(f"{prefix}@{s}" for s in expected)
    for start, facts in expected.items():
        out = outcomes.loc[f"{prefix}@{start}"]
        run = df[df["run"] == f"{prefix}@{start}"]
        assert (run["kind"] == "report").sum() == facts["calls"]
        assert run[run["kind"] == "init"]["payload"].iloc[0].get("model") == facts["model"]
        assert out["started"] == pd.Timestamp(start, tz="UTC")
        if facts["cost"] is None:
            assert pd.isna(out["cost"])
        else:
            assert out["cost"] == pytest.approx(facts["cost"], abs=1e-9)
        assert (0 if pd.isna(out["tokens_in"]) else out["tokens_in"]) == facts["sent"]
        assert (0 if pd.isna(out["tokens_out"]) else out["tokens_out"]) == facts["received"]
        assert pd.isna(out["finished_reason"])  # aider records no exit status
        assert pd.isna(out["duration"])  # one clock (the start): no end, never 0


@pytest.mark.parametrize("path", AIDER, ids=lambda p: p.name)
def test_aider_events_point_at_their_line(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    df = import_runs(path)
    for _, row in df.iterrows():
        text = lines[origin(row)["line"] - 1]
        if row["kind"] == "init":
            assert text.startswith("# aider chat started at")
        elif row["kind"] == "act":
            assert text.startswith("#### ")
            assert row["role"] == "user"
        elif row["kind"] == "report":
            assert not text.startswith((">", "####"))
            assert row["role"] == "assistant"
        elif row["stage"] == "end":  # the last line of a session
            after = lines[origin(row)["line"]:origin(row)["line"] + 1]
            assert after == [] or after[0].startswith("# aider chat started at")
        else:
            assert text.startswith("> ") or text.startswith("Cost: $")
            assert row["role"] == "aider"


def test_aider_rounded_token_counts_are_flagged() -> None:
    df = import_runs(LOGS / "aider" / "cache.aider.chat.history.md")
    replies = df[df["kind"] == "report"]
    flags = [p.get("tokens_rounded") for p in replies["payload"]]
    assert flags == [True] * len(replies)  # "1.6k sent"
    assert replies["tokens_in"].iloc[0] == 1600


# -- spec-kit and crewbook ledgers behind the same entry point --------------------------


def test_speckit_runs_import_through_import_runs_and_the_old_name() -> None:
    new = import_runs(SPECKIT_PROJECT)
    old = import_speckit_runs(SPECKIT_PROJECT)
    assert set(new["source"]) == {"speckit"}
    pd.testing.assert_frame_equal(new.drop(columns="source"), old)


def test_an_import_written_as_a_ledger_reads_back_with_its_sources(tmp_path: Path) -> None:
    from crewbook import read_ledger

    df = import_runs([LOGS / "openhands", LOGS / "swe-agent", LOGS / "aider"])
    out = tmp_path / "out.jsonl"
    out.write_text("".join(e.to_line() + "\n" for e in frame_events(df)), encoding="utf-8")
    back = import_runs(out)
    pd.testing.assert_frame_equal(back, df)
    plain = read_ledger(out)
    pd.testing.assert_frame_equal(plain, df.drop(columns="source"))


# -- analyses on every source -----------------------------------------------------------


@pytest.fixture(scope="module")
def every_source() -> pd.DataFrame:
    history = Path(__file__).resolve().parents[1] / "data" / "ledgers" / "history"
    crewbook = sorted(history.glob("*.jsonl"))[:1]
    return import_runs([*crewbook, LOGS / "openhands", LOGS / "swe-agent", LOGS / "aider",
                        SPECKIT_PROJECT])


def test_analyses_work_on_every_source(every_source: pd.DataFrame) -> None:
    df = every_source
    assert set(df["source"]) == {"crewbook", "openhands", "swe-agent", "aider", "speckit"}
    outcomes = run_outcomes(df)
    assert len(outcomes) == df["run"].nunique()
    usage = usage_by_role(df)
    assert usage["tokens"].sum() == df["tokens_in"].sum() + df["tokens_out"].sum() - (
        df.loc[df["role"].isna(), ["tokens_in", "tokens_out"]].sum().sum())
    spans = timeline(df)
    assert set(spans["run"]) >= set(df.loc[df["source"] == "swe-agent", "run"].astype(str))
    unclocked = spans[spans["start"].isna()]
    assert len(unclocked)
    assert unclocked["end"].isna().all()


def test_usage_by_tool_action_where_there_is_no_role() -> None:
    df = import_runs(LOGS / "swe-agent")
    by_action = usage_by_role(df, by="stage")
    steps = df[df["kind"] == "report"]
    assert by_action["acts"].sum() == len(steps)
    # the tools run, and "model" for the model calls that chose them
    assert set(by_action.index.dropna()) == {*steps["stage"].astype(str), "model"}
    assert by_action["time"].sum() == pd.to_timedelta(steps["duration_ms"].sum(), unit="ms")


def test_ledger_explorer_opens_on_every_source(every_source: pd.DataFrame) -> None:
    from crewbook.widgets import LedgerExplorer
    from crewbook.widgets.ledger_explorer import filter_events

    explorer = LedgerExplorer(every_source)
    for run in sorted(every_source["run"].astype(str).unique()):
        explorer.run_list.value = run
    assert "LedgerExplorer" in repr(explorer)
    kept = filter_events(every_source, start=pd.Timestamp("2025-01-01").date())
    assert kept["ts"].notna().all()
    assert len(kept)


# -- hostile logs: a clean LedgerError, never a crash -----------------------------------


def attempt(path: Path, source: str = "auto") -> tuple[pd.DataFrame | None, list[Any]]:
    """The frame, or the problems of the `LedgerError` (anything else propagates)."""
    try:
        return import_runs(path, source=source), []
    except LedgerError as exc:
        return None, list(exc.problems)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats()
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["id", "timestamp", "source", "action", "observation", "cause",
                         "extras", "tool_call_metadata", "model_response", "usage",
                         "prompt_tokens", "trajectory", "info", "model_stats",
                         "execution_time", "exit_status", "resourceSpans", "scopeSpans",
                         "spans", "traceId", "spanId", "parentSpanId", "attributes",
                         "startTimeUnixNano", "endTimeUnixNano", "llm_metrics",
                         "accumulated_cost"]), inner, max_size=5),
    max_leaves=25)


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=json_values, source=st.sampled_from(["auto", "openhands", "swe-agent", "otlp"]))
def test_hostile_json_gives_a_clean_error(tmp_path: Path, value: Any, source: str) -> None:
    path = tmp_path / "log.json"
    path.write_text(json.dumps(value), encoding="utf-8")
    df, problems = attempt(path, source)
    assert all(p.path for p in problems)
    assert (df is None) == bool(problems)
    if df is not None:
        assert list(df.columns)[-1] == "source"


leaves = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(
    max_size=8) | st.lists(st.integers(), max_size=2) | st.dictionaries(
    st.sampled_from(["prompt_tokens", "completion_tokens", "id", "agent_state", "usage",
                     "model_response", "accumulated_cost", "stringValue", "intValue"]),
    st.none() | st.integers(-5, 2**64) | st.text(max_size=4) | st.floats(), max_size=3)
openhands_lists = st.lists(st.fixed_dictionaries(
    {"id": leaves, "timestamp": st.one_of(leaves, st.just("2025-01-01T00:00:00")),
     "source": leaves, "action": leaves},
    optional={"observation": leaves, "cause": leaves, "extras": leaves,
              "tool_call_metadata": st.fixed_dictionaries({"model_response": leaves}),
              "llm_metrics": leaves, "message": leaves, "success": leaves}),
    min_size=1, max_size=5)
swe_trajectories = st.fixed_dictionaries(
    {"trajectory": st.lists(st.dictionaries(st.sampled_from(
        ["action", "thought", "execution_time", "observation"]), leaves), max_size=4),
     "info": st.dictionaries(st.sampled_from(["exit_status", "model_stats"]), leaves)})
otlp_documents = st.fixed_dictionaries({"resourceSpans": st.lists(st.fixed_dictionaries(
    {"resource": leaves, "scopeSpans": st.lists(st.fixed_dictionaries({"spans": st.lists(
        st.fixed_dictionaries(
            {"traceId": st.sampled_from(["t1", "t2"]), "spanId": st.sampled_from(
                ["s1", "s2", "s3"])},
            optional={"parentSpanId": st.sampled_from(["s1", "s2", "s3", "x"]),
                      "startTimeUnixNano": leaves, "endTimeUnixNano": leaves,
                      "status": leaves, "name": leaves,
                      "attributes": st.lists(st.fixed_dictionaries(
                          {"key": st.sampled_from(["gen_ai.usage.input_tokens",
                                                   "gen_ai.agent.name", "error.type",
                                                   "crewbook.kind", "crewbook.seq"]),
                           "value": leaves}), max_size=3)}),
        max_size=4)}), max_size=2)}), max_size=2)})


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.one_of(openhands_lists, swe_trajectories, otlp_documents))
def test_hostile_logs_in_the_right_shape_give_a_clean_error(tmp_path: Path,
                                                            value: Any) -> None:
    path = tmp_path / "log.json"
    path.write_text(json.dumps(value), encoding="utf-8")
    df, problems = attempt(path)
    assert all(p.path for p in problems)
    assert (df is None) == bool(problems)


aider_lines = st.lists(st.one_of(
    st.just("# aider chat started at 2024-08-06 10:53:39"),
    st.builds("#### {}".format, st.text(max_size=10)),
    st.builds("> Tokens: {} sent, {} received. Cost: ${} message, ${} session.".format,
              *[st.from_regex(r"[\d.,k]{1,6}", fullmatch=True)] * 4),
    st.builds("> {}".format, st.text(max_size=10)), st.text(max_size=20)), max_size=12)


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=aider_lines)
def test_hostile_aider_histories_give_a_clean_error(tmp_path: Path, lines: list[str]) -> None:
    path = tmp_path / "x.aider.chat.history.md"
    path.write_text("# aider chat started at 2024-08-06 10:53:39\n" + "\n".join(
        lines), encoding="utf-8")
    df, problems = attempt(path)
    assert all(p.path for p in problems)
    if df is not None:
        assert (df["kind"] == "init").sum() >= 1
