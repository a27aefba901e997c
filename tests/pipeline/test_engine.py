"""The pipeline loop on the seed: to `done`, to `escalated`, refusals without side
effects, failed tries fed back, ground references, write scopes, the journal, rewinds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from crewbook import check_conformance
from crewbook.errors import LoopRefused
from crewbook.ledger import Ledger, read_ledger
from crewbook.pipeline import (
    PipelineLoop,
    PipelineState,
    StageReport,
    Steer,
    load_pipeline,
    parse_report,
)
from crewbook.pipeline.frames import acts, ledger_frame

from .conftest import (
    ANALYSIS,
    APPROVE,
    IMPLEMENT,
    PIPELINES,
    REJECT,
    SEED,
    TO_IMPLEMENTER,
    WORKSPACE,
    fixed_clock,
)


def step_all(loop: PipelineLoop, reports: list[dict[str, Any]]) -> None:
    for report in reports:
        loop.report(report)


def test_seed_steps_to_done(loop: PipelineLoop) -> None:
    assert loop.contract().stage == "analyst"
    step_all(loop, [*TO_IMPLEMENTER, IMPLEMENT, REJECT, IMPLEMENT])
    act = loop.contract()
    assert (act.stage, act.attempt, act.details["round"]) == ("reviewer", 2, 2)
    act = loop.report(APPROVE)
    status = loop.status()
    assert act.finished
    assert act.finished_reason == "done"
    assert status.finished
    assert status.finished_reason == "done"
    assert status.path == ("analyst", "architect", "planner", "implementer", "reviewer",
                           "implementer", "reviewer", "done")
    assert status.details["artifacts"] == {"analysis": 1, "design": 1, "impl_plan": 1,
                                           "patch": 2, "review_report": 2}
    kinds = [e["kind"] for e in loop.ledger.events]  # type: ignore[attr-defined]
    assert kinds[0] == "init"
    assert kinds[-2:] == ["transition", "finish"]
    assert loop.ledger.events[-1]["verdict"] == "done"  # type: ignore[attr-defined]
    # the pipeline's name, not the last artifact the finishing stage produced
    assert loop.ledger.events[-1]["summary"] == (  # type: ignore[attr-defined]
        f"pipeline {loop.pipeline.id} done")
    verdicts = [(e["verdict"], e["version"]) for e in loop.ledger.events  # type: ignore[attr-defined]
                if e["kind"] == "verdict"]
    assert verdicts == [("changes_requested", 1), ("approved", 2)]


def test_seed_steps_to_escalated(loop: PipelineLoop) -> None:
    step_all(loop, [*TO_IMPLEMENTER, IMPLEMENT])
    for _ in range(3):  # implementer.max_retries = 3 rounds back
        loop.report(REJECT)
        assert loop.contract().stage == "implementer"
        assert "sent back by reviewer" in loop.contract().feedback[0]
        loop.report(IMPLEMENT)
    act = loop.report(REJECT)
    status = loop.status()
    assert act.finished
    assert act.finished_reason == "escalated"
    assert status.finished_reason == "escalated"
    assert "4th time; its max_retries allows 3" in status.details["reason"]
    assert next(c for c in status.caps if c.name == "rounds back to implementer").reached
    assert status.journal[-1].kind == "escalation"
    events = loop.ledger.events  # type: ignore[attr-defined]
    assert [e["kind"] for e in events[-2:]] == ["escalate", "finish"]
    assert events[-1]["verdict"] == "escalated"
    with pytest.raises(LoopRefused) as info:
        loop.report(IMPLEMENT)
    assert info.value.code == "finished"


def test_contract_twice_is_equal_and_writes_nothing(loop: PipelineLoop) -> None:
    for report in [None, *TO_IMPLEMENTER]:
        if report is not None:
            loop.report(report)
        before = len(loop.ledger.events)  # type: ignore[attr-defined]
        first, second = loop.contract(), loop.contract()
        assert first == second
        assert first is not second
        assert len(loop.ledger.events) == before  # type: ignore[attr-defined]


def frozen(loop: PipelineLoop) -> tuple[Any, ...]:
    return (repr(loop.status()), loop.status(), loop.contract(),
            json.dumps(loop.artifacts, sort_keys=True),
            json.dumps(loop.ledger.events, sort_keys=True),  # type: ignore[attr-defined]
            loop.acts)


@pytest.mark.parametrize(("report", "code"), [
    ({"stage": "architect", "artifacts": {"design": {}}}, "wrong_stage"),
    ({"stage": "implementer", "artifacts": {"analysis": ANALYSIS}}, "not_produced"),
    ({"stage": "implementer", "writes": ["../etc/passwd"]}, "unsafe_path"),
    ({"stage": "implementer", "artifacts": {"patch": {"files": [1]}}, "writs": []},
     "bad_report"),
    ({"stage": "implementer", "artifacts": {"patch": {"x": float("nan")}}}, "bad_report"),
])
def test_refused_reports_leave_everything_identical(loop: PipelineLoop, report: dict[str, Any],
                                                   code: str) -> None:
    step_all(loop, TO_IMPLEMENTER)
    before = frozen(loop)
    with pytest.raises(LoopRefused) as info:
        loop.report(report)
    assert info.value.code == code
    assert frozen(loop) == before


def test_write_outside_writes_is_scope_creep(tmp_path: Path) -> None:
    folder = tmp_path / "pipes"
    shutil.copytree(PIPELINES, folder, ignore=shutil.ignore_patterns("broken"))
    path = folder / "scoped.toml"
    path.write_text(SEED.read_text("utf-8").replace(
        'allowed_tools = ["file_read", "file_write", "file_edit", "ShellTool"]',
        'allowed_tools = ["file_read", "file_write", "file_edit", "ShellTool"]\n'
        'writes = ["core/sessions/**", "testing/sessions/**"]'))
    pipeline = load_pipeline(path)
    loop = pipeline.loop(folder / "workspace", clock=fixed_clock())
    step_all(loop, TO_IMPLEMENTER)
    before = frozen(loop)
    for writes in (["core/auth/login.py"], ["core/sessions/store.py", "README.md"]):
        with pytest.raises(LoopRefused, match="scope creep") as info:
            loop.report(stage="implementer", writes=writes)
        assert info.value.code == "scope_creep"
        assert frozen(loop) == before
    with pytest.raises(LoopRefused, match="scope creep"):  # files of a file_written artifact
        loop.report(stage="implementer", artifacts={"patch": {"files": ["setup.py"]}})
    assert frozen(loop) == before
    act = loop.report(stage="implementer", writes=["core/sessions/a/deep.py",
                                                   "testing/sessions/check_store.py"])
    assert act.stage == "reviewer"
    assert loop.artifact("patch") == {"files": ["core/sessions/a/deep.py",
                                                "testing/sessions/check_store.py"]}


def test_stage_without_write_tools_cannot_write(loop: PipelineLoop) -> None:
    before = frozen(loop)
    with pytest.raises(LoopRefused) as info:
        loop.report(stage="analyst", artifacts={"analysis": ANALYSIS}, writes=["x.py"])
    assert info.value.code == "cannot_write"
    assert frozen(loop) == before


def test_invalid_artifact_is_a_failed_try_fed_back(loop: PipelineLoop) -> None:
    bad = {**ANALYSIS, "acceptance_criteria": []}  # minItems 1
    act = loop.report(stage="analyst", artifacts={"analysis": bad})
    assert act.stage == "analyst"
    assert act.attempt == 2
    assert act.details["try"] == 2
    assert act.feedback == ("analysis at /acceptance_criteria: [] should be non-empty",)
    assert act.budget["retries_left"] == 1
    act = loop.report(stage="analyst", artifacts={})
    assert act.feedback == ("no 'analysis' artifact was reported",)
    act = loop.report(stage="analyst", artifacts={"analysis": {"summary": 3}})
    assert act.finished
    assert act.finished_reason == "escalated"
    assert "failed 3 times (max_retries 2)" in loop.status().details["reason"]
    outcomes = [e["payload"]["outcome"] for e in loop.ledger.events  # type: ignore[attr-defined]
                if e["kind"] == "report"]
    assert outcomes == ["failed", "failed", "failed"]


def test_invalid_artifact_refused_with_refuse_policy(seed: Any) -> None:
    loop = seed.loop(WORKSPACE, invalid="refuse")
    before = frozen(loop)
    with pytest.raises(LoopRefused, match="should be non-empty") as info:
        loop.report(stage="analyst", artifacts={"analysis": {**ANALYSIS,
                                                             "acceptance_criteria": []}})
    assert info.value.code == "invalid_artifact"
    assert frozen(loop) == before
    with pytest.raises(ValueError, match="retry"):
        seed.loop(invalid="sometimes")


def test_ground_references_misses_are_fed_back(loop: PipelineLoop) -> None:
    hallucinated = {**ANALYSIS, "relevant_files": ["core/sessions/store.py",
                                                   "core/sessions/cache.py"],
                    "summary": "Change `core/session/expiry.py` and see https://x.org/a/b.py"}
    act = loop.report(stage="analyst", artifacts={"analysis": hallucinated})
    assert act.stage == "analyst"
    assert act.feedback == (  # in the order the artifact names them
        "ground_references: 'core/session/expiry.py' does not exist in the workspace",
        "ground_references: 'core/sessions/cache.py' does not exist in the workspace",
    )
    assert loop.report(stage="analyst", artifacts={"analysis": ANALYSIS}).stage == "architect"


def test_ground_references_need_a_workspace(seed: Any) -> None:
    loop = seed.loop()
    hallucinated = {**ANALYSIS, "relevant_files": ["nowhere/x.py"]}
    assert loop.report(stage="analyst", artifacts={"analysis": hallucinated}).stage == "architect"
    assert loop.status().details["grounded"] is False


def test_journal_is_in_every_contract(loop: PipelineLoop) -> None:
    loop.steer("Keep the public API unchanged.")
    step_all(loop, [*TO_IMPLEMENTER, IMPLEMENT, REJECT])
    loop.report(Steer("Release approved by the team lead.", by="lead", kind="approval"))
    act = loop.contract()
    assert [(j.kind, j.by) for j in act.journal] == [
        ("steering", "human"), ("verdict", "reviewer"), ("approval", "lead")]
    assert act.journal[1].text == "review_report.verdict = changes_requested (version 1)"
    assert act.journal == loop.status().journal
    assert act.stage == "implementer"
    notes = [e for e in loop.ledger.events if e["kind"] == "note"]  # type: ignore[attr-defined]
    assert [n["payload"]["journal"] for n in notes] == ["steering", "approval"]


def test_report_forms(loop: PipelineLoop) -> None:
    with pytest.raises(TypeError):
        loop.report({"stage": "analyst"}, summary="x")
    report = parse_report({"stage": "analyst", "artifacts": {"analysis": ANALYSIS},
                           "summary": "read the code", "tokens_in": 900, "cost": 0,
                           "duration_ms": 1200})
    assert isinstance(report, StageReport)
    assert report.cost == 0.0
    loop.report(report)
    event = next(e for e in loop.ledger.events if e["kind"] == "report")  # type: ignore[attr-defined]
    assert event["summary"] == "read the code"
    assert event["tokens_in"] == 900
    assert parse_report({"steer": "x", "kind": "approval"}) == Steer("x", kind="approval")
    for bad in ({"stage": ""}, {"stage": "a", "tokens_in": -1}, {"stage": "a", "tokens_in": True},
                {"stage": "a", "artifacts": []}, {"stage": "a", "summary": 3},
                {"steer": ""}, {"steer": "x", "kind": "order"}, [1]):
        with pytest.raises(LoopRefused) as info:
            parse_report(bad)  # type: ignore[arg-type]
        assert info.value.code == "bad_report"


def test_a_steering_report_names_its_unknown_key() -> None:
    """The one unknown-key guard of every codec (`core.form.refuse_unknown_keys`): the key
    is named, with the keys a steering report has."""
    with pytest.raises(LoopRefused) as info:
        parse_report({"steer": "x", "stear": "y"})
    assert str(info.value) == "a steering report has no key 'stear'; did you mean 'steer'?"
    assert info.value.code == "bad_report"
    with pytest.raises(LoopRefused, match="no key 'zzz'; keys: by, kind, steer"):
        parse_report({"steer": "x", "zzz": "y"})


def test_restore_rewinds_to_an_earlier_act(loop: PipelineLoop) -> None:
    step_all(loop, [*TO_IMPLEMENTER, IMPLEMENT])
    snap = loop.snapshot()
    for _ in range(4):
        loop.report(REJECT)
        if not loop.status().finished:
            loop.report(IMPLEMENT)
    assert loop.status().finished_reason == "escalated"
    act = loop.restore(snap)
    assert act.stage == "reviewer"
    assert loop.acts == 4
    assert loop.report(APPROVE).finished_reason == "done"
    frame = loop.acts_frame()  # the rewind forked the run: acts 1-4 are copied into it
    assert list(frame["act"]) == [*range(1, 6)]
    rows = frame[frame["stage"] == "reviewer"]
    assert list(rows["verdict"].astype(str)) == ["approved"]
    events = loop.ledger.events  # type: ignore[attr-defined]
    before = acts(ledger_frame(loop.ledger), run=events[0]["run"])  # the run it left
    assert list(before["act"]) == [*range(1, 12)]
    rows = before[before["stage"] == "reviewer"]
    assert list(rows["verdict"].astype(str)) == ["changes_requested"] * 4
    forked = [e["kind"] for e in events if e["run"] == loop.run]
    assert "rewind" in forked
    assert forked[-1] == "finish"
    problems = check_conformance(loop.ledger.frame())  # type: ignore[attr-defined]
    assert problems[problems["run"].astype(str) == loop.run].empty


def test_state_round_trips_through_json(loop: PipelineLoop) -> None:
    loop.steer("go")
    step_all(loop, [*TO_IMPLEMENTER, IMPLEMENT, REJECT])
    data = json.loads(json.dumps(loop.state.to_dict()))
    again = PipelineState.from_dict(data)
    assert again == loop.state
    twin = loop.pipeline.loop(WORKSPACE, state=again, acts=loop.acts)
    assert twin.contract() == loop.contract()


def test_artifacts_are_copies(loop: PipelineLoop) -> None:
    mine = json.loads(json.dumps(ANALYSIS))
    loop.report(stage="analyst", artifacts={"analysis": mine})
    mine["summary"] = "changed after reporting"
    loop.artifacts["analysis"]["summary"] = "changed a copy"
    assert loop.artifact("analysis")["summary"] == ANALYSIS["summary"]
    with pytest.raises(KeyError, match="no artifact 'design' yet"):
        loop.artifact("design")


def test_file_ledger_and_acts_frame(seed: Any, tmp_path: Path) -> None:
    with Ledger(tmp_path / "run.jsonl", run="r-1") as ledger:
        loop = seed.loop(WORKSPACE, ledger=ledger, run="r-1")
        step_all(loop, [*TO_IMPLEMENTER, IMPLEMENT, REJECT, IMPLEMENT, APPROVE])
        frame = loop.acts_frame()
    df = read_ledger(tmp_path / "run.jsonl")
    assert list(df["seq"]) == list(range(len(df)))
    assert set(df["loop"].astype(str)) == {"pipeline"}
    assert list(frame["stage"].astype(str)) == ["analyst", "architect", "planner",
                                                "implementer", "reviewer", "implementer",
                                                "reviewer"]
    assert list(frame["verdict"].astype(object).fillna("-")) == [
        "-", "-", "-", "-", "changes_requested", "-", "approved"]
    assert list(frame["next"].astype(str))[-1] == "done"
    assert str(frame["attempt"].dtype) == "Int64"
    assert str(frame["outcome"].dtype) == "category"


def test_uncapped_loop_and_needs_missing_at_runtime(tmp_path: Path) -> None:
    folder = tmp_path / "pipes"
    shutil.copytree(PIPELINES, folder, ignore=shutil.ignore_patterns("broken"))
    text = SEED.read_text("utf-8")
    text = text.replace('token_budget = 32768\nmax_retries = 3\n', 'token_budget = 32768\n')
    path = folder / "uncapped.toml"
    path.write_text(text)
    pipeline = load_pipeline(path)
    assert [w.code for w in pipeline.warnings] == ["uncapped_loop"]
    loop = pipeline.loop(folder / "workspace")
    step_all(loop, [*TO_IMPLEMENTER, IMPLEMENT])
    for _ in range(6):
        step_all(loop, [REJECT, IMPLEMENT])
    assert not loop.status().finished
    caps = {c.name: c for c in loop.status().caps}
    assert caps["rounds back to implementer"].limit is None


def test_replay_and_inspect() -> None:
    from crewbook.pipeline import inspect_pipeline
    from crewbook.pipeline.engine import replay

    pipeline, problems = inspect_pipeline(SEED)
    assert pipeline is not None
    assert problems == []
    loop = replay(pipeline, [*TO_IMPLEMENTER, IMPLEMENT, APPROVE], workspace=WORKSPACE)
    assert loop.status().finished_reason == "done"


def test_restore_with_a_file_ledger(seed: Any, tmp_path: Path) -> None:
    from crewbook.ledger import KINDS

    if "rewind" not in KINDS:
        pytest.skip("the ledger does not accept kind 'rewind' yet (crewbook.ledger.events)")
    with Ledger(tmp_path / "run.jsonl", run="r-1") as ledger:
        loop = seed.loop(WORKSPACE, ledger=ledger, run="r-1")
        step_all(loop, TO_IMPLEMENTER)
        snap = loop.snapshot()
        step_all(loop, [IMPLEMENT, APPROVE])
        loop.restore(snap)
        step_all(loop, [IMPLEMENT, REJECT])
    df = read_ledger(tmp_path / "run.jsonl")
    assert "rewind" in set(df["kind"].astype(str))
