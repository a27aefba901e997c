"""The crew tools held (D1–D9) through `call_tool`, the functions the MCP server runs:
a blank bar, task_classify in the active story, size caps, QA's failing tail, crew_init's
starting change and bar timeout, autonomy modes, hints reachable from the caller."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from crewbook import ChangeNotFoundError, CrewError, LoopRefused
from crewbook.core.toolbox import BY_NAME, call_tool
from crewbook.crew import crew_init, crew_report, crew_status, crew_step
from crewbook.crew.model import ECHO_CHARS, MAX_SUMMARY_CHARS

from .conftest import GREEN, RED


def test_a_blank_bar_command_is_refused(project: Path) -> None:
    for bar in ({"test": "   "}, {"test": {"command": " \t"}}):
        with pytest.raises(CrewError) as exc:
            call_tool("crew_init", {"goal": "g", "bar": bar}, project)
        assert "the command is blank" in str(exc.value)
    with pytest.raises(CrewError, match="blank"):
        crew_init("g", bar={"test": "   "}, project=project)
    assert not (project / "_codev" / "crew" / "state.json").exists()


def test_task_classify_resolves_the_task_in_the_active_story(project: Path) -> None:
    call_tool("crew_init", {"goal": "g", "bar": {"test": GREEN}}, project)
    route = call_tool("task_classify", {"task_id": "1.2", "complexity": "complex"}, project)
    assert route["task"] == "1.2"
    assert route["change"] == "add-csv-export"
    shown = call_tool("task_route_show", {"task_id": "1.2"}, project)
    assert shown["change"] == "add-csv-export"
    with pytest.raises(CrewError) as exc:
        call_tool("task_classify", {"task_id": "9.9", "complexity": "simple"}, project)
    assert exc.value.codes == ["unknown_task"]
    assert "1.1, 1.2" in str(exc.value.problems[0])


def test_summary_and_inline_payload_are_capped(project: Path) -> None:
    crew_init("g", bar={"test": GREEN}, project=project)
    with pytest.raises(CrewError):  # the tool's schema
        call_tool("crew_report", {"role": "analyst", "verdict": "done",
                                  "summary": "x" * (MAX_SUMMARY_CHARS + 1)}, project)
    with pytest.raises(LoopRefused, match="over 4000"):  # the engine, for every caller
        crew_report("analyst", "done", "x" * (MAX_SUMMARY_CHARS + 1), project=project)
    with pytest.raises(CrewError) as exc:
        crew_report("analyst", "done", "ok", {"blob": "y" * (5 * 2**20)}, project=project)
    assert exc.value.codes == ["payload_too_large"]
    crew_report("analyst", "done", "framed", project=project)
    crew_report("developer", "done", "built", project=project)
    long = "z" * 3000
    crew_report("qa", "no-go", long, {"findings": ["f" * 3000] * 50}, project=project)
    status = crew_status(project=project).to_dict()
    assert all(len(r["summary"]) <= ECHO_CHARS for r in status["details"]["ledger"])
    act = crew_step(project=project)
    assert len(act.feedback) == 21  # the summary and at most 20 findings
    assert all(len(f) <= ECHO_CHARS for f in act.feedback)
    assert all(len(j.text) <= ECHO_CHARS + 20 for j in act.journal)


def test_qa_contract_carries_the_failing_output_tail(project: Path) -> None:
    crew_init("g", bar={"test": RED}, project=project)
    crew_report("analyst", "done", "framed", project=project)
    act = crew_report("developer", "done", "built", project=project)
    assert act.role == "qa"
    assert "boom" in act.details["bar"]["tails"]["test"]
    assert act.prompt_path is not None
    prompt = json.loads((project / act.prompt_path).read_text())["prompt"]
    assert "End of the failing test output" in prompt
    assert "boom" in prompt


def test_crew_init_over_the_tools_sets_the_change_and_the_bar_timeout(project: Path) -> None:
    status = call_tool("crew_init", {"goal": "g", "bar": {"test": GREEN},
                                     "change": "add-csv-export", "bar_timeout": 42}, project)
    assert status["details"]["pointer"]["epic"] == "add-csv-export"
    state = json.loads((project / "_codev" / "crew" / "state.json").read_text())
    assert state["config"]["bar_timeout"] == 42
    with pytest.raises(ChangeNotFoundError, match="no-such-change"):
        call_tool("crew_init", {"goal": "g", "bar": {"test": GREEN}, "force": True,
                                "change": "no-such-change"}, project)


def test_a_finished_loop_says_what_the_caller_can_do(project: Path) -> None:
    crew_init("g", scope="story", bar={"test": GREEN}, project=project)
    for role, verdict in (("analyst", "done"), ("developer", "done"), ("qa", "go")):
        crew_report(role, verdict, f"{role} {verdict}", project=project)
    with pytest.raises(LoopRefused) as exc:
        call_tool("crew_report", {"role": "analyst", "verdict": "done", "summary": "more"},
                  project)
    assert "restore()" not in str(exc.value)
    assert "crew_init" in str(exc.value)


def test_nothing_to_deliver_reads_right(project: Path) -> None:
    (project / "_codev" / "changes" / "add-csv-export" / "tasks.md").write_text(
        "# Tasks\n\n## Done\n\n- [x] 1.1 done\n")
    with pytest.raises(CrewError) as exc:
        crew_init("g", bar={"test": GREEN}, project=project)
    text = str(exc.value.problems[0])
    assert "no change has an open story;" in text
    assert "is empty" not in text


def test_semi_auto_gates_and_disables(project: Path) -> None:
    (project / "_codev" / "crew.yaml").write_text("autonomy: semi-auto\n")
    with pytest.raises(LoopRefused) as exc:
        call_tool("crew_init", {"goal": "g", "bar": {"test": GREEN}}, project)
    assert exc.value.code == "needs_approval"
    assert "crewbook crew init" in str(exc.value)
    assert not (project / "_codev" / "crew" / "state.json").exists()
    call_tool("crew_init", {"goal": "g", "bar": {"test": GREEN}}, project, approved=True)
    with pytest.raises(LoopRefused) as off:
        call_tool("loop_init", {"goal": "g"}, project, approved=True)
    assert off.value.code == "disabled"
    assert call_tool("crew_status", {}, project)["details"]["expected_role"] == "analyst"
    crew_step(project=project)  # the library (the user's own hand) is not gated


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_a_crew_file_that_is_a_loop_of_links_fails_closed(project: Path) -> None:
    """A `_codev/crew.yaml` that cannot be read is not "no policy": a gated tool is
    refused with the file named, and nothing is started."""
    crew_file = project / "_codev" / "crew.yaml"
    crew_file.symlink_to(project / "_codev" / "other.yaml")
    (project / "_codev" / "other.yaml").symlink_to(crew_file)
    with pytest.raises(CrewError) as exc:
        call_tool("crew_init", {"goal": "g", "bar": {"test": GREEN}}, project)
    assert exc.value.problems[0].code == "crew_file_unreadable"
    assert not (project / "_codev" / "crew" / "state.json").exists()


def test_each_tool_says_its_stability_and_scope() -> None:
    assert BY_NAME["crew_init"].full_description.endswith(
        "[Stability: beta · scope: project] Gated (semi-auto): acts once the user approves.")
    assert "[Stability: stable · scope: no project] Read-only." in \
        BY_NAME["provider_profile_show"].full_description
    assert "scope: story" in BY_NAME["task_classify"].full_description
    assert "disabled in semi-auto" in BY_NAME["loop_init"].full_description
    assert BY_NAME["crew_status"].read_only
    assert BY_NAME["crew_step"].idempotent
    assert not BY_NAME["crew_report"].read_only


def test_the_autonomous_loop_writes_prompts_and_takes_a_summary(project: Path) -> None:
    call_tool("loop_init", {"goal": "Ship the export"}, project)
    first = project / "_codev" / "crew" / "prompts"
    prompts = sorted(p.name for p in first.glob("*-step-0001-plan.json"))
    assert len(prompts) == 1
    act = call_tool("loop_step", {"summary": "planned the export and its tests"}, project)
    assert act["stage"] == "implementation"
    text = json.loads((project / act["prompt_path"]).read_text())["prompt"]
    assert "Goal: Ship the export" in text
    assert "Phase: implementation" in text
    ledger = (project / "_codev" / "crew" / "loop.jsonl").read_text()
    assert "planned the export and its tests" in ledger
    with pytest.raises(CrewError):
        call_tool("loop_step", {"summary": "s" * (MAX_SUMMARY_CHARS + 1)}, project)


def test_a_fifo_payload_path_is_not_called_missing(project: Path) -> None:
    crew_init("g", bar={"test": GREEN}, project=project)
    fifo = project / "payload.fifo"
    os.mkfifo(fifo)
    with pytest.raises(CrewError) as exc:
        crew_report("analyst", "done", "framed", payload_path="payload.fifo", project=project)
    assert exc.value.codes == ["payload_not_file"]
    assert "no such file" not in str(exc.value)
