"""The autonomous loop (D6): plan → implementation → recette → delivery, the recette
through the bar runner, capped; the test command from a declared stack."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import crewbook
from crewbook.autonomous import loop_init, loop_step, open_autonomous
from crewbook.autonomous.model import LOOP_LEDGER, LOOP_STATE_FILE
from crewbook.errors import CrewError, LoopRefused

from .conftest import GREEN, RED


def test_autonomous_loop_delivers(project: Path) -> None:
    loop_init("Ship 1.4.1", project=project)
    phases = [loop_step(project=project).stage for _ in range(2)]
    assert phases == ["implementation", "recette"]
    act = loop_step(GREEN, project=project)
    assert act.stage == "delivery"
    assert loop_step(project=project).finished_reason == "delivered"
    df = crewbook.read_ledger(project / LOOP_LEDGER)
    assert list(df["kind"].astype(str)) == ["init", "plan", "transition", "report",
                                            "transition", "bar", "verdict", "transition",
                                            "report", "finish"]
    assert crewbook.run_outcomes(df).loc["loop-1", "finished_reason"] == "delivered"


def test_failed_recette_goes_back_to_implementation_and_is_capped(project: Path) -> None:
    loop_init("Ship", project=project, max_recettes=2)
    loop_step(project=project)
    loop_step(project=project)
    act = loop_step(RED, project=project)
    assert act.stage == "implementation"
    assert act.attempt == 2
    loop_step(project=project)
    act = loop_step(RED, project=project)
    assert act.finished
    assert act.finished_reason == "recette_exhausted"
    status = open_autonomous(project).status()
    assert status.counters["recettes"] == 2
    assert status.caps[0].reached
    kinds = [json.loads(x)["kind"] for x in (project / LOOP_LEDGER).read_text().splitlines()]
    assert kinds[-2:] == ["escalate", "finish"]


def test_recette_without_a_declared_stack_is_refused_clearly(project: Path) -> None:
    loop_init("Ship", project=project)
    loop_step(project=project)
    loop_step(project=project)
    before = ((project / LOOP_LEDGER).read_bytes(), (project / LOOP_STATE_FILE).read_bytes())
    with pytest.raises(LoopRefused, match="test_command") as exc:
        loop_step(project=project)
    assert exc.value.code == "no_test_command"
    assert "_codev/crew.yaml" in str(exc.value)
    assert before == ((project / LOOP_LEDGER).read_bytes(),
                      (project / LOOP_STATE_FILE).read_bytes())


def test_recette_defaults_to_the_first_declared_stack(project: Path) -> None:
    (project / "_codev" / "crew.yaml").write_text(
        f"stacks:\n  - name: web\n    lint: eslint .\n  - name: app\n    test: {GREEN}\n")
    loop_init("Ship", project=project)
    loop_step(project=project)
    act = loop_step(project=project)
    assert act.details["default_test_command"] == GREEN
    assert loop_step(project=project).stage == "delivery"


def test_crew_file_errors_name_the_file_and_line(project: Path) -> None:
    crew_file = project / "_codev" / "crew.yaml"
    crew_file.write_text("stacks:\n  - name: web\n  - name: go\n  - name: go\n")
    loop_init("Ship", project=project)
    loop_step(project=project)
    act = loop_step(project=project)  # the contract says what is wrong, never raises
    assert "stack_without_commands" in act.details["crew_file_problem"]
    with pytest.raises(CrewError) as exc:
        loop_step(project=project)
    assert exc.value.codes == ["stack_without_commands", "duplicate_stack"]
    assert "_codev/crew.yaml:2" in str(exc.value)
    assert "_codev/crew.yaml:4" in str(exc.value)
    crew_file.write_text("workshp: []\n")
    with pytest.raises(CrewError, match="did you mean 'workshop'"):
        loop_step(project=project)


def test_autonomous_drawing_highlights_the_phase(project: Path) -> None:
    loop_init("Ship", project=project)
    loop_step(project=project)
    loop = open_autonomous(project)
    model = loop.graph_model()
    assert model.nodes["implementation"].emphasis
    assert model.nodes["plan"].status == "done"
    assert loop.contract().route is not None
    assert loop.contract().route["role"] == "developer"


def test_a_second_loop_is_refused_in_python_words(project: Path) -> None:
    """The API's refusal names the option as Python writes it (the command line and MCP
    say ``--force`` and ``"force": true``, tests/commands)."""
    from crewbook.errors import AlreadyExistsError

    loop_init("Ship", project=project)
    with pytest.raises(AlreadyExistsError, match="pass force=True to start a new one") as info:
        loop_init("Ship again", project=project)
    assert "--force" not in str(info.value)
    assert info.value.said_to("mcp").endswith('pass "force": true to start a new one')
    assert loop_init("Ship again", project=project, force=True).details["goal"] == "Ship again"
