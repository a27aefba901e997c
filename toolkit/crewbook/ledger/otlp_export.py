"""crewbook runs out as OpenTelemetry traces that GenAI trace viewers read as they are.

Two vocabularies on every span, because viewers read one or the other: the OpenTelemetry
GenAI semantic conventions (``gen_ai.operation.name``, ``gen_ai.agent.name``,
``gen_ai.request.model``, ``gen_ai.provider.name``, ``gen_ai.usage.*``, ``error.type``)
and OpenInference's, which Arize Phoenix and Arize read (``openinference.span.kind``,
``llm.model_name``, ``llm.provider``, ``llm.token_count.*``, ``llm.cost.total``,
``input.value``, ``output.value``, ``session.id``); cost also as ``gen_ai.usage.cost``,
which Langfuse takes over its own price estimate. (Phoenix 20.26 prices tokens from its
own model table and shows ``llm.cost.total`` as an attribute only.)

The shape of a run's trace (``R``: a span no event stands for; the others are events):

- the run: ``invoke_workflow {loop}`` (kind CHAIN), covering every span of the run;
  status OK once it finished, ERROR when it finished failed (or escalated); the run's
  totals (a ``finish`` or a note flagged ``payload.totals`` carrying usage: SWE-agent's
  ``model_stats``) as ``crewbook.run.tokens_in`` / ``tokens_out`` / ``cost``;
- a role's turn: ``invoke_agent {role}`` (kind AGENT), from the role's ``act`` to the
  report, verdict or error that closes it (its events are its children);
- an event with tokens, cost or a model, unless it carries the run's totals: ``chat
  {model}`` (kind LLM) with model, provider, tokens and cost (status ERROR when a model
  call's verdict is ``error``, ``failed``…); an event of a tool (its payload holds an
  ``action``, ``observation`` or ``tool``): ``execute_tool {name}`` (kind TOOL; status
  ERROR when a tool call's verdict is ``error``, ``failed``…); a ``bar``: ``bar {stage}``
  and a ``verdict``: ``verdict {role}`` (kind EVALUATOR; a failed bar or a no-go verdict
  has status ERROR); an ``error``: status ERROR; any other event: ``{kind} {stage}``
  (CHAIN).

Times: a span ends at its event's `ts` and starts `duration_ms` before it. An event the
source did not time (null `ts`) is placed right after the run's previous span and flagged
``crewbook.time_placed``; a run with no clock at all is left out (and counted) unless
`clockless_at` gives the time it is placed from. Never a 1970 date.

Each event's fields are kept as ``crewbook.*`` attributes (``crewbook.ts`` the exact
time, or absent), so an import gives back exactly the events exported. Trace and span
ids derive from the run and seq (SHA-256): an export is reproducible and a re-sent run
does not duplicate spans in a backend that keys spans by id.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from .calls import CALL_KIND, MODEL_STAGE, TOOL_KEY, is_totals
from .events import LedgerEvent
from .otlp_attributes import (
    CREWBOOK_FIELDS,
    INPUT_KEYS,
    PAYLOAD_CAP,
    PROVIDERS,
    TEXT_CAP,
    TOOL_KEYS,
    attr,
    cap,
    crewbook_attributes,
    input_text,
    llm_attributes,
    provider,
    run_totals,
)

if TYPE_CHECKING:
    import pandas as pd

SCOPE: Final = "crewbook.ledger"
#: OTLP span kind INTERNAL (the protobuf enum, as OTLP JSON writes it).
INTERNAL: Final = 1
STATUS_UNSET, STATUS_OK, STATUS_ERROR = 0, 1, 2
#: Longest span name.
NAME_CAP: Final = 64
#: Verdicts that set a bar's or a verdict's span status to ERROR.
FAILED_VERDICTS: Final = frozenset({"fail", "failed", "error", "timeout", "no-go", "nogo",
                                    "changes", "rejected", "reject"})
#: Kinds of a role's event that close its turn.
CLOSING: Final = frozenset({"report", "verdict", "plan", "error", "answer"})
@dataclass
class OtlpExport:
    """An export: the OTLP JSON document and what it did with times."""

    document: dict[str, Any]
    traces: int = 0
    spans: int = 0
    #: events without a clock placed after the previous span (flagged on the span)
    placed: int = 0
    #: runs left out because no event has a clock (and no `clockless_at` was given)
    left_out: list[str] = field(default_factory=list)


def trace_id(run: str) -> str:
    """The 32-hex-digit trace id of a run (the same every time)."""
    return hashlib.sha256(f"crewbook/{run}".encode()).hexdigest()[:32]


def span_id(run: str, seq: int | str) -> str:
    """The 16-hex-digit span id of event `seq` of `run` (``"run"``, ``"turn/N"``: the
    spans no event stands for)."""
    return hashlib.sha256(f"crewbook/{run}/{seq}".encode()).hexdigest()[:16]


def to_otlp(events: pd.DataFrame | Iterable[LedgerEvent | Mapping[str, Any]], *,
            clockless_at: datetime | None = None, project: str | None = None
            ) -> dict[str, Any]:
    """The OTLP JSON document (``{"resourceSpans": [...]}``) of ledger events: a frame
    from `read_ledger` or `import_runs`, or events (see `otlp_export`)."""
    return otlp_export(events, clockless_at=clockless_at, project=project).document


def otlp_export(events: pd.DataFrame | Iterable[LedgerEvent | Mapping[str, Any]], *,
                clockless_at: datetime | None = None, project: str | None = None
                ) -> OtlpExport:
    """The export of ledger events, one trace per run, runs and spans in a fixed order
    whatever the order of the events. `clockless_at`: where runs with no clock at all
    start (else they are left out); `project`: the Phoenix project
    (``openinference.project.name``)."""
    models = sorted(_events(events), key=lambda e: (e.run, e.seq))
    runs: dict[str, list[LedgerEvent]] = {}
    for event in models:
        runs.setdefault(event.run, []).append(event)
    anchor = _nanos(clockless_at) if clockless_at is not None else None
    out = OtlpExport(document={})
    spans: list[dict[str, Any]] = []
    for run, run_events in runs.items():
        built = _RunSpans(run, run_events, anchor).build()
        if built is None:
            out.left_out.append(run)
            continue
        run_spans, placed = built
        spans.extend(run_spans)
        out.traces += 1
        out.placed += placed
    out.spans = len(spans)
    resource = [attr("service.name", "crewbook")]
    if project:
        resource.append(attr("openinference.project.name", project))
    out.document = {"resourceSpans": [{
        "resource": {"attributes": resource},
        "scopeSpans": [{"scope": {"name": SCOPE}, "spans": spans}],
    }]}
    return out


def write_otlp(events: pd.DataFrame | Iterable[LedgerEvent | Mapping[str, Any]],
               path: str | Path, *, clockless_at: datetime | None = None,
               project: str | None = None) -> Path:
    """Write `to_otlp` as JSON (sorted keys, 1 space indent) and return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = to_otlp(events, clockless_at=clockless_at, project=project)
    path.write_text(json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    return path


def _events(source: Any) -> list[LedgerEvent]:
    import pandas as pd

    from .reader import frame_events

    if isinstance(source, pd.DataFrame):
        return list(frame_events(source))
    return [e if isinstance(e, LedgerEvent) else LedgerEvent.model_validate(e)
            for e in source]


def _nanos(ts: datetime) -> int:
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    delta = ts - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000


class _RunSpans:
    """The spans of one run: events placed in time, grouped into turns, under a root."""

    def __init__(self, run: str, events: list[LedgerEvent], anchor: int | None) -> None:
        self.run, self.events, self.anchor = run, events, anchor
        self.tid = trace_id(run)
        self.root = span_id(run, "run")
        init = next((e for e in events if e.kind == "init"), None)
        model = init.payload.get("model") if init is not None else None
        self.default_model = model if isinstance(model, str) and model else None

    def build(self) -> tuple[list[dict[str, Any]], int] | None:
        times = self._times()
        if times is None:
            return None
        placed = sum(1 for e in self.events if e.ts is None)
        turns = self._turns()
        leaves = [self._leaf(e, times[i], turns.get(i)) for i, e in enumerate(self.events)]
        turn_spans = self._turn_spans(turns, leaves)
        everything = leaves + turn_spans
        start = min(int(s["startTimeUnixNano"]) for s in everything)
        end = max(int(s["endTimeUnixNano"]) for s in everything)
        root = self._root(start, end)
        return [root, *turn_spans, *leaves], placed

    def _times(self) -> list[tuple[int, int]] | None:
        """(start, end) in unix ns of each event; None when the run has no clock and no
        anchor."""
        first = next((_nanos(e.ts) for e in self.events if e.ts is not None), self.anchor)
        if first is None:
            return None
        cursor, out = first, []
        for event in self.events:
            length = (event.duration_ms or 0) * 1_000_000
            if event.ts is not None:
                end = _nanos(event.ts)
                start = max(end - length, 0)
            else:
                start, end = cursor, cursor + length
            cursor = max(cursor, end)
            out.append((start, end))
        return out

    def _turns(self) -> dict[int, int]:
        """Event index → index of the ``act`` whose turn it belongs to: an act opens a
        turn of its role; the role's next report, verdict, error or answer closes it;
        the next act (of any role) ends it."""
        owner: dict[int, int] = {}
        open_act: int | None = None
        for i, event in enumerate(self.events):
            if event.kind == "act" and event.role:
                open_act = i
                owner[i] = i
            elif open_act is not None and event.role == self.events[open_act].role:
                owner[i] = open_act
                if event.kind in CLOSING:
                    open_act = None
        return owner

    def _leaf(self, event: LedgerEvent, times: tuple[int, int],
              turn: int | None) -> dict[str, Any]:
        attrs: list[dict[str, Any]] = [
            attr("gen_ai.conversation.id", self.run), attr("session.id", self.run)]
        model = event.payload.get("model")
        model = model if isinstance(model, str) and model else None
        usage = event.tokens_in is not None or event.tokens_out is not None \
            or event.cost is not None
        status: dict[str, Any] = {"code": STATUS_UNSET}
        call = event.kind == CALL_KIND and event.stage == MODEL_STAGE
        failed = event.kind == "error" or (
            (event.kind in ("bar", "verdict") or call or (
                event.kind == CALL_KIND and TOOL_KEY in event.payload))
            and (event.verdict or "").lower() in FAILED_VERDICTS)
        # an LLM span: a model call, or an event with usage or a model (a note that only
        # names a model, like Codex's turn_context, is no call)
        # (a run's totals are no call: they are the run span's attributes)
        if event.kind != "init" and not is_totals(event.kind, event.payload) and (
                usage or (model and event.kind != "note")
                or call):
            model = model or self.default_model
            name = f"chat {model}" if model else "chat"
            attrs += llm_attributes(event, model)
        elif event.kind in ("report", "note", "error") and any(
                k in event.payload for k in TOOL_KEYS):
            tool = event.stage or event.kind
            name = f"execute_tool {tool}"
            attrs += [attr("openinference.span.kind", "TOOL"),
                      attr("gen_ai.operation.name", "execute_tool"),
                      attr("gen_ai.tool.name", tool), attr("tool.name", tool)]
        elif event.kind in ("bar", "verdict"):
            name = f"bar {event.stage or event.verdict}" if event.kind == "bar" \
                else f"verdict {event.role}"
            attrs.append(attr("openinference.span.kind", "EVALUATOR"))
        else:
            name = " ".join(str(p) for p in (event.kind, event.stage or event.role) if p)
            attrs.append(attr("openinference.span.kind", "CHAIN"))
        if event.role:
            attrs.append(attr("gen_ai.agent.name", event.role))
        if failed:
            kind = event.payload.get("error_type")  # a failed model call's own type
            attrs.append(attr("error.type", kind if isinstance(kind, str) and kind
                               else event.verdict or event.kind))
            status = {"code": STATUS_ERROR, "message": event.summary or event.verdict or ""}
        text = input_text(event)
        if text:
            attrs += [attr("input.value", cap(text)), attr("input.mime_type", "text/plain")]
        output = event.summary or event.verdict
        if output:
            attrs += [attr("output.value", cap(output)),
                      attr("output.mime_type", "text/plain")]
        attrs += crewbook_attributes(event)
        if event.ts is None:
            attrs.append(attr("crewbook.time_placed", True))
        parent = span_id(self.run, f"turn/{self.events[turn].seq}") if turn is not None \
            else self.root
        return self._span(span_id(self.run, event.seq), parent, name, times, attrs, status)

    def _turn_spans(self, turns: dict[int, int],
                    leaves: list[dict[str, Any]]) -> list[dict[str, Any]]:
        members: dict[int, list[int]] = {}
        for i, act in turns.items():
            members.setdefault(act, []).append(i)
        out = []
        for act, indexes in members.items():
            event = self.events[act]
            last = self.events[indexes[-1]]
            start = min(int(leaves[i]["startTimeUnixNano"]) for i in indexes)
            end = max(int(leaves[i]["endTimeUnixNano"]) for i in indexes)
            attrs = [attr("openinference.span.kind", "AGENT"),
                     attr("gen_ai.operation.name", "invoke_agent"),
                     attr("gen_ai.agent.name", str(event.role)),
                     attr("agent.name", str(event.role)),
                     attr("gen_ai.conversation.id", self.run), attr("session.id", self.run),
                     attr("crewbook.span", "turn")]
            text = input_text(event) or event.summary
            if text:
                attrs += [attr("input.value", cap(text)),
                          attr("input.mime_type", "text/plain")]
            if last is not event and (last.summary or last.verdict):
                attrs += [attr("output.value", cap(str(last.summary or last.verdict))),
                          attr("output.mime_type", "text/plain")]
            failed = last.kind == "error" or (last.kind == "verdict" and (
                last.verdict or "").lower() in FAILED_VERDICTS)
            status: dict[str, Any] = {"code": STATUS_ERROR, "message": last.summary or ""} \
                if failed else {"code": STATUS_UNSET}
            if any(self.events[i].ts is None for i in indexes):  # its times were placed too
                attrs.append(attr("crewbook.time_placed", True))
            out.append(self._span(span_id(self.run, f"turn/{event.seq}"), self.root,
                                  f"invoke_agent {event.role}", (start, end), attrs, status))
        return out

    def _root(self, start: int, end: int) -> dict[str, Any]:
        loop = self.events[0].loop
        attrs = [attr("openinference.span.kind", "CHAIN"),
                 attr("gen_ai.operation.name", "invoke_workflow"),
                 attr("gen_ai.conversation.id", self.run), attr("session.id", self.run),
                 attr("crewbook.span", "run")]
        init = next((e for e in self.events if e.kind == "init"), None)
        goal = init.payload.get("goal") if init is not None else None
        text = goal if isinstance(goal, str) and goal else init.summary if init else None
        if text:
            attrs += [attr("input.value", cap(text)), attr("input.mime_type", "text/plain")]
        finish = next((e for e in reversed(self.events) if e.kind == "finish"), None)
        status: dict[str, Any] = {"code": STATUS_UNSET}
        if finish is not None:
            attrs += [attr("output.value", cap(finish.summary or str(finish.verdict))),
                      attr("output.mime_type", "text/plain")]
            failed = (finish.verdict or "").lower() in FAILED_VERDICTS | {"escalated"}
            status = {"code": STATUS_ERROR, "message": finish.summary or str(finish.verdict)} \
                if failed else {"code": STATUS_OK}
            if failed:
                attrs.append(attr("error.type", str(finish.verdict)))
        attrs += run_totals(self.events)
        if any(e.ts is None for e in self.events):
            attrs.append(attr("crewbook.time_placed", True))
        return self._span(self.root, None, f"invoke_workflow {loop}", (start, end), attrs,
                          status)

    def _span(self, sid: str, parent: str | None, name: str, times: tuple[int, int],
              attrs: list[dict[str, Any]], status: dict[str, Any]) -> dict[str, Any]:
        span: dict[str, Any] = {
            "traceId": self.tid, "spanId": sid, "kind": INTERNAL,
            "name": name if len(name) <= NAME_CAP else name[:NAME_CAP - 1] + "…",
            "startTimeUnixNano": str(times[0]), "endTimeUnixNano": str(times[1]),
            "attributes": attrs, "status": status,
        }
        if parent is not None:
            span["parentSpanId"] = parent
        return span


__all__ = ["CREWBOOK_FIELDS", "INPUT_KEYS", "PAYLOAD_CAP", "PROVIDERS", "SCOPE", "TEXT_CAP",
           "TOOL_KEYS", "OtlpExport", "cap", "otlp_export", "provider", "span_id", "to_otlp",
           "trace_id", "write_otlp"]
