"""crewbook runs in a real Arize Phoenix: sent with ``crewbook ledger export
--otlp-endpoint``, then read back through Phoenix's own REST and GraphQL API.

Phoenix runs from its own virtual environment (``.venv-phoenix`` in the checkout, which
``.ci/run`` installs from ``requirements/phoenix.lock``; or the one ``CREWBOOK_PHOENIX_VENV``
names), on 127.0.0.1 with free ports, its working folder a temporary one, telemetry off,
and is stopped afterwards. The test is skipped, saying so, only when that environment is
absent. A screenshot of Phoenix's trace view goes to ``tests/browser/screenshots/phoenix/``
(CI keeps the folder) when chromium and playwright are there.

Phoenix (20.26) prices tokens itself from its model table and does not read a span's
``llm.cost.*``: its project cost total is its own estimate. The test checks the cost the
spans carry (``llm.cost.total``, as Phoenix returns them) against the ledger.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import crewbook
from crewbook.commands import main
from crewbook.ledger.analyses import run_outcomes
from crewbook.ledger.calls import is_totals
from crewbook.ledger.otlp_export import otlp_export, trace_id
from crewbook.ledger.reader import read_ledger

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("CREWBOOK_PHOENIX_VENV", ROOT / ".venv-phoenix"))
PHOENIX = VENV / "bin" / "phoenix"
DATA = ROOT / "tests" / "data"
SCREENSHOTS = ROOT / "tests" / "browser" / "screenshots" / "phoenix"
CHROMIUM = Path(os.environ.get("CREWBOOK_CHROMIUM", "/usr/bin/chromium"))
PROJECT = "crewbook-runs"
#: Where runs whose source has no clock (SWE-agent) are placed.
CLOCKLESS_AT = "2026-12-01T00:00:00Z"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not PHOENIX.exists(), reason=f"no Phoenix environment at {VENV} "
                       "(.ci/run installs it: python3 -m venv .venv-phoenix && "
                       ".venv-phoenix/bin/pip install -c requirements/phoenix.lock "
                       "arize-phoenix==20.26.1)"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _get(url: str, body: dict[str, Any] | None = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={
        "Content-Type": "application/json"} if data else {})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of a Phoenix started for this module."""
    work = tmp_path_factory.mktemp("phoenix")
    port = _free_port()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work),
           "PHOENIX_WORKING_DIR": str(work), "PHOENIX_HOST": "127.0.0.1",
           "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(_free_port()),
           "PHOENIX_TELEMETRY_ENABLED": "false"}
    log = (work / "phoenix.log").open("w")
    process = subprocess.Popen([str(PHOENIX), "serve"], env=env, cwd=work, stdout=log,
                               stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):  # up to a few minutes on a loaded machine; usually ~30 s
            if process.poll() is not None:
                pytest.fail(f"phoenix serve exited: {(work / 'phoenix.log').read_text()}")
            try:
                with urllib.request.urlopen(url + "/healthz", timeout=2):
                    break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("phoenix serve did not answer /healthz")
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


@dataclass
class Sent:
    """The ledgers sent and what Phoenix holds for them."""

    ledger: pd.DataFrame
    paths: list[Path]
    spans: list[dict[str, Any]]
    traces: list[dict[str, Any]]
    project: dict[str, Any]
    url: str


def _ledgers(folder: Path) -> list[Path]:
    """A crew run on the tour project, a crew run from the history, and the imported
    SWE-agent, aider and OpenHands samples, each as a ledger file."""
    tour = crewbook.example_project(dest=folder / "tour")
    assert main(["--project", str(tour), "crew", "init", "Deliver the CSV export",
                 "--bar", "test=python3 -c pass"]) == 0
    assert main(["--project", str(tour), "crew", "report", "analyst", "done",
                 "Story framed"]) == 0
    paths = [tour / "_codev" / "crew" / "crew.jsonl", DATA / "ledgers/history/run-0001.jsonl"]
    for source in ("swe-agent", "aider", "openhands"):
        out = folder / f"{source}.jsonl"
        assert main(["ledger", "import", str(DATA / "agent_logs" / source), "-o",
                     str(out)]) == 0
        paths.append(out)
    return paths


def _spans(url: str) -> list[dict[str, Any]]:
    spans: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = _get(f"{url}/v1/projects/{PROJECT}/spans?limit=1000"
                    + (f"&cursor={cursor}" if cursor else ""))
        spans += page["data"]
        cursor = page.get("next_cursor")
        if not cursor:
            return spans


def _send(paths: list[Path], url: str) -> None:
    for path in paths:
        code = main(["ledger", "export", str(path), "--otlp-endpoint", url,
                     "--trace-project", PROJECT, "--clockless-at", CLOCKLESS_AT, "--json"])
        assert code == 0


@pytest.fixture(scope="module")
def sent(phoenix: str, tmp_path_factory: pytest.TempPathFactory) -> Sent:
    folder = tmp_path_factory.mktemp("ledgers")
    paths = _ledgers(folder)
    ledger = read_ledger(paths)
    _send(paths, phoenix)
    expected = otlp_export(ledger, clockless_at=datetime(2026, 12, 1, tzinfo=UTC)).spans
    spans: list[dict[str, Any]] = []
    for _ in range(240):  # Phoenix inserts spans in the background
        spans = _spans(phoenix) if _projects(phoenix).get(PROJECT) else []
        if len(spans) >= expected:
            break
        time.sleep(0.5)
    assert len(spans) == expected
    traces = _get(f"{phoenix}/v1/projects/{PROJECT}/traces?limit=1000")["data"]
    project = _project(phoenix)
    return Sent(ledger, paths, spans, traces, project, phoenix)


def _projects(url: str) -> dict[str, str]:
    return {p["name"]: p["id"] for p in _get(url + "/v1/projects")["data"]}


def _project(url: str) -> dict[str, Any]:
    query = """{ projects { edges { node { id name traceCount tokenCountPrompt
               tokenCountCompletion costSummary { total { cost } } } } } }"""
    nodes = [e["node"] for e in _get(url + "/graphql", {"query": query})["data"]["projects"][
        "edges"]]
    node: dict[str, Any] = next(n for n in nodes if n["name"] == PROJECT)
    return node


def test_every_model_call_is_an_llm_span_with_its_model(sent: Sent) -> None:
    by_event = {(s["attributes"]["crewbook.run"], s["attributes"]["crewbook.seq"]): s
                for s in sent.spans if "crewbook.kind" in s["attributes"]}
    assert len(by_event) == len(sent.ledger)
    totals = [is_totals(k, p) for k, p in zip(sent.ledger["kind"], sent.ledger["payload"],
                                              strict=True)]
    calls = sent.ledger[(sent.ledger["tokens_in"].notna() | sent.ledger["tokens_out"].notna()
                         | sent.ledger["cost"].notna()) & ~pd.Series(totals,
                                                                     index=sent.ledger.index)]
    assert len(calls) > 10
    init_models = {r["run"]: r["payload"].get("model") for r in
                   sent.ledger[sent.ledger["kind"] == "init"].to_dict("records")}
    for call in calls.to_dict("records"):
        span = by_event[(call["run"], call["seq"])]
        assert span["span_kind"] == "LLM"
        model = call["payload"].get("model") or init_models.get(call["run"])
        if model:
            assert span["attributes"]["llm.model_name"] == model
            assert span["name"] == f"chat {model}"
    named = [s for s in sent.spans if s["span_kind"] == "LLM"
             and "llm.model_name" in s["attributes"]]
    assert {s["attributes"]["llm.model_name"] for s in named} >= {
        "claude-3-5-sonnet-20240620", "claude-3-5-sonnet-20241022"}
    kinds = {s["span_kind"] for s in sent.spans}
    assert {"LLM", "AGENT", "TOOL", "CHAIN", "EVALUATOR"} <= kinds


def test_token_and_cost_totals_equal_the_ledger_summary(
        sent: Sent, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["ledger", "summary", *map(str, sent.paths), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert sent.project["traceCount"] == sent.ledger["run"].nunique()
    # Phoenix counts LLM spans: the model calls; a run's totals (SWE-agent's model_stats)
    # are attributes of its run span, no call of their own
    runs = [s["attributes"] for s in sent.spans
            if s["attributes"].get("crewbook.span") == "run"]
    assert any("crewbook.run.tokens_in" in a for a in runs)
    assert sent.project["tokenCountPrompt"] + sum(
        a.get("crewbook.run.tokens_in", 0) for a in runs) == summary["tokens_in"]
    assert sent.project["tokenCountCompletion"] + sum(
        a.get("crewbook.run.tokens_out", 0) for a in runs) == summary["tokens_out"]
    cost = sum(s["attributes"].get("llm.cost.total", 0.0) for s in sent.spans) + sum(
        a.get("crewbook.run.cost", 0.0) for a in runs)
    # the summary gives cost to 6 decimals, rounded from a sum taken in another order
    assert cost == pytest.approx(summary["cost"], abs=1e-6)


def test_each_trace_lasts_its_runs_wall_time(sent: Sent) -> None:
    outcomes = run_outcomes(sent.ledger)
    traces = {t["trace_id"]: t for t in sent.traces}
    checked = 0
    for run, row in outcomes.iterrows():
        trace = traces[trace_id(str(run))]
        latency = pd.Timestamp(trace["end_time"]) - pd.Timestamp(trace["start_time"])
        events = sent.ledger[sent.ledger["run"] == run]
        if events["ts"].isna().all():  # no clock: placed, lasting the sum of its steps
            expected = pd.to_timedelta(int(events["duration_ms"].sum()), unit="ms")
        elif pd.isna(row["duration"]):
            continue  # some events untimed: the wall time is unknown
        else:
            expected = row["duration"]
        assert latency == expected, run
        checked += 1
    assert checked >= 4


def test_no_span_is_older_than_its_run(sent: Sent) -> None:
    df = sent.ledger
    # a run starts at its first event, or earlier by what that event measured
    began = (df["ts"] - pd.to_timedelta(df["duration_ms"].fillna(0).astype("int64"),
                                        unit="ms")).groupby(df["run"]).min()
    for span in sent.spans:
        run = span["attributes"].get("crewbook.run") or span["attributes"]["session.id"]
        start = pd.Timestamp(span["start_time"])
        assert start.year >= 2024  # never 1970
        if not pd.isna(began[run]):
            assert start >= began[run], (run, span["name"])


def test_a_resent_run_adds_no_span(sent: Sent, tmp_path: Path) -> None:
    ledger = DATA / "ledgers/history/run-0001.jsonl"
    assert main(["ledger", "export", str(ledger), "--otlp-endpoint", sent.url,
                 "--trace-project", PROJECT]) == 0
    time.sleep(3)  # what Phoenix would insert, it inserts within a second or two
    assert len(_spans(sent.url)) == len(sent.spans)


def test_a_screenshot_of_the_trace_view(sent: Sent) -> None:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright package is not installed: no screenshot")
    if not CHROMIUM.exists() and shutil.which("chromium") is None:
        pytest.skip(f"no chromium at {CHROMIUM}: no screenshot")
    project = _projects(sent.url)[PROJECT]
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    # a crew run (turns, bars, verdicts) and an OpenHands run (model calls named)
    shots = {"trace-crew-run-0001.png": ("run-0001", "invoke_workflow crew"),
             "trace-openhands.png": ("basic_gui_mode", "chat claude-3-5-sonnet-20241022")}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                    args=["--no-sandbox", "--disable-gpu",
                                          "--disable-dev-shm-usage"])
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            for name, (run, text) in shots.items():
                page.goto(f"{sent.url}/projects/{project}/traces/{trace_id(run)}",
                          wait_until="networkidle", timeout=120_000)
                page.get_by_text(text).first.wait_for(timeout=120_000)
                page.screenshot(path=str(SCREENSHOTS / name), full_page=True)
        finally:
            browser.close()
    for name in shots:
        assert (SCREENSHOTS / name).stat().st_size > 10_000
