"""OTLP protobuf, and delivery of runs straight to an OTLP/HTTP endpoint.

OTLP JSON writes trace and span ids as hex; protobuf's JSON mapping reads ``bytes`` as
base64, so a plain ``json_format.Parse`` of an OTLP JSON file gets the ids wrong.
`to_protobuf` converts the ids first. `send_otlp` posts the spans as
``application/x-protobuf`` (what every OTLP/HTTP receiver takes, Phoenix included),
gzip-compressed, in batches, retrying what the OTLP spec says is retryable (429, 502,
503, 504 and connection errors) with backoff, honouring ``Retry-After``. Span ids are
stable (`otlp_export.span_id`), so sending a run twice does not duplicate it in a
backend that keys spans by id (Phoenix, Jaeger).

Needs ``opentelemetry-proto`` (``pip install 'crewbook[otlp]'``).
"""

from __future__ import annotations

import base64
import gzip
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from ..errors import SendError, UsageError
from .events import LedgerEvent
from .otlp_export import OtlpExport, otlp_export

if TYPE_CHECKING:
    import pandas as pd

#: Spans per request (receivers commonly cap a request at a few MB).
BATCH_SPANS: Final = 512
#: Attempts per request, the first included.
ATTEMPTS: Final = 5
#: HTTP statuses the OTLP spec calls retryable.
RETRYABLE: Final = frozenset({429, 502, 503, 504})
#: Longest wait between attempts, in seconds.
MAX_WAIT: Final = 30.0
TRACES_PATH: Final = "/v1/traces"


@dataclass
class SendResult:
    """What a delivery did: the export's figures, requests made, and spans the
    endpoint said it rejected (OTLP partial success)."""

    export: OtlpExport
    endpoint: str
    requests: int = 0
    retries: int = 0
    rejected: int = 0
    messages: list[str] = field(default_factory=list)


def _proto() -> Any:
    try:
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
    except ImportError:
        raise UsageError("OTLP protobuf needs the opentelemetry-proto package: "
                         "pip install 'crewbook[otlp]'") from None
    return trace_service_pb2


def proto_decode_error() -> type[Exception]:
    """protobuf's ``DecodeError`` (imported only when protobuf is needed)."""
    _proto()
    from google.protobuf.message import DecodeError

    error: type[Exception] = DecodeError
    return error


def to_protobuf(document: Mapping[str, Any]) -> bytes:
    """An OTLP JSON document (`to_otlp`) as the bytes of an ``ExportTraceServiceRequest``
    (deterministic serialisation: the same document gives the same bytes).

    Built field by field, hex ids to bytes: about ten times faster than protobuf's
    ``json_format.ParseDict``, which would also read the hex ids as base64."""
    from google.protobuf import json_format

    request = _proto().ExportTraceServiceRequest()
    for rs in document.get("resourceSpans", []):
        resource_spans = request.resource_spans.add()
        _attributes(resource_spans.resource.attributes,
                    rs.get("resource", {}).get("attributes", []), json_format)
        for ss in rs.get("scopeSpans", []):
            scope_spans = resource_spans.scope_spans.add()
            scope = ss.get("scope", {})
            scope_spans.scope.name = scope.get("name", "")
            for span in ss.get("spans", []):
                out = scope_spans.spans.add()
                out.trace_id = bytes.fromhex(span["traceId"])
                out.span_id = bytes.fromhex(span["spanId"])
                if span.get("parentSpanId"):
                    out.parent_span_id = bytes.fromhex(span["parentSpanId"])
                out.name = span.get("name", "")
                out.kind = int(span.get("kind", 0))
                out.start_time_unix_nano = int(span.get("startTimeUnixNano", 0))
                out.end_time_unix_nano = int(span.get("endTimeUnixNano", 0))
                _attributes(out.attributes, span.get("attributes", []), json_format)
                status = span.get("status", {})
                out.status.code = int(status.get("code", 0))
                if status.get("message"):
                    out.status.message = status["message"]
    data: bytes = request.SerializeToString(deterministic=True)
    return data


def _attributes(target: Any, items: Iterable[Mapping[str, Any]], json_format: Any) -> None:
    for item in items:
        kv = target.add()
        kv.key = item["key"]
        value = item["value"]
        if "stringValue" in value:
            kv.value.string_value = value["stringValue"]
        elif "intValue" in value:
            kv.value.int_value = int(value["intValue"])
        elif "doubleValue" in value:
            kv.value.double_value = float(value["doubleValue"])
        elif "boolValue" in value:
            kv.value.bool_value = bool(value["boolValue"])
        else:  # arrays and key-value lists: protobuf's own JSON mapping
            json_format.ParseDict(value, kv.value)


def from_protobuf(data: bytes) -> dict[str, Any]:
    """The OTLP JSON document (hex ids) of ``ExportTraceServiceRequest`` bytes."""
    from google.protobuf import json_format

    request = _proto().ExportTraceServiceRequest()
    request.ParseFromString(data)
    doc: dict[str, Any] = json_format.MessageToDict(request)
    for rs in doc.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for span in ss.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64decode(span[key]).hex()
    return doc


def traces_url(endpoint: str) -> str:
    """The URL spans are posted to: `endpoint` itself when it ends in ``/v1/traces``,
    else the OTLP/HTTP traces path under it (``http://127.0.0.1:6006`` →
    ``http://127.0.0.1:6006/v1/traces``)."""
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"the OTLP endpoint {endpoint!r} is not an http(s) URL: give one "
                         "such as http://127.0.0.1:6006 or http://localhost:4318/v1/traces")
    if parts.path.rstrip("/").endswith(TRACES_PATH):
        return endpoint
    return endpoint.rstrip("/") + TRACES_PATH


def parse_headers(items: Iterable[str]) -> dict[str, str]:
    """``K=V`` texts (``--header``) as a dict; a text without ``=`` is a `UsageError`."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"a header is KEY=VALUE, not {item!r} (e.g. "
                             "--header 'Authorization=Bearer TOKEN')")
        out[key.strip()] = value.strip()
    return out


def batches(document: Mapping[str, Any], size: int = BATCH_SPANS) -> list[dict[str, Any]]:
    """`document` cut into documents of at most `size` spans each (same resource and
    scope), in order."""
    out: list[dict[str, Any]] = []
    for rs in document.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            spans = ss.get("spans", [])
            for start in range(0, len(spans), size):
                out.append({"resourceSpans": [{
                    "resource": rs.get("resource", {}),
                    "scopeSpans": [{"scope": ss.get("scope", {}),
                                    "spans": spans[start:start + size]}]}]})
    return out


def send_otlp(events: pd.DataFrame | Iterable[LedgerEvent | Mapping[str, Any]],
              endpoint: str, headers: Mapping[str, str] | None = None, *,
              clockless_at: datetime | None = None, project: str | None = None,
              batch_spans: int = BATCH_SPANS, attempts: int = ATTEMPTS,
              timeout: float = 30.0,
              sleep: Callable[[float], None] = time.sleep) -> SendResult:
    """Export ledger events (`otlp_export`) and post them to an OTLP/HTTP endpoint as
    gzip-compressed protobuf, `batch_spans` spans a request. Raises `SendError` when the
    endpoint refuses a batch or stays unreachable after `attempts` tries."""
    url = traces_url(endpoint)
    export = otlp_export(events, clockless_at=clockless_at, project=project)
    result = SendResult(export=export, endpoint=url)
    for batch in batches(export.document, max(1, batch_spans)):
        body = gzip.compress(to_protobuf(batch), mtime=0)
        answer = _post(url, body, dict(headers or {}), attempts, timeout, sleep, result)
        if answer:
            response = _proto().ExportTraceServiceResponse()
            try:
                response.ParseFromString(answer)
            except proto_decode_error():  # a body that is not an OTLP response: nothing to count
                result.messages.append(f"the answer to a batch was not an OTLP response "
                                       f"({len(answer)} bytes)")
                continue
            result.rejected += int(response.partial_success.rejected_spans)
            if response.partial_success.error_message:
                result.messages.append(response.partial_success.error_message)
    return result


def _post(url: str, body: bytes, headers: dict[str, str], attempts: int, timeout: float,
          sleep: Callable[[float], None], result: SendResult) -> bytes:
    request_headers = {"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip",
                       "User-Agent": "crewbook", **headers}
    why = ""
    for attempt in range(max(1, attempts)):
        if attempt:
            result.retries += 1
        request = urllib.request.Request(url, data=body, headers=request_headers,
                                         method="POST")
        wait = min(MAX_WAIT, 0.5 * 2 ** attempt)
        try:
            result.requests += 1
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                data: bytes = answer.read()
                return data
        except urllib.error.HTTPError as exc:
            text = exc.read(500).decode("utf-8", errors="replace").strip()
            why = f"HTTP {exc.code} {exc.reason}" + (f": {text}" if text else "")
            if exc.code not in RETRYABLE:
                raise SendError(f"{url} refused the spans ({why}); check the URL (the "
                                "OTLP/HTTP traces endpoint), the --header values it needs "
                                "(e.g. an API key) and that it takes protobuf") from None
            after = exc.headers.get("Retry-After") if exc.headers else None
            if after and after.strip().isdigit():
                wait = min(MAX_WAIT, float(after.strip()))
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            why = f"cannot connect: {reason}"
        if attempt + 1 < attempts:
            sleep(wait)
    raise SendError(f"could not deliver spans to {url} after {attempts} attempts ({why}); "
                    "is the collector running and reachable?")
