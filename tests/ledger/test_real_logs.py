"""Real agent logs (tests/data/agent_logs/, PROVENANCE.md beside them) import with the
facts computed independently from the raw files (`real_facts`): model calls, tokens
counted once, cost, tool calls, first and last time, model and outcome."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from crewbook import import_runs
from crewbook.ledger.analyses import run_outcomes
from crewbook.ledger.importers import detect, model_calls, tool_calls
from crewbook.ledger.reader import LedgerWarning

from .real_facts import (
    eval_facts,
    mini_facts,
    otlp_facts,
    sdk_facts,
    v0_facts,
    v0_history,
)
from .test_importers import LOGS

MINI = sorted((LOGS / "mini-swe-agent").glob("*.traj.json"))
SDK = sorted(p for p in (LOGS / "openhands-sdk").iterdir())


def _calls(df: pd.DataFrame) -> pd.DataFrame:
    return df[model_calls(df)]


@pytest.mark.parametrize("path", MINI, ids=lambda p: p.name.split(".")[0])
def test_mini_swe_agent_facts(path: Path) -> None:
    facts = mini_facts(path)
    assert detect(path) == "mini-swe-agent"
    df = import_runs(path)
    out = run_outcomes(df).loc[facts["run"]]
    calls = _calls(df)
    assert len(calls) == facts["calls"]
    assert tool_calls(df).sum() == facts["tools"]
    if facts["tokens_in"] is None:
        assert pd.isna(out["tokens_in"])
    else:
        assert (out["tokens_in"], out["tokens_out"]) == (facts["tokens_in"],
                                                         facts["tokens_out"])
    assert out["cost"] == pytest.approx(facts["cost"], abs=1e-12)
    assert out["finished_reason"] == facts["outcome"]
    if facts["first"] is None:
        assert pd.isna(out["started"])
    else:
        assert (out["started"], out["ended"]) == (facts["first"], facts["last"])
    init = df[df["kind"] == "init"].iloc[0]
    assert init["payload"]["model"] == facts["model"]


@pytest.mark.parametrize("path", SDK, ids=lambda p: p.name)
def test_openhands_sdk_facts(path: Path) -> None:
    facts = sdk_facts(path)
    assert detect(path) == "openhands"
    df = import_runs(path)
    (run,) = df["run"].unique()
    out = run_outcomes(df).loc[run]
    assert len(_calls(df)) == facts["calls"]
    tools = df[tool_calls(df)]
    assert list(tools["stage"]) == facts["tool_names"]
    if facts["tokens_in"] is None:  # no usage recorded: unknown, never 0
        assert pd.isna(out["tokens_in"])
        assert pd.isna(out["cost"])
    else:
        assert (out["tokens_in"], out["tokens_out"]) == (facts["tokens_in"],
                                                         facts["tokens_out"])
        assert out["cost"] == pytest.approx(facts["cost"], abs=1e-12)
        models = {p.get("model") for p in df["payload"]} - {None}
        assert models
        assert {m for m in models if isinstance(m, str)} <= set(facts["model"])
    assert (out["started"], out["ended"]) == (facts["first"], facts["last"])
    assert out["finished_reason"] == facts["outcome"] or (
        facts["outcome"] is None and pd.isna(out["finished_reason"]))


def _assert_v0_facts(df: pd.DataFrame, run: str, facts: dict[str, Any]) -> None:
    """An imported V0 history agrees with the facts counted from its raw events."""
    out = run_outcomes(df).loc[run]
    calls = df[model_calls(df)]
    assert calls["tokens_in"].notna().sum() == facts["calls"]  # each response counted once
    if facts["tokens_in"] is None:  # no usage in the log: unknown, never 0
        assert pd.isna(out["tokens_in"])
        assert pd.isna(out["cost"])
    else:
        assert (out["tokens_in"], out["tokens_out"]) == (facts["tokens_in"],
                                                         facts["tokens_out"])
    assert list(df[tool_calls(df)]["stage"]) == facts["tool_names"]
    assert (out["started"], out["ended"]) == (facts["first"], facts["last"])
    assert out["finished_reason"] == facts["outcome"] or (
        facts["outcome"] is None and pd.isna(out["finished_reason"]))
    assert sorted({p["model"] for p in df["payload"] if "model" in p}) == facts["model"]
    if facts["cost"] is not None:  # else unknown, or the price table's estimate
        assert out["cost"] == pytest.approx(facts["cost"], abs=1e-12)


#: V0 session folders (OpenHands' file store: ``events/<id>.json`` and ``metadata.json``).
SESSIONS = sorted(p for p in (LOGS / "openhands").iterdir() if p.is_dir())


@pytest.mark.parametrize("path", sorted((LOGS / "openhands").glob("*.json")) + SESSIONS,
                         ids=lambda p: p.stem)
def test_openhands_v0_facts(path: Path) -> None:
    facts = v0_facts(v0_history(path))
    assert detect(path) == "openhands"
    _assert_v0_facts(import_runs(path), path.stem, facts)


def test_openhands_trajectory_download_keeps_the_usage_of_calls_it_has_no_event_of() -> None:
    """OpenHands' trajectory download (``{"trajectory": [...]}``, a Cloud run of
    gpt-5, cut to its first 13 events) leaves some events out (ids 1 and 2), and its
    running token total counts a call none of the kept events carries: the run keeps
    OpenHands' totals, the difference on one ``usage`` note that is no model call."""
    import json

    path = LOGS / "openhands" / "issue-10730-trajectory.json"
    raw = json.loads(path.read_text(encoding="utf-8"))["trajectory"]
    responses = {e["tool_call_metadata"]["model_response"]["id"]:
                 e["tool_call_metadata"]["model_response"]["usage"]
                 for e in raw if "tool_call_metadata" in e}
    last = [e["llm_metrics"] for e in raw if e.get("llm_metrics")][-1]
    gap = (last["accumulated_token_usage"]["prompt_tokens"]
           - sum(u["prompt_tokens"] for u in responses.values()),
           last["accumulated_token_usage"]["completion_tokens"]
           - sum(u["completion_tokens"] for u in responses.values()))
    assert [e["id"] for e in raw[:3]] == [0, 3, 4]
    assert gap[0] > 0
    assert gap[1] > 0
    df = import_runs(path)
    assert len(_calls(df)) == len(responses)
    notes = df[(df["kind"] == "note") & (df["stage"] == "usage")]
    assert [(n.tokens_in, n.tokens_out) for n in notes.itertuples()] == [gap]
    assert notes["payload"].iloc[0]["totals"] is True
    out = run_outcomes(df).loc[path.stem]
    assert out["cost"] == pytest.approx(last["accumulated_cost"], abs=1e-12)


def test_a_session_event_file_that_is_no_event_is_an_error_naming_it(tmp_path: Path) -> None:
    import shutil

    from crewbook.errors import LedgerError

    folder = tmp_path / "session"
    shutil.copytree(SESSIONS[0], folder)
    (folder / "events" / "5.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(LedgerError) as caught:
        import_runs(folder)
    (problem,) = caught.value.problems
    assert problem.path == str(folder / "events" / "5.json")
    assert "one JSON object" in problem.message


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name)
def test_openhands_v0_session_folder_agrees_with_its_metadata(path: Path) -> None:
    """A V0 session folder (OpenHands 0.48.0's file store, claude-3-7-sonnet) is one run
    named after its conversation: its totals are the ones OpenHands wrote in
    ``metadata.json``, each call's cost is the rise of the running ``accumulated_cost``
    (its ``costs`` lists are empty), its cache tokens add up to OpenHands' own, and each
    event points at its own file."""
    import json

    meta = json.loads((path / "metadata.json").read_text(encoding="utf-8"))
    df = import_runs(path)
    assert set(df["run"]) == {meta["conversation_id"]}
    out = run_outcomes(df).loc[meta["conversation_id"]]
    assert (out["tokens_in"], out["tokens_out"]) == (meta["prompt_tokens"],
                                                     meta["completion_tokens"])
    assert out["cost"] == pytest.approx(meta["accumulated_cost"], abs=1e-12)
    blocks = [e["llm_metrics"] for e in v0_history(path) if e.get("llm_metrics")]
    totals = [b["accumulated_cost"] for b in blocks]
    rises = [b - a for a, b in zip([0.0, *totals], totals, strict=False)]
    assert list(_calls(df)["cost"]) == pytest.approx(rises, abs=1e-12)
    # cache tokens per call, as OpenHands totals them (cache_read/write_tokens)
    counted = blocks[-1]["accumulated_token_usage"]
    calls = list(_calls(df)["payload"])
    assert sum(p["cache_read_tokens"] for p in calls) == counted["cache_read_tokens"]
    assert sum(p["cache_write_tokens"] for p in calls) == counted["cache_write_tokens"]
    records = {p["origin"]["record"] for p in df["payload"]} - {"(end of list)"}
    assert records == {f"events/{f.name}" for f in (path / "events").glob("*.json")}


def test_openhands_v0_evaluation_output_jsonl_with_unpriced_metrics() -> None:
    """A real OpenHands 0.35.0 evaluation line (multi-SWE-bench, V0 history, metrics with
    tokens and no priced call: ``costs`` empty, ``accumulated_cost`` 0.0). The model was
    never priced, so the run's cost is unknown, never 0."""
    import json

    path = LOGS / "openhands-eval" / "multi-swe-bench-ponyc-4595-output.jsonl"
    (line,) = path.read_text(encoding="utf-8").splitlines()
    raw = json.loads(line)
    facts = v0_facts(raw["history"])
    assert "v0.35.0" in raw["metadata"]["eval_output_dir"]
    metrics = raw["metrics"]
    assert (metrics["costs"], metrics["accumulated_cost"]) == ([], 0.0)
    usage = metrics["accumulated_token_usage"]
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (facts["tokens_in"],
                                                                    facts["tokens_out"])
    assert len(metrics["token_usages"]) == facts["calls"]
    assert detect(path) == "openhands"
    df = import_runs(path)
    _assert_v0_facts(df, raw["instance_id"], facts)
    assert df["cost"].isna().all()
    priced = df[df["tokens_in"].notna()]
    assert all(p["cost_estimate"]["status"] == "unpriced" for p in priced["payload"])
    assert pd.isna(run_outcomes(df).loc[raw["instance_id"], "cost"])


def test_openhands_sdk_tool_durations_are_observation_minus_action() -> None:
    path = LOGS / "openhands-sdk" / "cd94562403b9487ebdd4018e3f531dfd"
    import json

    events = [json.loads(p.read_text(encoding="utf-8"))
              for p in sorted((path / "events").glob("event-*.json"))]
    at = {e["id"]: pd.Timestamp(e["timestamp"]) for e in events}
    expected = [int((pd.Timestamp(e["timestamp"]) - at[e["action_id"]]).total_seconds()
                    * 1000) for e in events if e["kind"] == "ObservationEvent"]
    df = import_runs(path)
    assert list(df[tool_calls(df)]["duration_ms"]) == expected


def test_swe_agent_history_only_trajectory() -> None:
    """The ``function_calling_simple`` template writes only ``history``: each assistant
    message is a step, stage = its command."""
    import json

    path = LOGS / "swe-agent-templates" / "function_calling_simple.traj"
    raw = json.loads(path.read_text(encoding="utf-8"))
    steps = [m for m in raw["history"] if m["role"] == "assistant"]
    df = import_runs(path)
    reports = df[tool_calls(df)]
    assert list(reports["stage"]) == [m["action"].split()[0] for m in steps]
    cost: Any = run_outcomes(df).loc[path.stem, "cost"]
    assert pd.isna(cost)


def test_openhands_evaluation_output_jsonl(tmp_path: Path) -> None:
    """An evaluation ``output.jsonl``: one instance per line, its ``history`` a V0 event
    list. These lines wrap the real V0 histories (tests/data/agent_logs/openhands/) in
    the evaluation fields OpenHands writes, with a run total cost in ``metrics`` (the
    run's cost unless its history prices its own calls)."""
    import json

    lines, expected = [], {}
    for n, src in enumerate(sorted((LOGS / "openhands").glob("*.json"))):
        history = v0_history(src)
        instance = f"repo__repo-{n}"
        lines.append(json.dumps({"instance_id": instance, "instruction": "fix it",
                                 "history": history, "test_result": {"git_patch": ""},
                                 "metrics": {"accumulated_cost": 0.25 * (n + 1)}}))
        own = v0_facts(history)["cost"]
        expected[instance] = (len(history), 0.25 * (n + 1) if own is None else own)
    path = tmp_path / "output.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert detect(path) == "openhands"
    df = import_runs(path)
    out = run_outcomes(df)
    assert sorted(out.index) == sorted(expected)
    for instance, (events, cost) in expected.items():
        run = df[df["run"] == instance]
        records = [p["origin"]["record"] for p in run["payload"]]
        # each kept (a model response's call points at the event that carried it)
        assert len({r for r in records if r.startswith(("id ", "["))}) == events
        assert out.loc[instance, "cost"] == pytest.approx(cost)
        lines_seen = {p["origin"]["line"] for p in run["payload"]}
        assert lines_seen == {sorted(expected).index(instance) + 1}


def test_openhands_real_evaluation_output_jsonl() -> None:
    """A real evaluation output.jsonl (OpenHands/benchmarks, agent-SDK histories, no
    metrics recorded): each instance a run with the facts counted from the raw line."""
    path = LOGS / "openhands-eval" / "openagentsafety-gpt-4o-output.jsonl"
    expected = eval_facts(path)
    assert detect(path) == "openhands"
    df = import_runs(path)
    out = run_outcomes(df)
    assert sorted(out.index) == sorted(expected)
    for instance, facts in expected.items():
        run = df[df["run"] == instance]
        assert len(_calls(run)) == facts["calls"]
        assert list(run[tool_calls(run)]["stage"]) == facts["tool_names"]
        row = out.loc[instance]
        assert (row["started"], row["ended"]) == (facts["first"], facts["last"])
        assert row["finished_reason"] == facts["outcome"] or (
            facts["outcome"] is None and pd.isna(row["finished_reason"]))
        assert facts["cost"] is None  # the file records no metrics
        assert pd.isna(row["cost"])  # so the cost is unknown, never 0
        assert pd.isna(row["tokens_in"])
    assert {p["origin"]["line"] for p in df["payload"]} == {1, 2}


@pytest.mark.parametrize(("name", "key"), [
    ("opendevin-prontoqa-gpt-4o-output.jsonl", "id"),
    ("opendevin-gorilla-torch-gpt-4o-output.jsonl", "question_id"),
    ("opendevin-gorilla-hf-gpt-4o-output.jsonl", "question_id")])
def test_opendevin_evaluation_output_jsonl_of_action_observation_pairs(name: str,
                                                                        key: str) -> None:
    """Real evaluation output.jsonl files written by OpenDevin (OpenHands before its
    rename, released in 0.6.0; CodeActAgent 1.5, gpt-4o; ProntoQA, and Gorilla's APIBench
    for torch and Hugging Face hubs): each names its instance by the benchmark's own key
    (``id``, ``question_id``) rather than ``instance_id``, and has a history of ``[action,
    observation]`` pairs whose observation is a placeholder (no id) when the action had
    none. Each line is a run named after its instance, with the facts counted from its
    raw pairs."""
    import json

    path = LOGS / "openhands-eval" / name
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert detect(path) == "openhands"
    df = import_runs(path)
    assert sorted(df["run"].unique()) == sorted(str(r[key]) for r in rows)
    for row in rows:
        assert "instance_id" not in row
        assert all(isinstance(pair, list) and len(pair) == 2 for pair in row["history"])
        events = [e for pair in row["history"] for e in pair if "id" in e]
        placeholders = sum(1 for pair in row["history"] if "id" not in pair[1])
        assert placeholders > 0
        facts = v0_facts(events)
        run = df[df["run"] == str(row[key])]
        _assert_v0_facts(run, str(row[key]), facts)
        records = [p["origin"]["record"] for p in run["payload"]]
        assert sum(r.startswith("id ") for r in records) == len(events)  # each one kept
        assert {p["origin"]["line"] for p in run["payload"]} == {rows.index(row) + 1}


def test_evaluation_totals_with_no_priced_call_give_no_cost(tmp_path: Path) -> None:
    """An evaluation line whose ``metrics`` has totals only (no ``token_usages``), an empty
    ``costs`` and a zero ``accumulated_cost``: the tokens go on the usage note, the cost
    stays unknown (never 0), as OpenHands priced no call."""
    import json

    src = LOGS / "openhands-eval" / "openagentsafety-gpt-4o-output.jsonl"
    row = json.loads(src.read_text(encoding="utf-8").splitlines()[0])
    row["metrics"] = {"accumulated_cost": 0.0, "costs": [], "token_usages": [],
                      "accumulated_token_usage": {"prompt_tokens": 1200,
                                                  "completion_tokens": 34}}
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    df = import_runs(path)
    out = run_outcomes(df).loc[row["instance_id"]]
    assert (out["tokens_in"], out["tokens_out"]) == (1200, 34)
    notes = df[(df["kind"] == "note") & (df["stage"] == "usage")]
    assert len(notes) == 1
    assert notes["cost"].iloc[0] != 0.0  # unknown or the table's estimate, never a logged 0
    assert "cost_estimate" in notes["payload"].iloc[0]


def test_a_v0_list_with_an_event_of_neither_kind_imports_it_as_a_note(
        tmp_path: Path) -> None:
    import json

    raw = json.loads((LOGS / "openhands" / "wrong_initial_state.json").read_text(
        encoding="utf-8"))
    odd = {"id": 999, "timestamp": raw[0]["timestamp"], "source": "agent",
           "message": "a message event"}
    path = tmp_path / "list.json"
    path.write_text(json.dumps([raw[0], odd, *raw[1:]]), encoding="utf-8")
    df = import_runs(path)
    kept = df[df["payload"].map(lambda p: p["origin"].get("record") == "id 999")]
    assert list(kept["kind"]) == ["note"]
    assert kept["payload"].iloc[0]["unknown_type"] == "event without action or observation"


def test_a_folder_of_sdk_conversations_and_streams_imports_each_as_one_run(
        recwarn: pytest.WarningsRecorder) -> None:
    df = import_runs(LOGS / "openhands-sdk")
    assert df["run"].nunique() == len(SDK)
    assert set(df["source"]) == {"openhands"}
    origins = {p["origin"]["file"] for p in df["payload"]}
    assert origins == {str(p) for p in SDK}
    assert not [w for w in recwarn if issubclass(w.category, LedgerWarning)]


@pytest.mark.parametrize("folder", [LOGS / "openhands-sdk" / "cd94562403b9487ebdd4018e3f531dfd",
                                    *SESSIONS], ids=lambda p: p.name)
def test_pointing_at_a_conversation_events_folder_imports_the_conversation(
        folder: Path) -> None:
    pd.testing.assert_frame_equal(import_runs(folder / "events"), import_runs(folder),
                                  check_like=False, obj="frame")


#: The captured OTLP files (GenAI and OpenInference spans; otlp/simple_chat.json is the
#: conventions' example, checked in test_otlp).
CAPTURED = sorted(p for p in [*(LOGS / "otlp").glob("*.json"),
                              *(LOGS / "openinference").glob("*.json")]
                  if p.name != "simple_chat.json")


@pytest.mark.parametrize("path", CAPTURED, ids=lambda p: p.stem)
def test_captured_otlp_facts(path: Path, tmp_path: Path) -> None:
    """Each captured trace imports, through `import_runs` and ``crewbook ledger import
    --from otlp``, with one model call per model-call span (its model, tokens and the
    cost the span records; the others priced and marked an estimate, or left unpriced),
    one tool call per tool span, and the spans' first and last time."""
    from crewbook.commands import main
    from crewbook.ledger.reader import read_ledger

    facts = otlp_facts(path)
    assert len(CAPTURED) >= 10
    assert detect(path) == "otlp"
    ledger = tmp_path / "imported.jsonl"
    assert main(["ledger", "import", str(path), "--from", "otlp", "-o", str(ledger)]) == 0
    for df in (import_runs(path), read_ledger(ledger)):
        calls = _calls(df)
        assert len(calls) == facts["calls"]
        assert sorted(calls["payload"].map(lambda p: p["model"])) == facts["models"]
        for got, want in (("tokens_in", facts["tokens_in"]),
                          ("tokens_out", facts["tokens_out"])):
            assert (calls[got].sum() if want is not None else calls[got].isna().all()) \
                == (want if want is not None else True)
        recorded = calls[~calls["payload"].map(lambda p: bool(p.get("cost_estimate")))]
        assert sorted(recorded["cost"].dropna()) == pytest.approx(facts["costs"])
        assert sorted(df[tool_calls(df)]["payload"].map(lambda p: p["tool"])) \
            == facts["tools"]
        out = run_outcomes(df).loc[facts["run"]]
        assert (out["started"], out["ended"]) == (facts["first"], facts["last"])
