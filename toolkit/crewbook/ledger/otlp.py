"""OpenTelemetry GenAI spans, OTLP JSON, both ways: crewbook runs out, any GenAI trace in.

Read from the semantic conventions' own text (open-telemetry/semantic-conventions,
``docs/gen-ai/gen-ai-agent-spans.md`` and ``gen-ai-spans.md``): ``gen_ai.operation.name``
(``invoke_agent``, ``invoke_workflow``, ``execute_tool``, ``chat``…), ``gen_ai.agent.name``,
``gen_ai.tool.name``, ``gen_ai.conversation.id``, ``gen_ai.usage.input_tokens`` and
``output_tokens``, ``error.type`` (with span status ERROR).

**Out** (`to_otlp`): a run is a trace, each event a span. ``traceId`` and ``spanId`` are
derived from run and seq (SHA-256), so an export is reproducible; every span's parent is
the span of the run's first event. The span name is the stage (else the kind); role →
``gen_ai.agent.name`` with operation ``invoke_agent`` (events without a role:
``invoke_workflow``); run → ``gen_ai.conversation.id``; tokens → ``gen_ai.usage.*``; the
rest (kind, seq, loop, verdict, attempt, version, summary, cost, duration_ms, payload as
JSON) as ``crewbook.*`` attributes. The span ends at `ts` and starts ``duration_ms``
before; a null `ts` (no clock) gives times of 0. ``error`` events have status ERROR and
``error.type`` = their verdict (or ``error``).

**In** (`otlp_events`): spans carrying ``crewbook.kind`` give back exactly the events
exported. Other spans (any GenAI instrumentation): an ``init`` at the trace's first start
time, then one ``report`` per span (``error``
when the status is ERROR or ``error.type`` is set): role = the agent name of the span or
its nearest ancestor, else the service name; stage = ``gen_ai.tool.name``, else the
operation, else the span name; ts = end; duration from start and end. Tokens of a span
whose descendants also carry usage (an ``invoke_agent`` summing its ``chat`` calls) go to
``payload.usage_rollup`` and are not counted twice. Each trace ends with a ``finish``
whose verdict is the root span's status: ``ok``, ``unset``, or the error type.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..errors import LedgerError, Problem
from .events import LedgerEvent
from .importers._common import RunBuilder, count, read_text, short

if TYPE_CHECKING:
    import pandas as pd

SOURCE: Final = "otlp"
SCOPE: Final = "crewbook.ledger"
#: OTLP span kinds (the protobuf enum, as OTLP JSON writes it).
INTERNAL: Final = 1
STATUS_UNSET, STATUS_OK, STATUS_ERROR = 0, 1, 2
#: Event fields carried as ``crewbook.<field>`` attributes.
CREWBOOK_FIELDS: Final = ("kind", "seq", "loop", "stage", "verdict", "attempt", "version",
                          "summary", "cost", "duration_ms")


# -- out -------------------------------------------------------------------------------


def trace_id(run: str) -> str:
    """The 32-hex-digit trace id of a run (the same every time)."""
    return hashlib.sha256(f"crewbook/{run}".encode()).hexdigest()[:32]


def span_id(run: str, seq: int) -> str:
    """The 16-hex-digit span id of event `seq` of `run`."""
    return hashlib.sha256(f"crewbook/{run}/{seq}".encode()).hexdigest()[:16]


def to_otlp(events: pd.DataFrame | Iterable[LedgerEvent | Mapping[str, Any]]) -> dict[str, Any]:
    """The OTLP JSON document (``{"resourceSpans": [...]}``) of ledger events: a frame
    from `read_ledger` or `import_runs`, or events. Spans are sorted by run, then seq,
    so the same events always give the same document, whatever their order."""
    models = sorted(_events(events), key=lambda e: (e.run, e.seq))
    first: dict[str, int] = {}
    for event in models:
        first.setdefault(event.run, event.seq)
    spans = [_span(e, first[e.run]) for e in models]
    return {"resourceSpans": [{
        "resource": {"attributes": [_attr("service.name", "crewbook")]},
        "scopeSpans": [{"scope": {"name": SCOPE}, "spans": spans}],
    }]}


def write_otlp(events: pd.DataFrame | Iterable[LedgerEvent | Mapping[str, Any]],
               path: str | Path) -> Path:
    """Write `to_otlp` as JSON (sorted keys, 1 space indent) and return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_otlp(events), indent=1, sort_keys=True,
                               ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _events(source: Any) -> Iterable[LedgerEvent]:
    import pandas as pd

    from .reader import frame_events

    if isinstance(source, pd.DataFrame):
        return frame_events(source)
    return [e if isinstance(e, LedgerEvent) else LedgerEvent.model_validate(e)
            for e in source]


def _nanos(ts: datetime | None) -> int:
    if ts is None:
        return 0
    delta = ts - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000


def _span(event: LedgerEvent, first_seq: int) -> dict[str, Any]:
    end = _nanos(event.ts)
    start = end - (event.duration_ms or 0) * 1_000_000 if end else 0
    attrs = [
        _attr("gen_ai.operation.name", "invoke_agent" if event.role else "invoke_workflow"),
        _attr("gen_ai.conversation.id", event.run),
    ]
    if event.role is not None:
        attrs.append(_attr("gen_ai.agent.name", event.role))
    if event.tokens_in is not None:
        attrs.append(_attr("gen_ai.usage.input_tokens", event.tokens_in))
    if event.tokens_out is not None:
        attrs.append(_attr("gen_ai.usage.output_tokens", event.tokens_out))
    for name in CREWBOOK_FIELDS:
        value = getattr(event, name)
        if value is not None:
            attrs.append(_attr(f"crewbook.{name}", value))
    if event.payload:
        attrs.append(_attr("crewbook.payload", json.dumps(
            event.payload, ensure_ascii=False, separators=(",", ":"))))
    status: dict[str, Any] = {"code": STATUS_UNSET}
    if event.kind == "error":
        attrs.append(_attr("error.type", event.verdict or "error"))
        status = {"code": STATUS_ERROR, "message": event.summary or ""}
    span: dict[str, Any] = {
        "traceId": trace_id(event.run), "spanId": span_id(event.run, event.seq),
        "name": event.stage or event.kind, "kind": INTERNAL,
        "startTimeUnixNano": str(max(start, 0)), "endTimeUnixNano": str(end),
        "attributes": attrs, "status": status,
    }
    if event.seq != first_seq:
        span["parentSpanId"] = span_id(event.run, first_seq)
    return span


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": str(value)}}


# -- in --------------------------------------------------------------------------------


def looks_like(text: str) -> bool:
    """Whether a text is OTLP JSON trace data (one document, or one per line)."""
    head = text.lstrip()[:4096]
    return head.startswith("{") and '"resourceSpans"' in head


def otlp_events(path: Path, shown: str) -> list[LedgerEvent]:
    """The events of an OTLP JSON file of traces (one run per trace)."""
    text = read_text(path, "import_bad_otlp")
    documents = _documents(text, shown)
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


def _documents(text: str, shown: str) -> list[dict[str, Any]]:
    try:
        whole = json.loads(text)
        return [whole] if isinstance(whole, dict) else []
    except json.JSONDecodeError:
        pass
    docs = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LedgerError(f"cannot import {shown}", [Problem(
                "import_bad_otlp", f"not JSON (neither one document nor one per line): "
                f"{exc.msg}", shown, number, exc.colno)]) from None
        if isinstance(doc, dict):
            docs.append(doc)
    return docs


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


def _trace(tid: str, items: list[tuple[dict[str, Any], str]], shown: str) -> list[LedgerEvent]:
    attrs = {str(s["spanId"]): _attributes(s.get("attributes")) for s, _ in items}
    if all("crewbook.kind" in attrs[str(s["spanId"])] for s, _ in items):
        return _crewbook_trace(items, attrs, shown)
    parents = {str(s["spanId"]): str(s.get("parentSpanId") or "") for s, _ in items}
    with_usage = {sid for sid, a in attrs.items()
                  if "gen_ai.usage.input_tokens" in a or "gen_ai.usage.output_tokens" in a}
    rolled_up: set[str] = set()
    for sid in with_usage:  # every ancestor of a span with usage sums it already
        parent, hops = parents.get(sid, ""), 0
        while parent in parents and hops < len(parents):
            rolled_up.add(parent)
            parent, hops = parents[parent], hops + 1
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
        role = _agent(sid, attrs, parents) or svc
        operation = a.get("gen_ai.operation.name")
        stage = a.get("gen_ai.tool.name") or operation or span.get("name")
        usage: dict[str, Any] = {"tokens_in": count(a.get("gen_ai.usage.input_tokens")),
                                 "tokens_out": count(a.get("gen_ai.usage.output_tokens"))}
        payload: dict[str, Any] = {"span": span.get("name"), "span_id": sid,
                                   "parent_span_id": parents[sid] or None,
                                   "operation": operation}
        if sid in rolled_up and sid in with_usage:
            payload["usage_rollup"] = {k: v for k, v in usage.items() if v is not None}
            usage = {}
        if a.get("gen_ai.request.model") or a.get("gen_ai.response.model"):
            payload["model"] = a.get("gen_ai.response.model") or a.get("gen_ai.request.model")
        verdict = str(a.get("error.type") or "error") if failed else "done"
        run.add("error" if failed else "report", _ts(end, shown), record=f"span {sid}", role=role,
                stage=str(stage) if stage is not None else None, verdict=verdict,
                summary=short(status.get("message")) if failed and status.get("message")
                else (verdict if failed else None),
                duration_ms=(end - start) // 1_000_000 if start and end >= start else None,
                payload=payload, **usage)
        if parents[sid] not in parents:  # a root span: its status is the trace's
            root_status = ("ok" if code in (STATUS_OK, "STATUS_CODE_OK") else
                           verdict if failed else "unset", sid)
    if root_status is not None:
        run.add("finish", _ts(last_end, shown), record=f"span {root_status[1]}",
                verdict=root_status[0])
    return run.events


def _agent(sid: str, attrs: dict[str, dict[str, Any]], parents: dict[str, str]) -> str | None:
    hops = 0
    while sid in attrs and hops <= len(attrs):
        name = attrs[sid].get("gen_ai.agent.name")
        if isinstance(name, str) and name:
            return name
        sid, hops = parents.get(sid, ""), hops + 1
    return None


def _crewbook_trace(items: list[tuple[dict[str, Any], str]], attrs: dict[str, dict[str, Any]],
                    shown: str) -> list[LedgerEvent]:
    """Spans written by `to_otlp`: the events exactly as they were."""
    events = []
    for span, _ in items:
        a = attrs[str(span["spanId"])]
        data: dict[str, Any] = {f: a[f"crewbook.{f}"] for f in CREWBOOK_FIELDS
                                if f"crewbook.{f}" in a}
        data["run"] = a.get("gen_ai.conversation.id")
        data["role"] = a.get("gen_ai.agent.name")
        data["tokens_in"] = a.get("gen_ai.usage.input_tokens")
        data["tokens_out"] = a.get("gen_ai.usage.output_tokens")
        data["ts"] = _ts(_time(span.get("endTimeUnixNano")), shown)
        try:
            data["payload"] = json.loads(a["crewbook.payload"]) if "crewbook.payload" in a \
                else {}
            events.append(LedgerEvent.model_validate(data))
        except (ValueError, TypeError) as exc:
            raise LedgerError(f"cannot import {shown}", [Problem(
                "import_bad_otlp", f"span {span['spanId']} carries crewbook attributes that "
                f"are not a valid event: {exc}", shown)]) from None
    return sorted(events, key=lambda e: e.seq)
