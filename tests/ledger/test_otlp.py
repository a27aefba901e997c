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
from crewbook.ledger.otlp import otlp_events, span_id, to_otlp, trace_id, write_otlp
from crewbook.ledger.reader import events_frame, frame_events

HISTORY = Path(__file__).resolve().parents[1] / "data" / "ledgers" / "history"


def attrs(span: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for item in span["attributes"]:
        (kind, value), = item["value"].items()
        out[item["key"]] = int(value) if kind == "intValue" else value
    return out


# -- out ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def crewbook_runs() -> pd.DataFrame:
    return read_ledger(sorted(HISTORY.glob("*.jsonl"))[:2])


def test_a_run_is_a_trace_and_an_event_a_span(crewbook_runs: pd.DataFrame) -> None:
    doc = to_otlp(crewbook_runs)
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert len(spans) == len(crewbook_runs)
    rows = crewbook_runs.to_dict("records")
    for span, row in zip(spans, rows, strict=True):
        a = attrs(span)
        assert span["traceId"] == trace_id(row["run"])
        assert span["spanId"] == span_id(row["run"], row["seq"])
        assert len(span["traceId"]) == 32 and len(span["spanId"]) == 16  # noqa: PT018
        assert span["name"] == (row["stage"] if isinstance(row["stage"], str) else row["kind"])
        assert a["gen_ai.conversation.id"] == row["run"]
        assert a["crewbook.kind"] == row["kind"]
        assert a["crewbook.seq"] == row["seq"]
        if isinstance(row["role"], str):
            assert a["gen_ai.agent.name"] == row["role"]
            assert a["gen_ai.operation.name"] == "invoke_agent"
        else:
            assert a["gen_ai.operation.name"] == "invoke_workflow"
        for name in ("verdict", "attempt", "version"):
            if not pd.isna(row[name]):
                assert a[f"crewbook.{name}"] == row[name]
        end = int(span["endTimeUnixNano"])
        assert end == row["ts"].value
        if not pd.isna(row["duration_ms"]):
            assert end - int(span["startTimeUnixNano"]) == row["duration_ms"] * 1_000_000
    roots = [s for s in spans if "parentSpanId" not in s]
    assert len(roots) == crewbook_runs["run"].nunique()


def test_the_export_is_reproducible(crewbook_runs: pd.DataFrame, tmp_path: Path) -> None:
    first = write_otlp(crewbook_runs, tmp_path / "a.json").read_bytes()
    second = write_otlp(crewbook_runs.iloc[::-1], tmp_path / "b.json").read_bytes()
    assert first != b""
    assert first == second.replace(b"b.json", b"a.json")


def test_an_error_event_is_an_error_span() -> None:
    event = {"ts": "2025-03-01T09:00:00Z", "run": "r", "seq": 0, "loop": "crew",
             "kind": "error", "summary": "bar timed out", "verdict": "timeout"}
    span = to_otlp([event])["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert span["status"] == {"code": 2, "message": "bar timed out"}
    assert attrs(span)["error.type"] == "timeout"


# -- back: the same events ----------------------------------------------------------------

names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
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
    path = write_otlp(models, tmp_path / "spans.json")
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
    assert list(df["kind"].astype(str)) == ["init", "report", "report", "error", "report",
                                            "finish"]
    assert df["ts"].iloc[0] == pd.Timestamp(T0, unit="s", tz="UTC")
    df = df.iloc[1:]
    assert df["tokens_in"].sum() == 300 and df["tokens_out"].sum() == 50  # noqa: PT018
    root = df.iloc[0]
    assert pd.isna(root["tokens_in"])
    assert root["payload"]["usage_rollup"] == {"tokens_in": 300, "tokens_out": 50}
    assert list(df["role"].astype(str)[:4]) == ["planner"] * 4  # inherited from the agent
    assert list(df["stage"].astype(str)[:4]) == ["invoke_agent", "chat", "get_weather", "chat"]
    error = df.iloc[2]
    assert (error["verdict"], error["duration_ms"]) == ("timeout", 2000)
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
