"""OpenTelemetry traces in: crewbook's own exports back, and any GenAI trace.

Out (`to_otlp`, `otlp_export`, `write_otlp`) lives in `otlp_export`; this module
re-exports it. Read from the semantic conventions' own text (open-telemetry/
semantic-conventions, ``docs/gen-ai/``) and from OpenInference's (what Phoenix writes):

**Spans with ``crewbook.kind``** (written by `to_otlp`) give back exactly the events
exported; the spans no event stands for (the run's, the turns') are skipped.

**Other spans** (any GenAI or OpenInference instrumentation): an ``init`` at the trace's
first start time, then one ``report`` per span (``error`` when the status is ERROR or
``error.type`` is set; an LLM span a model call, stage ``model``, failed or not: verdict
``error`` and ``payload.error_type`` when it failed; a span with no operation name or
span kind is one too when OpenLLMetry's ``llm.request.type`` says chat, or when it names
a model and counts tokens of its own, as the Vercel AI SDK's ``doGenerate`` does; a tool
span a tool call, the same way): role =
the agent name (``gen_ai.agent.name`` or ``agent.name``) of the span or its nearest
ancestor, else the service name; stage = the tool name (``gen_ai.tool.name``,
``tool.name``, the Vercel AI SDK's ``ai.toolCall.name``), else the operation, else the
OpenInference span kind, else the span name; tokens from ``gen_ai.usage.*`` (also the
names before the conventions' 1.27, ``prompt_tokens`` / ``completion_tokens``) or
``llm.token_count.prompt`` / ``completion``; cost from ``llm.cost.total`` or
``gen_ai.usage.cost`` (counts and costs kept as text, as spans given back by Langfuse
carry them, read as numbers); the model
(``gen_ai.response.model``, ``gen_ai.request.model``, ``llm.model_name``) in
``payload.model``; ts = end; duration from start and end. Tokens of a span whose
descendants also carry usage (an ``invoke_agent`` summing its ``chat`` calls) go to
``payload.usage_rollup`` and are not counted twice. Each trace ends with a ``finish``
whose verdict is the root span's status: ``ok``, ``unset``, or the error type. Ancestor
walks visit each span once (a chain of 40,000 spans imports in linear time), and JSON
nested too deep to parse is a `LedgerError`, never a ``RecursionError``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from ..errors import LedgerError, Problem
from .events import LedgerEvent
from .importers._common import RunBuilder, count, model_call, read_text, short, tool_call
from .otlp_export import (
    CREWBOOK_FIELDS,
    STATUS_ERROR,
    STATUS_OK,
    OtlpExport,
    otlp_export,
    span_id,
    to_otlp,
    trace_id,
    write_otlp,
)

__all__ = ["OtlpExport", "looks_like", "otlp_events", "otlp_export", "span_id", "to_otlp",
           "trace_id", "write_otlp"]

SOURCE: Final = "otlp"


# -- in --------------------------------------------------------------------------------


def looks_like(text: str) -> bool:
    """Whether a text is OTLP JSON trace data (one document, or one per line)."""
    head = text.lstrip()[:4096]
    return head.startswith("{") and '"resourceSpans"' in head


def otlp_events(path: Path, shown: str) -> list[LedgerEvent]:
    """The events of an OTLP file of traces (one run per trace): OTLP JSON (one document,
    or one per line), or protobuf (an ``ExportTraceServiceRequest``, as
    ``crewbook ledger export --format protobuf`` writes)."""
    documents = _protobuf_documents(path, shown)
    if documents is None:
        documents = _documents(read_text(path, "import_bad_otlp"), shown)
    spans: list[tuple[dict[str, Any], str]] = []
    for doc_index, doc in enumerate(documents):
        for rs in _list(doc, "resourceSpans", shown):
            resource = _attributes(_dict(_dict(rs).get("resource")).get("attributes"))
            service = str(resource.get("service.name") or SOURCE)
            for ss in _list(rs, "scopeSpans", shown):
                for span in _list(ss, "spans", shown):
                    if not isinstance(span, dict) or not span.get("traceId") \
                            or not span.get("spanId"):
                        raise LedgerError(f"cannot import {shown}", [Problem(
                            "import_bad_otlp", f"document {doc_index + 1}: a span needs "
                            "traceId and spanId", shown)])
                    spans.append((span, service))
    traces: dict[str, list[tuple[dict[str, Any], str]]] = {}
    for span, service in spans:
        traces.setdefault(str(span["traceId"]), []).append((span, service))
    events: list[LedgerEvent] = []
    for tid in traces:
        events.extend(_trace(tid, traces[tid], shown))
    return events


def looks_like_protobuf(path: Path) -> bool:
    """Whether a file is OTLP protobuf: named ``.pb`` / ``.binpb``, or starting with the
    tag of ``resource_spans`` (field 1, bytes) and not UTF-8 text."""
    if path.suffix in (".pb", ".binpb"):
        return True
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    if not head.startswith(b"\n"):
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _protobuf_documents(path: Path, shown: str) -> list[dict[str, Any]] | None:
    """The document of a protobuf file; None when the file is not protobuf."""
    if not looks_like_protobuf(path):
        return None
    from .otlp_send import from_protobuf, proto_decode_error

    try:
        return [from_protobuf(path.read_bytes())]
    except OSError as exc:
        raise LedgerError(f"cannot import {shown}", [Problem(
            "import_bad_otlp", f"cannot read the file: {exc}", shown)]) from None
    except proto_decode_error():
        raise LedgerError(f"cannot import {shown}", [Problem(
            "import_bad_otlp", "not an OTLP protobuf ExportTraceServiceRequest (the file "
            "is named .pb or is binary); export OTLP JSON, or check the file", shown)]) \
            from None


def _documents(text: str, shown: str) -> list[dict[str, Any]]:
    try:
        whole = _loads(text, shown, None)
        return [whole] if isinstance(whole, dict) else []
    except json.JSONDecodeError:
        pass
    docs = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            doc = _loads(line, shown, number)
        except json.JSONDecodeError as exc:
            raise LedgerError(f"cannot import {shown}", [Problem(
                "import_bad_otlp", f"not JSON (neither one document nor one per line): "
                f"{exc.msg}", shown, number, exc.colno)]) from None
        if isinstance(doc, dict):
            docs.append(doc)
    return docs


def _loads(text: str, shown: str, line: int | None) -> Any:
    """`json.loads`, with nesting too deep for the parser as a `LedgerError`."""
    try:
        return json.loads(text)
    except RecursionError:
        raise LedgerError(f"cannot import {shown}", [Problem(
            "import_bad_otlp", "the JSON nests arrays or objects too deeply to read "
            "(OTLP trace data nests a few levels); is this the right file?", shown,
            line)]) from None


def _list(obj: Any, key: str, shown: str) -> list[Any]:
    if not isinstance(obj, dict):
        raise LedgerError(f"cannot import {shown}", [Problem(
            "import_bad_otlp", f"an entry holding '{key}' must be a JSON object", shown,
            key=key)])
    value = obj.get(key, [])
    if not isinstance(value, list):
        raise LedgerError(f"cannot import {shown}", [Problem(
            "import_bad_otlp", f"'{key}' must be a list", shown, key=key)])
    return value


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _attributes(items: Any) -> dict[str, Any]:
    """OTLP ``[{key, value: {stringValue|intValue|…}}]`` as a plain dict."""
    out: dict[str, Any] = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            out[item["key"]] = _value(_dict(item.get("value")))
    return out


def _value(value: dict[str, Any]) -> Any:
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError, OverflowError):
            return None
    if "doubleValue" in value:
        raw = value["doubleValue"]
        return float(raw) if isinstance(raw, int | float | str) else None
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [_value(_dict(v)) for v in _dict(value["arrayValue"]).get("values", [])]
    if "kvlistValue" in value:
        return _attributes(_dict(value["kvlistValue"]).get("values"))
    return None


def _time(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return 0


def _ts(nanos: int, shown: str) -> datetime | None:
    """A span time as UTC (0: no time); past year 9999 it stays a number, which the
    event model then refuses, naming the span."""
    if nanos <= 0:
        return None
    seconds, rest = divmod(nanos, 1_000_000_000)
    try:
        return datetime.fromtimestamp(seconds, UTC).replace(microsecond=rest // 1000)
    except (OverflowError, ValueError, OSError):
        raise LedgerError("a span time is out of range", [Problem(
            "import_bad_otlp", f"{nanos} ns since 1970 is past the year 9999; OTLP times "
            "are unix nanoseconds", shown)]) from None


#: Attribute pairs (GenAI semantic conventions, OpenInference) read for each value.
#: ``gen_ai.usage.prompt_tokens`` / ``completion_tokens``: the names before the
#: conventions' 1.27, still written by OpenLLMetry (Traceloop).
INPUT_TOKENS: Final = ("gen_ai.usage.input_tokens", "llm.token_count.prompt",
                       "gen_ai.usage.prompt_tokens")
OUTPUT_TOKENS: Final = ("gen_ai.usage.output_tokens", "llm.token_count.completion",
                        "gen_ai.usage.completion_tokens")
MODEL_KEYS: Final = ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name")
AGENT_KEYS: Final = ("gen_ai.agent.name", "agent.name")
#: ``ai.toolCall.name``: the Vercel AI SDK's tool call span.
TOOL_KEYS: Final = ("gen_ai.tool.name", "tool.name", "ai.toolCall.name")
COST_KEYS: Final = ("llm.cost.total", "gen_ai.usage.cost")
#: GenAI ``gen_ai.operation.name`` values of a model call (an OpenInference LLM span).
LLM_OPERATIONS: Final = frozenset({"chat", "text_completion", "generate_content"})
#: OpenLLMetry's ``llm.request.type`` values of a model call (it sets no operation name).
LLM_REQUEST_TYPES: Final = frozenset({"chat", "completion"})


def _first(a: Mapping[str, Any], keys: Iterable[str]) -> Any:
    return next((a[k] for k in keys if a.get(k) is not None), None)


def _amount(a: Mapping[str, Any], keys: Iterable[str]) -> Any:
    """`_first`, with a count or cost kept as text (``"31"``, ``"0.0002"``: written back
    by a pipeline that stores attributes as text, as Langfuse does) as its number."""
    value = _first(a, keys)
    if isinstance(value, str):
        text = value.strip()
        if text.isdigit():
            return int(text)
        if text[:1].isdigit():
            try:
                return float(text)
            except ValueError:
                return value
    return value


def _trace(tid: str, items: list[tuple[dict[str, Any], str]], shown: str) -> list[LedgerEvent]:
    attrs = {str(s["spanId"]): _attributes(s.get("attributes")) for s, _ in items}
    if any("crewbook.kind" in a for a in attrs.values()):
        return _crewbook_trace(items, attrs, shown)
    parents = {str(s["spanId"]): str(s.get("parentSpanId") or "") for s, _ in items}
    with_usage = {sid for sid, a in attrs.items()
                  if _first(a, INPUT_TOKENS) is not None or _first(a, OUTPUT_TOKENS) is not None}
    rolled_up = _ancestors(with_usage, parents)
    agents = _agents(attrs, parents)
    ordered = sorted(items, key=lambda i: (_time(i[0].get("startTimeUnixNano")),
                                           _time(i[0].get("endTimeUnixNano")),
                                           str(i[0]["spanId"])))
    service = items[0][1]
    run = RunBuilder(SOURCE, service, tid, shown)
    first_start = min((t for t in (_time(s.get("startTimeUnixNano")) for s, _ in items) if t),
                      default=0)
    run.add("init", _ts(first_start, shown), record=f"trace {tid}", payload={"service": service},
            summary=f"trace {tid}")
    last_end = 0
    root_status: tuple[str, str] | None = None
    for span, svc in ordered:
        sid = str(span["spanId"])
        a = attrs[sid]
        start, end = _time(span.get("startTimeUnixNano")), _time(span.get("endTimeUnixNano"))
        last_end = max(last_end, end)
        status = _dict(span.get("status"))
        code = status.get("code")
        failed = code in (STATUS_ERROR, "STATUS_CODE_ERROR") or "error.type" in a
        role = agents.get(sid) or svc
        operation = a.get("gen_ai.operation.name")
        kind = a.get("openinference.span.kind")
        stage = _first(a, TOOL_KEYS) or operation or (
            str(kind).lower() if kind else None) or span.get("name")
        usage: dict[str, Any] = {"tokens_in": count(_amount(a, INPUT_TOKENS)),
                                 "tokens_out": count(_amount(a, OUTPUT_TOKENS))}
        cost = _amount(a, COST_KEYS)
        if isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0 \
                and cost == cost and cost != float("inf"):
            usage["cost"] = float(cost)
        payload: dict[str, Any] = {"span": span.get("name"), "span_id": sid,
                                   "parent_span_id": parents[sid] or None,
                                   "operation": operation}
        if kind:
            payload["span_kind"] = kind
        if sid in rolled_up and sid in with_usage:
            payload["usage_rollup"] = {k: v for k, v in usage.items() if v is not None}
            usage = {}
        model = _first(a, MODEL_KEYS)
        if model:
            payload["model"] = model
        verdict = str(a.get("error.type") or "error") if failed else "done"
        duration = (end - start) // 1_000_000 if start and end >= start else None
        tool = _first(a, TOOL_KEYS)
        own_usage = sid in with_usage and sid not in rolled_up
        if str(kind).upper() == "LLM" or operation in LLM_OPERATIONS or (
                operation is None and kind is None and (
                    a.get("llm.request.type") in LLM_REQUEST_TYPES
                    or (own_usage and model is not None))):
            # a model call, also when it failed (verdict error: the tokens it spent count)
            if failed:
                payload["error_type"] = str(a.get("error.type") or "error")
            model_call(run, _ts(end, shown), record=f"span {sid}", role=role,
                       model=payload.pop("model", None), duration_ms=duration,
                       verdict="error" if failed else "done",
                       summary=short(status.get("message")) if failed else None,
                       payload=payload, **usage)
        elif all(v is None for v in usage.values()) and (
                tool is not None or str(kind).upper() == "TOOL" or operation == "execute_tool"):
            if failed:  # a tool call that failed: still one tool call
                payload["error_type"] = verdict
            tool_call(run, _ts(end, shown), record=f"span {sid}", role=role,
                      tool=str(stage) if stage is not None else None,
                      verdict="error" if failed else "done",
                      summary=short(status.get("message")) if failed else None,
                      duration_ms=duration, payload=payload)
        else:
            run.add("error" if failed else "report", _ts(end, shown), record=f"span {sid}",
                    role=role, stage=str(stage) if stage is not None else None,
                    verdict=verdict, summary=short(status.get("message"))
                    if failed and status.get("message") else (verdict if failed else None),
                    duration_ms=duration, payload=payload, **usage)
        if parents[sid] not in parents:  # a root span: its status is the trace's
            root_status = ("ok" if code in (STATUS_OK, "STATUS_CODE_OK") else
                           verdict if failed else "unset", sid)
    if root_status is not None:
        run.add("finish", _ts(last_end, shown), record=f"span {root_status[1]}",
                verdict=root_status[0])
    return run.events


def _ancestors(spans: set[str], parents: dict[str, str]) -> set[str]:
    """Every ancestor of `spans` (whose usage their own usage already sums). Each span is
    visited once: a walk stops at the first ancestor already marked, so a chain of n
    spans costs n steps, not n²; a cycle ends the walk too."""
    marked: set[str] = set()
    for sid in spans:
        parent = parents.get(sid, "")
        while parent in parents and parent not in marked:
            marked.add(parent)
            parent = parents[parent]
    return marked


def _agents(attrs: dict[str, dict[str, Any]], parents: dict[str, str]) -> dict[str, str]:
    """Span id → the agent name on the span or its nearest ancestor (OpenInference: an
    AGENT span's name when it has no agent attribute). Each span's answer is kept, so a
    chain of n spans takes n steps in all."""
    known: dict[str, str | None] = {}
    for start in attrs:
        path: list[str] = []
        sid, found = start, None
        seen: set[str] = set()
        while sid in attrs and sid not in known and sid not in seen:
            seen.add(sid)
            name = _first(attrs[sid], AGENT_KEYS)
            if isinstance(name, str) and name:
                found = name
                break
            path.append(sid)
            sid = parents.get(sid, "")
        else:
            found = known.get(sid)
        if found is not None and sid in attrs and sid not in known:
            known[sid] = found
        for step in path:
            known[step] = found
    return {sid: name for sid, name in known.items() if name}


def _crewbook_trace(items: list[tuple[dict[str, Any], str]], attrs: dict[str, dict[str, Any]],
                    shown: str) -> list[LedgerEvent]:
    """Spans written by `to_otlp`: the events exactly as they were (the spans no event
    stands for, the run's and the turns', are skipped)."""
    events = []
    for span, _ in items:
        a = attrs[str(span["spanId"])]
        if "crewbook.kind" not in a:
            continue
        data: dict[str, Any] = {f: a[f"crewbook.{f}"] for f in CREWBOOK_FIELDS
                                if f"crewbook.{f}" in a}
        if "crewbook.run" in a:
            data["ts"] = a.get("crewbook.ts")
        else:  # written before crewbook.run and crewbook.ts: the span end is the time
            data["run"] = a.get("gen_ai.conversation.id")
            data["role"] = a.get("gen_ai.agent.name")
            data["tokens_in"] = a.get("gen_ai.usage.input_tokens")
            data["tokens_out"] = a.get("gen_ai.usage.output_tokens")
            data["ts"] = _ts(_time(span.get("endTimeUnixNano")), shown)
        try:
            data["payload"] = json.loads(a["crewbook.payload"]) if "crewbook.payload" in a \
                else {}
            events.append(LedgerEvent.model_validate(data))
        except (ValueError, TypeError, RecursionError) as exc:
            raise LedgerError(f"cannot import {shown}", [Problem(
                "import_bad_otlp", f"span {span['spanId']} carries crewbook attributes that "
                f"are not a valid event: {exc}", shown)]) from None
    return sorted(events, key=lambda e: e.seq)
