"""OpenTelemetry GenAI spans both ways: crewbook runs out as OTLP JSON and back unchanged
(a property test), and GenAI traces of other tools in, with usage counted once."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crewbook import import_runs, read_ledger
from crewbook.errors import LedgerError
from crewbook.ledger.events import KINDS, REQUIRED_BY_KIND, LedgerEvent
from crewbook.ledger.otlp import (
    otlp_events,
    otlp_export,
    span_id,
    to_otlp,
    trace_id,
    write_otlp,
)
from crewbook.ledger.reader import events_frame, frame_events

HISTORY = Path(__file__).resolve().parents[1] / "data" / "ledgers" / "history"


def attrs(span: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for item in span["attributes"]:
        (kind, value), = item["value"].items()
        out[item["key"]] = int(value) if kind == "intValue" else value
    return out


# -- out ---------------------------------------------------------------------------------

AGENT_LOGS = Path(__file__).resolve().parents[1] / "data" / "agent_logs"
ANCHOR = datetime(2026, 1, 5, 12, tzinfo=UTC)


@pytest.fixture(scope="module")
def crewbook_runs() -> pd.DataFrame:
    return read_ledger(sorted(HISTORY.glob("*.jsonl"))[:2])


def spans_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def times(span: dict[str, Any]) -> tuple[int, int]:
    return int(span["startTimeUnixNano"]), int(span["endTimeUnixNano"])


def kind_of(span: dict[str, Any]) -> str:
    return str(attrs(span).get("openinference.span.kind"))


def test_a_run_is_a_workflow_span_over_its_turns_and_events(
        crewbook_runs: pd.DataFrame) -> None:
    spans = spans_of(to_otlp(crewbook_runs))
    by_id = {s["spanId"]: s for s in spans}
    roots = [s for s in spans if "parentSpanId" not in s]
    assert sorted(r["traceId"] for r in roots) == sorted(
        trace_id(r) for r in crewbook_runs["run"].unique())
    for root in roots:
        assert root["name"].startswith("invoke_workflow ")
        assert kind_of(root) == "CHAIN"
        assert attrs(root)["gen_ai.operation.name"] == "invoke_workflow"
    # one span per event, ids from run and seq, the event's fields kept
    events = {s["spanId"]: s for s in spans if "crewbook.kind" in attrs(s)}
    assert len(events) == len(crewbook_runs)
    for row in crewbook_runs.to_dict("records"):
        span = events[span_id(row["run"], row["seq"])]
        a = attrs(span)
        assert (a["crewbook.kind"], a["crewbook.seq"], a["crewbook.run"]) == (
            row["kind"], row["seq"], row["run"])
        assert span["traceId"] == trace_id(row["run"])
        end = int(span["endTimeUnixNano"])
        assert end == row["ts"].value
        if not pd.isna(row["duration_ms"]):
            assert end - int(span["startTimeUnixNano"]) == row["duration_ms"] * 1_000_000
    # every parent covers its children; the root covers the whole run
    for span in spans:
        if "parentSpanId" in span:
            parent = by_id[span["parentSpanId"]]
            assert times(parent)[0] <= times(span)[0] <= times(span)[1] <= times(parent)[1]
    for root in roots:
        run = crewbook_runs[crewbook_runs["run"].map(trace_id) == root["traceId"]]
        first = (run["ts"] - pd.to_timedelta(run["duration_ms"].fillna(0).astype("int64"),
                                             unit="ms")).min()
        assert times(root) == (first.value, run["ts"].max().value)


def test_a_role_turn_is_an_agent_span_from_its_act_to_its_report(
        crewbook_runs: pd.DataFrame) -> None:
    spans = spans_of(to_otlp(crewbook_runs))
    by_id = {s["spanId"]: s for s in spans}
    turns = [s for s in spans if kind_of(s) == "AGENT"]
    acts = crewbook_runs[crewbook_runs["kind"] == "act"]
    assert len(turns) == len(acts)
    for act in acts.to_dict("records"):
        turn = by_id[span_id(act["run"], f"turn/{act['seq']}")]
        assert turn["name"] == f"invoke_agent {act['role']}"
        assert attrs(turn)["gen_ai.agent.name"] == act["role"]
        assert times(turn)[0] <= act["ts"].value
        children = [s for s in spans if s.get("parentSpanId") == turn["spanId"]]
        assert {attrs(c)["crewbook.role"] for c in children} == {act["role"]}
        assert any(attrs(c)["crewbook.kind"] in ("report", "verdict", "plan")
                   for c in children)


def test_a_model_call_is_an_llm_span_with_tokens_and_cost(
        crewbook_runs: pd.DataFrame) -> None:
    spans = spans_of(to_otlp(crewbook_runs))
    llm = [s for s in spans if kind_of(s) == "LLM"]
    spent = crewbook_runs[crewbook_runs["tokens_in"].notna() | crewbook_runs["cost"].notna()]
    assert len(llm) == len(spent) > 0
    assert sum(attrs(s)["llm.token_count.prompt"] for s in llm) == spent["tokens_in"].sum()
    assert sum(attrs(s)["gen_ai.usage.output_tokens"] for s in llm) \
        == spent["tokens_out"].sum()
    assert sum(attrs(s)["llm.cost.total"] for s in llm) == pytest.approx(spent["cost"].sum())
    assert [attrs(s)["gen_ai.usage.cost"] for s in llm] == [attrs(s)["llm.cost.total"]
                                                           for s in llm]
    for span in llm:
        a = attrs(span)
        assert span["name"] == "chat"
        assert a["gen_ai.operation.name"] == "chat"
        assert a["llm.token_count.total"] == a["llm.token_count.prompt"] \
            + a["llm.token_count.completion"]
    # tokens only on LLM spans: a viewer summing every span counts them once
    assert all("llm.token_count.prompt" not in attrs(s) for s in spans if s not in llm)


@pytest.mark.parametrize(("folder", "model", "provider"), [
    ("aider/keys.aider.chat.history.md", "claude-3-5-sonnet-20240620", "anthropic"),
    ("openhands/basic_gui_mode.json", "claude-3-5-sonnet-20241022", "anthropic"),
    ("openhands/wrong_initial_state.json", "claude-3-5-sonnet-20241022", "anthropic"),
    ("openhands/basic_interactions.json", "gpt-4o-2024-08-06", "openai")])
def test_imported_model_calls_name_their_model(folder: str, model: str, provider: str) -> None:
    df = import_runs(AGENT_LOGS / folder)
    llm = [s for s in spans_of(to_otlp(df)) if kind_of(s) == "LLM"]
    assert len(llm) == int((df["tokens_in"].notna() | df["cost"].notna()).sum()) > 0
    for span in llm:
        a = attrs(span)
        assert span["name"] == f"chat {model}"
        assert a["gen_ai.request.model"] == a["gen_ai.response.model"] == model
        assert a["llm.model_name"] == model
        assert a["gen_ai.provider.name"] == a["llm.provider"] == provider
    assert sum(attrs(s).get("llm.token_count.prompt", 0) for s in llm) == df["tokens_in"].sum()


def test_tool_calls_are_tool_spans() -> None:
    df = import_runs(AGENT_LOGS / "swe-agent")
    spans = spans_of(to_otlp(df, clockless_at=ANCHOR))
    tools = [s for s in spans if kind_of(s) == "TOOL"]
    steps = df[df["payload"].map(lambda p: "action" in p)]
    assert [s["name"] for s in tools] == [f"execute_tool {t}" for t in steps["stage"]]
    assert [attrs(s)["gen_ai.tool.name"] for s in tools] == list(steps["stage"])
    assert [times(s)[1] - times(s)[0] for s in tools] == [
        d * 1_000_000 for d in steps["duration_ms"]]


def test_a_run_without_a_clock_is_left_out_unless_placed() -> None:
    df = import_runs(AGENT_LOGS / "swe-agent")
    assert df["ts"].isna().all()
    left = otlp_export(df)
    assert (left.traces, left.spans, left.left_out) == (0, 0, list(df["run"].unique()))
    placed = otlp_export(df, clockless_at=ANCHOR)
    assert (placed.traces, placed.placed, placed.left_out) == (1, len(df), [])
    spans = spans_of(placed.document)
    start = _nanos(ANCHOR)
    root = next(s for s in spans if "parentSpanId" not in s)
    # placed one after the other from the anchor: the run lasts the sum of its steps
    assert times(root) == (start, start + int(df["duration_ms"].sum()) * 1_000_000)
    assert all(attrs(s)["crewbook.time_placed"] is True for s in spans)


def test_events_without_a_clock_are_placed_after_the_runs_last_time() -> None:
    df = import_runs(AGENT_LOGS / "aider")
    doc = otlp_export(df)
    assert doc.left_out == []
    assert doc.placed == int(df["ts"].isna().sum()) > 0
    starts = df.groupby("run")["ts"].min()
    for span in spans_of(doc.document):
        run = next(r for r in starts.index if trace_id(r) == span["traceId"])
        assert times(span)[0] >= starts[run].value  # never 1970, never before the run
        if "crewbook.kind" in attrs(span):
            assert ("crewbook.time_placed" in attrs(span)) == (
                "crewbook.ts" not in attrs(span))


def _nanos(ts: datetime) -> int:
    return int(pd.Timestamp(ts).value)


@pytest.mark.parametrize(("kind", "verdict", "code"), [
    ("bar", "fail", 2), ("bar", "pass", 0), ("verdict", "no-go", 2), ("verdict", "go", 0),
    ("error", "timeout", 2)])
def test_a_failed_bar_or_a_no_go_verdict_is_an_error_span(kind: str, verdict: str,
                                                           code: int) -> None:
    event = {"ts": "2025-03-01T09:00:00Z", "run": "r", "seq": 0, "loop": "crew",
             "kind": kind, "role": "qa", "stage": "verify", "summary": "tests fail",
             "verdict": verdict}
    span = next(s for s in spans_of(to_otlp([event])) if "crewbook.kind" in attrs(s))
    assert span["status"]["code"] == code
    if code:
        assert span["status"]["message"] == "tests fail"
        assert attrs(span)["error.type"] == verdict
    assert kind_of(span) == ("CHAIN" if kind == "error" else "EVALUATOR")


@pytest.mark.parametrize(("verdict", "code"), [("scope_covered", 1), ("failed", 2),
                                               (None, 0)])
def test_the_run_span_has_the_runs_outcome(verdict: str | None, code: int) -> None:
    events: list[dict[str, Any]] = [{"ts": "2025-03-01T09:00:00Z", "run": "r", "seq": 0,
                                     "loop": "crew", "kind": "init"}]
    if verdict:
        events.append({"ts": "2025-03-01T09:05:00Z", "run": "r", "seq": 1, "loop": "crew",
                       "kind": "finish", "verdict": verdict})
    root = next(s for s in spans_of(to_otlp(events)) if "parentSpanId" not in s)
    assert root["status"]["code"] == code
    assert ("error.type" in attrs(root)) == (code == 2)


def test_long_texts_are_input_and_output_values_within_a_cap() -> None:
    prompt, summary = "p" * 50_000, "s" * 9_000
    event = {"ts": "2025-03-01T09:00:00Z", "run": "r", "seq": 0, "loop": "crew",
             "kind": "report", "role": "developer", "stage": "build" * 40,
             "summary": summary, "payload": {"prompt": prompt}}
    span = next(s for s in spans_of(to_otlp([event])) if "crewbook.kind" in attrs(s))
    a = attrs(span)
    assert a["input.value"].startswith("p" * 100)
    assert len(a["input.value"]) < 4100
    assert "46,000 more characters" in a["input.value"]
    assert len(a["output.value"]) < 4100
    assert "5,000 more characters" in a["output.value"]
    assert len(span["name"]) <= 64
    assert json.loads(a["crewbook.payload"]) == {"prompt": prompt}  # kept whole: round trip


def test_the_export_is_reproducible(crewbook_runs: pd.DataFrame, tmp_path: Path) -> None:
    first = write_otlp(crewbook_runs, tmp_path / "a.json").read_bytes()
    second = write_otlp(crewbook_runs.iloc[::-1], tmp_path / "b.json").read_bytes()
    assert first != b""
    assert first == second


def test_the_phoenix_project_is_a_resource_attribute(crewbook_runs: pd.DataFrame) -> None:
    doc = to_otlp(crewbook_runs, project="crew runs")
    resource = doc["resourceSpans"][0]["resource"]["attributes"]
    assert {"key": "openinference.project.name",
            "value": {"stringValue": "crew runs"}} in resource


# -- back: the same events ----------------------------------------------------------------

names = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1,
                max_size=8)
counts = st.none() | st.integers(0, 2**40)


@st.composite
def ledgers(draw: st.DrawFn) -> list[dict[str, Any]]:
    events = []
    for r in range(draw(st.integers(1, 3))):
        run = f"run-{r}-" + draw(names)
        for seq in range(draw(st.integers(1, 6))):
            kind = draw(st.sampled_from(KINDS))
            event: dict[str, Any] = {
                "run": run, "seq": seq, "loop": draw(st.sampled_from(["crew", "pipeline"])),
                "kind": kind,
                "ts": draw(st.none() | st.datetimes(
                    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1),
                    timezones=st.just(UTC))),
                "role": draw(st.none() | names), "stage": draw(st.none() | names),
                "verdict": draw(st.none() | names), "summary": draw(st.none() | names),
                "attempt": draw(st.none() | st.integers(1, 50)),
                "version": draw(counts), "tokens_in": draw(counts), "tokens_out": draw(counts),
                "cost": draw(st.none() | st.floats(0, 1e6, allow_nan=False)),
                "duration_ms": draw(st.none() | st.integers(0, 10**9)),
                "payload": draw(st.dictionaries(names, st.none() | st.integers(-5, 5) | names,
                                                max_size=3)),
            }
            for need in REQUIRED_BY_KIND[kind]:
                event[need] = event[need] or "x"
            if event["ts"] is not None and event["duration_ms"] is not None:
                # a span cannot start before 1970
                event["ts"] = max(event["ts"], datetime(1970, 1, 1, tzinfo=UTC) + timedelta(
                    milliseconds=event["duration_ms"]))
            events.append(event)
    return events


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(ledgers())
def test_importing_an_export_gives_back_the_same_events(tmp_path: Path,
                                                        events: list[dict[str, Any]]) -> None:
    models = [LedgerEvent.model_validate(e) for e in events]
    path = write_otlp(models, tmp_path / "spans.json", clockless_at=ANCHOR)
    assert otlp_events(path, str(path)) == sorted(models, key=lambda e: (e.run, e.seq))


def test_a_ledger_round_trips_through_otlp(crewbook_runs: pd.DataFrame,
                                           tmp_path: Path) -> None:
    back = import_runs(write_otlp(crewbook_runs, tmp_path / "spans.json"))
    pd.testing.assert_frame_equal(back.drop(columns="source"), crewbook_runs)


# -- in: other tools' GenAI traces ----------------------------------------------------------


def _span(sid: str, name: str, start: int, end: int, parent: str | None = None,
          status: int = 0, **attributes: Any) -> dict[str, Any]:
    span: dict[str, Any] = {
        "traceId": "5b8efff798038103d269b633813fc60c", "spanId": sid, "name": name,
        "kind": 3, "startTimeUnixNano": str(start * 10**9),
        "endTimeUnixNano": str(end * 10**9), "status": {"code": status},
        "attributes": [
            {"key": k.replace("__", "."), "value": {"intValue": str(v)} if isinstance(v, int)
             else {"stringValue": v}} for k, v in attributes.items()]}
    if parent:
        span["parentSpanId"] = parent
    return span


T0 = 1_735_689_600  # 2025-01-01T00:00:00Z

#: A trace shaped as the GenAI conventions describe: an invoke_agent span whose usage
#: sums its two chat spans, and a tool call that failed.
GENAI_TRACE = {"resourceSpans": [{
    "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "travel"}}]},
    "scopeSpans": [{"scope": {"name": "agent-sdk"}, "spans": [
        _span("a000000000000001", "invoke_agent planner", T0, T0 + 30, None, 1,
              gen_ai__operation__name="invoke_agent", gen_ai__agent__name="planner",
              gen_ai__usage__input_tokens=300, gen_ai__usage__output_tokens=50),
        _span("a000000000000002", "chat gpt-4o", T0 + 1, T0 + 5, "a000000000000001",
              gen_ai__operation__name="chat", gen_ai__request__model="gpt-4o",
              gen_ai__usage__input_tokens=100, gen_ai__usage__output_tokens=20),
        _span("a000000000000003", "execute_tool get_weather", T0 + 6, T0 + 8,
              "a000000000000001", 2, gen_ai__operation__name="execute_tool",
              gen_ai__tool__name="get_weather", error__type="timeout"),
        _span("a000000000000004", "chat gpt-4o", T0 + 9, T0 + 29, "a000000000000001",
              gen_ai__operation__name="chat", gen_ai__usage__input_tokens=200,
              gen_ai__usage__output_tokens=30),
    ]}]}]}


def test_genai_spans_import_with_usage_counted_once(tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(GENAI_TRACE), encoding="utf-8")
    df = import_runs(path)
    # the failed tool span is a tool call that failed, not an error event
    assert list(df["kind"].astype(str)) == ["init", "report", "report", "report", "report",
                                            "finish"]
    assert df["ts"].iloc[0] == pd.Timestamp(T0, unit="s", tz="UTC")
    df = df.iloc[1:]
    assert df["tokens_in"].sum() == 300 and df["tokens_out"].sum() == 50  # noqa: PT018
    root = df.iloc[0]
    assert pd.isna(root["tokens_in"])
    assert root["payload"]["usage_rollup"] == {"tokens_in": 300, "tokens_out": 50}
    assert list(df["role"].astype(str)[:4]) == ["planner"] * 4  # inherited from the agent
    # a chat span is a model call (stage model, its operation kept in the payload)
    assert list(df["stage"].astype(str)[:4]) == ["invoke_agent", "model", "get_weather",
                                                 "model"]
    assert df["payload"].iloc[1]["operation"] == "chat"
    failed = df.iloc[2]
    assert (failed["verdict"], failed["duration_ms"]) == ("error", 2000)
    assert (failed["payload"]["tool"], failed["payload"]["error_type"]) == (
        "get_weather", "timeout")
    assert df.iloc[-1]["verdict"] == "ok"  # the root span's status
    assert df.iloc[-1]["ts"] == pd.Timestamp(T0 + 30, unit="s", tz="UTC")
    assert df["payload"].iloc[1]["origin"] == {
        "source": "otlp", "file": str(path), "record": "span a000000000000002"}
    assert set(df["loop"]) == {"travel"}


def test_otlp_json_lines_are_read_too(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps(GENAI_TRACE) + "\n" + json.dumps(GENAI_TRACE).replace(
        "5b8efff798038103d269b633813fc60c", "0af7651916cd43dd8448eb211c80319c") + "\n",
        encoding="utf-8")
    assert import_runs(path)["run"].nunique() == 2


def test_a_span_without_ids_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [
        {"name": "x"}]}]}]}), encoding="utf-8")
    with pytest.raises(LedgerError, match="traceId and spanId"):
        import_runs(path)


def test_a_frame_back_from_events(crewbook_runs: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(events_frame(frame_events(crewbook_runs)), crewbook_runs)
