"""OTLP import: what OpenInference instrumentations and Phoenix write, what crewbook
writes, and hostile shapes (nesting too deep to parse, parent chains 40,000 deep)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from crewbook import import_runs, read_ledger
from crewbook.errors import LedgerError
from crewbook.ledger import otlp
from crewbook.ledger.otlp_export import write_otlp

HISTORY = Path(__file__).resolve().parents[1] / "data" / "ledgers" / "history"
T0 = 1_735_689_600 * 10**9  # 2025-01-01T00:00:00Z in ns
TRACE = "7d3f1a2b4c5d6e7f8091a2b3c4d5e6f7"


def _value(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    return {"stringValue": v}


def span(sid: str, name: str, start_ms: int, end_ms: int, parent: str | None = None,
         **attributes: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": TRACE, "spanId": sid, "name": name,
        "startTimeUnixNano": str(T0 + start_ms * 10**6),
        "endTimeUnixNano": str(T0 + end_ms * 10**6), "status": {"code": 0},
        "attributes": [{"key": k, "value": _value(v)} for k, v in attributes.items()]}
    if parent:
        out["parentSpanId"] = parent
    return out


def document(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name",
                                     "value": {"stringValue": "support-bot"}}]},
        "scopeSpans": [{"scope": {"name": "openinference.instrumentation.openai"},
                        "spans": spans}]}]}


#: What an OpenInference instrumentation writes (attribute names from
#: Arize-ai/openinference's semantic conventions): an AGENT span over an LLM call and
#: a TOOL call, with no gen_ai.* attribute at all.
OPENINFERENCE = document([
    span("b000000000000001", "support agent", 0, 9000, None,
         **{"openinference.span.kind": "AGENT", "agent.name": "support",
            "input.value": "where is my order?"}),
    span("b000000000000002", "ChatCompletion", 100, 2100, "b000000000000001",
         **{"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini",
            "llm.provider": "openai", "llm.token_count.prompt": 812,
            "llm.token_count.completion": 64, "llm.token_count.total": 876,
            "llm.cost.total": 0.00016}),
    span("b000000000000003", "lookup_order", 2200, 2500, "b000000000000001",
         **{"openinference.span.kind": "TOOL", "tool.name": "lookup_order"}),
])


def test_openinference_spans_import_with_model_tokens_cost_and_agent(
        tmp_path: Path) -> None:
    path = tmp_path / "phoenix.json"
    path.write_text(json.dumps(OPENINFERENCE), encoding="utf-8")
    df = import_runs(path)
    rows = df[df["kind"] == "report"].reset_index(drop=True)
    assert list(rows["stage"]) == ["agent", "model", "lookup_order"]  # LLM: a model call
    assert rows.iloc[2]["payload"]["tool"] == "lookup_order"
    assert list(rows["role"]) == ["support"] * 3  # agent.name, inherited by the children
    llm = rows.iloc[1]
    assert (llm["tokens_in"], llm["tokens_out"], llm["cost"]) == (812, 64, 0.00016)
    assert llm["payload"]["model"] == "gpt-4o-mini"
    assert llm["payload"]["span_kind"] == "LLM"
    assert llm["duration_ms"] == 2000
    assert df["tokens_in"].sum() == 812  # counted once: the agent span carries none


def test_openinference_usage_on_a_parent_is_not_counted_twice(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(OPENINFERENCE))
    root = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    root["attributes"].append({"key": "llm.token_count.prompt", "value": {"intValue": "812"}})
    path = tmp_path / "phoenix.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    df = import_runs(path)
    assert df["tokens_in"].sum() == 812
    agent = df[df["stage"] == "agent"].iloc[0]
    assert agent["payload"]["usage_rollup"] == {"tokens_in": 812}


def test_a_cost_under_the_genai_name_is_read(tmp_path: Path) -> None:
    doc = document([span("e000000000000001", "chat gpt-4o", 0, 10, None, **{
        "gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 5,
        "gen_ai.usage.cost": 0.25})])
    path = tmp_path / "langfuse.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert import_runs(path)["cost"].sum() == 0.25


def test_an_older_crewbook_export_still_imports(tmp_path: Path) -> None:
    """Exports written before crewbook.run and crewbook.ts: the span end is the time."""
    old = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": [{
        "traceId": TRACE, "spanId": "c000000000000001", "name": "build",
        "startTimeUnixNano": str(T0 - 5 * 10**9), "endTimeUnixNano": str(T0),
        "attributes": [
            {"key": "gen_ai.conversation.id", "value": {"stringValue": "r-1"}},
            {"key": "gen_ai.agent.name", "value": {"stringValue": "developer"}},
            {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "10"}},
            {"key": "crewbook.kind", "value": {"stringValue": "report"}},
            {"key": "crewbook.seq", "value": {"intValue": "0"}},
            {"key": "crewbook.loop", "value": {"stringValue": "crew"}},
            {"key": "crewbook.duration_ms", "value": {"intValue": "5000"}}]}]}]}]}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old), encoding="utf-8")
    df = import_runs(path)
    assert (df["run"][0], df["role"][0], df["tokens_in"][0]) == ("r-1", "developer", 10)
    assert df["ts"][0] == pd.Timestamp(T0, unit="ns", tz="UTC")


def test_a_crewbook_export_imports_without_its_structure_spans(tmp_path: Path) -> None:
    runs = read_ledger(sorted(HISTORY.glob("*.jsonl"))[:2])
    back = import_runs(write_otlp(runs, tmp_path / "spans.json"))
    assert len(back) == len(runs)  # the run and turn spans give no event


# -- hostile shapes ----------------------------------------------------------------------


def test_nesting_too_deep_to_parse_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"resourceSpans": ' + "[" * 100_000, encoding="utf-8")
    with pytest.raises(LedgerError, match="nests arrays or objects too deeply") as caught:
        import_runs(path, source="otlp")
    assert caught.value.problems[0].path == str(path)


def test_nesting_too_deep_on_one_line_of_many_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text(json.dumps(OPENINFERENCE) + "\n" + '{"resourceSpans": '
                    + "[" * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(LedgerError, match="too deeply") as caught:
        import_runs(path, source="otlp")
    assert caught.value.problems[0].line == 2


class Counting(dict[str, str]):
    """A dict that counts its lookups: the work an ancestor walk does."""

    lookups = 0

    def get(self, key: str, default: Any = None) -> Any:
        Counting.lookups += 1
        return super().get(key, default)

    def __getitem__(self, key: str) -> str:
        Counting.lookups += 1
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        Counting.lookups += 1
        return super().__contains__(key)


def chain(n: int) -> Iterator[tuple[str, str]]:
    """(span, parent) of a chain n spans deep, the root first."""
    for i in range(n):
        yield f"{i:016x}", f"{i - 1:016x}" if i else ""


@pytest.mark.parametrize("n", [1_000, 8_000])
def test_ancestor_walks_take_linear_steps(n: int) -> None:
    parents = Counting(chain(n))
    attrs: dict[str, dict[str, Any]] = {sid: {} for sid in parents}
    attrs[f"{0:016x}"] = {"gen_ai.agent.name": "root agent"}
    Counting.lookups = 0
    rolled = otlp._ancestors(set(parents), parents)
    agents = otlp._agents(attrs, parents)
    assert len(rolled) == n - 1
    assert set(agents.values()) == {"root agent"}
    assert len(agents) == n
    assert Counting.lookups <= 12 * n  # quadratic walks make n²/2 lookups


def test_a_40000_span_chain_imports(tmp_path: Path) -> None:
    n = 40_000
    spans = [span(sid, "step", i, i + 1, parent or None, **{
        "gen_ai.usage.input_tokens": 1, **({"gen_ai.agent.name": "deep"} if not i else {})})
        for i, (sid, parent) in enumerate(chain(n))]
    path = tmp_path / "chain.json"
    path.write_text(json.dumps(document(spans)), encoding="utf-8")
    df = import_runs(path)
    assert len(df) == n + 2
    assert df["tokens_in"].sum() == 1  # only the deepest span's usage is its own
    assert set(df["role"].dropna()) == {"deep"}


def test_a_parent_cycle_ends(tmp_path: Path) -> None:
    spans = [span("d000000000000001", "a", 0, 1, "d000000000000002",
                  **{"gen_ai.usage.input_tokens": 3}),
             span("d000000000000002", "b", 0, 1, "d000000000000001")]
    path = tmp_path / "cycle.json"
    path.write_text(json.dumps(document(spans)), encoding="utf-8")
    df = import_runs(path)
    assert len(df) == 3  # init and the two spans; no root, so no finish


@pytest.mark.parametrize("status", [{"code": 2, "message": "429 rate limited"},
                                    {"code": "STATUS_CODE_ERROR",
                                     "message": "429 rate limited"}])
def test_a_failed_llm_or_tool_span_is_a_call_that_failed(tmp_path: Path,
                                                         status: dict[str, Any]) -> None:
    """An LLM span with status ERROR is still a model call (its tokens were spent): a
    report at stage model with verdict error, not an ``error`` event; a failed tool span
    still a tool call; exported again, each is an LLM or TOOL span with status ERROR."""
    failed = span("c000000000000002", "ChatCompletion", 100, 2100, "c000000000000001",
                  **{"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini",
                     "llm.token_count.prompt": 812, "llm.token_count.completion": 0,
                     "error.type": "RateLimitError"})
    failed["status"] = status
    genai = span("c000000000000003", "chat gpt-4o-mini", 2200, 2300, "c000000000000001",
                 **{"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini"})
    genai["status"] = {"code": 2}
    tool = span("c000000000000004", "lookup_order", 2400, 2500, "c000000000000001",
                **{"openinference.span.kind": "TOOL", "tool.name": "lookup_order"})
    tool["status"] = {"code": 2, "message": "order not found"}
    doc = document([span("c000000000000001", "agent", 0, 3000, None,
                         **{"openinference.span.kind": "AGENT", "agent.name": "bot"}),
                    failed, genai, tool])
    path = tmp_path / "failed.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    df = import_runs(path)
    assert "error" not in set(df["kind"].astype(str))
    calls = df[df["stage"] == "model"].reset_index(drop=True)
    assert list(calls["kind"]) == ["report", "report"]
    assert list(calls["verdict"]) == ["error", "error"]
    assert calls.loc[0, "tokens_in"] == 812
    assert calls.loc[0, "summary"] == "429 rate limited"
    assert calls.loc[0, "payload"]["error_type"] == "RateLimitError"
    assert calls.loc[1, "payload"]["error_type"] == "error"
    # a failed tool span is one tool call that failed, the same way
    tools = df[df["payload"].map(lambda p: "tool" in p)].reset_index(drop=True)
    assert list(zip(tools["kind"], tools["stage"], tools["verdict"], tools["summary"],
                    strict=True)) == [("report", "lookup_order", "error", "order not found")]
    out = tmp_path / "again.json"
    write_otlp(df, out)
    every = json.loads(out.read_text(encoding="utf-8"))["resourceSpans"][0]["scopeSpans"][0][
        "spans"]
    spans = [s for s in every if s["name"].startswith("chat")]
    assert [s["status"]["code"] for s in spans] == [2, 2]
    assert [s["status"]["code"] for s in every if s["name"].startswith("execute_tool")] == [2]
    first = {a["key"]: a["value"] for a in spans[0]["attributes"]}
    assert first["error.type"] == {"stringValue": "RateLimitError"}
    assert first["openinference.span.kind"] == {"stringValue": "LLM"}


def _import(tmp_path: Path, spans: list[dict[str, Any]]) -> pd.DataFrame:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(document(spans)), encoding="utf-8")
    return import_runs(path)


def test_counts_and_costs_kept_as_text_are_read(tmp_path: Path) -> None:
    """Langfuse keeps span attributes as text, so spans it gives back carry
    ``"gen_ai.usage.input_tokens": "31"``: read as the number, on a model call and on an
    agent span summing it (rolled up, not counted twice)."""
    df = _import(tmp_path, [
        span("c000000000000001", "qa_agent run", 0, 900, None,
             **{"gen_ai.usage.input_tokens": "31", "gen_ai.usage.output_tokens": "96"}),
        span("c000000000000002", "chat gpt-4o", 10, 800, "c000000000000001",
             **{"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                "gen_ai.usage.input_tokens": "31", "gen_ai.usage.output_tokens": " 96 ",
                "gen_ai.usage.cost": "0.0002"})])
    calls = df[df["stage"] == "model"]
    assert list(calls["tokens_in"]) == [31]
    assert list(calls["tokens_out"]) == [96]
    assert list(calls["cost"]) == [pytest.approx(0.0002)]
    assert df["tokens_in"].sum() == 31
    agent = df[df["payload"].map(lambda p: p.get("span") == "qa_agent run")].iloc[0]
    assert agent["payload"]["usage_rollup"] == {"tokens_in": 31, "tokens_out": 96}


def test_text_that_is_no_count_is_no_token_count(tmp_path: Path) -> None:
    df = _import(tmp_path, [span("c000000000000003", "chat", 0, 5, None, **{
        "gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": "many",
        "gen_ai.usage.output_tokens": "-3", "gen_ai.usage.cost": "1.2.3"})])
    call = df[df["stage"] == "model"].iloc[0]
    assert pd.isna(call["tokens_in"])
    assert pd.isna(call["tokens_out"])
    assert pd.isna(call["cost"])  # no model named: nothing to price either


def test_openllmetry_chat_span_is_a_model_call_with_its_prompt_and_completion_tokens(
        tmp_path: Path) -> None:
    """OpenLLMetry (Traceloop) sets ``llm.request.type`` and no operation name, and
    counts tokens under the names before the conventions' 1.27
    (``gen_ai.usage.prompt_tokens`` / ``completion_tokens``)."""
    df = _import(tmp_path, [span("c000000000000004", "openai.chat", 0, 1444, None, **{
        "llm.request.type": "chat", "gen_ai.system": "OpenAI",
        "gen_ai.request.model": "gpt-3.5-turbo", "gen_ai.response.model": "gpt-3.5-turbo-0125",
        "llm.usage.total_tokens": 187, "gen_ai.usage.completion_tokens": 173,
        "gen_ai.usage.prompt_tokens": 14})])
    calls = df[df["stage"] == "model"]
    assert len(calls) == 1
    assert (calls.iloc[0]["tokens_in"], calls.iloc[0]["tokens_out"]) == (14, 173)
    assert calls.iloc[0]["payload"]["model"] == "gpt-3.5-turbo-0125"


def test_a_span_with_a_model_and_its_own_usage_is_a_model_call(tmp_path: Path) -> None:
    """The Vercel AI SDK's ``ai.generateText.doGenerate`` names a model and counts
    tokens with no operation name: a model call. Its ``ai.generateText`` parent (no
    GenAI usage) stays a step, and its ``ai.toolCall`` span is a tool call."""
    df = _import(tmp_path, [
        span("c000000000000005", "ai.generateText", 0, 3045, None, **{
            "operation.name": "ai.generateText", "ai.usage.promptTokens": "62"}),
        span("c000000000000006", "ai.generateText.doGenerate", 1, 3044, "c000000000000005",
             **{"gen_ai.request.model": "gpt-5", "gen_ai.response.model": "gpt-5-2025-08-07",
                "gen_ai.usage.input_tokens": "62", "gen_ai.usage.output_tokens": "85"}),
        span("c000000000000007", "getWeather", 3045, 3045, "c000000000000005", **{
            "operation.name": "ai.toolCall", "ai.toolCall.name": "getWeather"})])
    calls = df[df["stage"] == "model"]
    assert list(calls["payload"].map(lambda p: p["span"])) == ["ai.generateText.doGenerate"]
    assert (calls.iloc[0]["tokens_in"], calls.iloc[0]["tokens_out"]) == (62, 85)
    tool = df[df["payload"].map(lambda p: p.get("span") == "getWeather")].iloc[0]
    assert (tool["stage"], tool["payload"]["tool"]) == ("getWeather", "getWeather")
    step = df[df["payload"].map(lambda p: p.get("span") == "ai.generateText")].iloc[0]
    assert step["stage"] == "ai.generateText"
    assert pd.isna(step["tokens_in"])
