"""OTLP protobuf and direct delivery: the bytes a receiver parses, and a local receiver
that answers as real ones do (a 503 first, a refusal, a partial success)."""

from __future__ import annotations

import base64
import gzip
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from crewbook import import_runs, read_ledger
from crewbook.commands import main
from crewbook.errors import LedgerError, SendError, UsageError
from crewbook.ledger.otlp import otlp_events
from crewbook.ledger.otlp_export import to_otlp
from crewbook.ledger.otlp_send import (
    from_protobuf,
    parse_headers,
    send_otlp,
    to_protobuf,
    traces_url,
)

HISTORY = Path(__file__).resolve().parents[1] / "data" / "ledgers" / "history"


@pytest.fixture(scope="module")
def runs() -> pd.DataFrame:
    return read_ledger(sorted(HISTORY.glob("*.jsonl"))[:3])


class Receiver:
    """An OTLP/HTTP receiver on 127.0.0.1: keeps what it is sent; `answers` lists the
    status of each request in turn (then 200)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.answers: list[int] = []
        self.body = b""
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests.append({"path": self.path, "headers": dict(self.headers),
                                          "body": raw})
                code = receiver.answers.pop(0) if receiver.answers else 200
                self.send_response(code)
                self.send_header("Content-Type", "application/x-protobuf")
                if code == 429:
                    self.send_header("Retry-After", "0")
                self.end_headers()
                self.wfile.write(receiver.body if code == 200 else b"no")

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def spans(self) -> list[dict[str, Any]]:
        out = []
        for request in self.requests:
            doc = from_protobuf(gzip.decompress(request["body"]))
            out += [s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"]
                    for s in ss["spans"]]
        return out


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.server.shutdown()
    r.server.server_close()


def test_protobuf_holds_the_same_spans_with_hex_ids(runs: pd.DataFrame) -> None:
    doc = to_otlp(runs)
    data = to_protobuf(doc)
    request = trace_service_pb2.ExportTraceServiceRequest()
    request.ParseFromString(data)
    span = request.resource_spans[0].scope_spans[0].spans[0]
    first = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert span.trace_id.hex() == first["traceId"]  # not base64 read as bytes
    assert span.span_id.hex() == first["spanId"]
    assert span.start_time_unix_nano == int(first["startTimeUnixNano"])
    back = from_protobuf(data)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert [s["spanId"] for s in back] == [
        s["spanId"] for s in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]]
    assert to_protobuf(doc) == data  # deterministic


def test_protobuf_is_what_protobufs_own_json_mapping_gives(runs: pd.DataFrame) -> None:
    """The reference: ParseDict, once the hex ids are written as the base64 it expects."""
    from google.protobuf import json_format

    doc = to_otlp(runs)
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["attributes"].append(
        {"key": "list", "value": {"arrayValue": {"values": [{"intValue": "1"}]}}})
    reference = json.loads(json.dumps(doc))
    for span in reference["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        for key in ("traceId", "spanId", "parentSpanId"):
            if key in span:
                span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    request = trace_service_pb2.ExportTraceServiceRequest()
    json_format.ParseDict(reference, request)
    assert to_protobuf(doc) == request.SerializeToString(deterministic=True)


def test_a_protobuf_file_imports_back_to_the_same_events(runs: pd.DataFrame,
                                                         tmp_path: Path) -> None:
    path = tmp_path / "spans.pb"
    path.write_bytes(to_protobuf(to_otlp(runs)))
    events = otlp_events(path, str(path))
    assert len(events) == len(runs)
    assert [e.seq for e in events] == list(runs["seq"])
    binary = tmp_path / "spans"  # no .pb: found by its content
    binary.write_bytes(path.read_bytes())
    back = import_runs(binary)
    pd.testing.assert_frame_equal(back.drop(columns="source"), runs)


def test_a_broken_protobuf_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "spans.pb"
    path.write_bytes(b"\n\xff\xff\xff\xff\x0f")
    with pytest.raises(LedgerError, match="not an OTLP protobuf"):
        import_runs(path)


def test_sent_in_gzip_batches_with_headers(runs: pd.DataFrame, receiver: Receiver) -> None:
    result = send_otlp(runs, receiver.url, {"Authorization": "Bearer t"}, batch_spans=40,
                       sleep=lambda s: None)
    total = result.export.spans
    assert result.requests == len(receiver.requests) == -(-total // 40) > 1
    for request in receiver.requests:
        assert request["path"] == "/v1/traces"
        assert request["headers"]["Content-Type"] == "application/x-protobuf"
        assert request["headers"]["Content-Encoding"] == "gzip"
        assert request["headers"]["Authorization"] == "Bearer t"
    sent = receiver.spans()
    assert len(sent) == total
    assert len({s["spanId"] for s in sent}) == total
    assert sorted(s["spanId"] for s in sent) == sorted(
        s["spanId"] for s in to_otlp(runs)["resourceSpans"][0]["scopeSpans"][0]["spans"])


def test_a_resent_run_has_the_same_ids(runs: pd.DataFrame, receiver: Receiver) -> None:
    send_otlp(runs, receiver.url)
    first = {s["spanId"] for s in receiver.spans()}
    receiver.requests.clear()
    send_otlp(runs, receiver.url)
    assert {s["spanId"] for s in receiver.spans()} == first


def test_retryable_answers_are_retried(runs: pd.DataFrame, receiver: Receiver) -> None:
    receiver.answers = [503, 429]
    waits: list[float] = []
    result = send_otlp(runs, receiver.url, sleep=waits.append)
    assert result.retries == 2
    assert waits == [0.5, 0.0]  # backoff, then the 429's Retry-After: 0
    assert len(receiver.spans()) == result.export.spans * 3  # the same batch three times


def test_a_refusal_is_a_clear_error_without_retries(runs: pd.DataFrame,
                                                    receiver: Receiver) -> None:
    receiver.answers = [415]
    with pytest.raises(SendError, match="HTTP 415"):
        send_otlp(runs, receiver.url, sleep=lambda s: None)
    assert len(receiver.requests) == 1


def test_an_unreachable_endpoint_fails_after_its_attempts(runs: pd.DataFrame,
                                                         receiver: Receiver) -> None:
    url = receiver.url
    receiver.server.shutdown()
    receiver.server.server_close()
    waits: list[float] = []
    with pytest.raises(SendError, match="after 3 attempts"):
        send_otlp(runs, url, attempts=3, sleep=waits.append)
    assert waits == [0.5, 1.0]


def test_partial_success_is_reported(runs: pd.DataFrame, receiver: Receiver) -> None:
    response = trace_service_pb2.ExportTraceServiceResponse()
    response.partial_success.rejected_spans = 2
    response.partial_success.error_message = "2 spans too old"
    receiver.body = response.SerializeToString()
    result = send_otlp(runs, receiver.url)
    assert result.rejected == 2
    assert result.messages == ["2 spans too old"]


def test_endpoints_and_headers() -> None:
    assert traces_url("http://127.0.0.1:6006") == "http://127.0.0.1:6006/v1/traces"
    assert traces_url("http://h:4318/v1/traces") == "http://h:4318/v1/traces"
    assert traces_url("https://cloud.langfuse.com/api/public/otel/") \
        == "https://cloud.langfuse.com/api/public/otel/v1/traces"
    with pytest.raises(UsageError, match="not an http"):
        traces_url("127.0.0.1:6006")
    assert parse_headers(["a=b=c", " x = y "]) == {"a": "b=c", "x": "y"}
    with pytest.raises(UsageError, match="KEY=VALUE"):
        parse_headers(["novalue"])


def test_the_command_sends_and_writes_protobuf(receiver: Receiver, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    ledger = sorted(HISTORY.glob("*.jsonl"))[0]
    out = tmp_path / "spans.pb"
    code = main(["ledger", "export", str(ledger), "--otlp-endpoint", receiver.url,
                 "--header", "api_key=k", "--format", "protobuf", "-o", str(out), "--json"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["spans"] == len(receiver.spans()) > 0
    assert doc["endpoint"] == receiver.url + "/v1/traces"
    headers = {k.lower(): v for k, v in receiver.requests[0]["headers"].items()}
    assert headers["api_key"] == "k"  # HTTP header names are case-insensitive
    assert from_protobuf(out.read_bytes()) == from_protobuf(
        gzip.decompress(receiver.requests[0]["body"]))


def test_the_command_says_what_it_did_with_times(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    traj = Path(__file__).resolve().parents[1] / "data" / "agent_logs" / "swe-agent"
    ledger = tmp_path / "swe.jsonl"
    assert main(["ledger", "import", str(traj), "-o", str(ledger)]) == 0
    capsys.readouterr()
    assert main(["ledger", "export", str(ledger), "--otlp", "-o",
                 str(tmp_path / "a.json")]) == 0
    assert "left out 1 run with no clock at all" in capsys.readouterr().out
    assert main(["ledger", "export", str(ledger), "-o", str(tmp_path / "b.json"),
                 "--clockless-at", "2026-01-05T12:00:00Z"]) == 0
    assert "12 events without a clock placed" in capsys.readouterr().out  # 5 steps x 2 + 2
    assert main(["ledger", "export", str(ledger), "-o", str(tmp_path / "c.json"),
                 "--clockless-at", "yesterday"]) == 2
    assert "--clockless-at takes an ISO-8601 time" in capsys.readouterr().err
    assert main(["ledger", "export", str(ledger)]) == 2


def test_the_command_names_a_refusing_endpoint(receiver: Receiver, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    receiver.answers = [401]
    ledger = sorted(HISTORY.glob("*.jsonl"))[0]
    assert main(["ledger", "export", str(ledger), "--otlp-endpoint", receiver.url]) == 1
    err = capsys.readouterr().err
    assert "refused the spans (HTTP 401" in err
    assert "Traceback" not in err
