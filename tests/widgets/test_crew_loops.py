"""The Stepper on the crew and autonomous loops (issue 10), through their adapters."""

from __future__ import annotations

import html
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

import crewbook
from crewbook.autonomous.form import AutonomousForm
from crewbook.crew.form import CrewForm
from crewbook.widgets import Stepper
from crewbook.widgets.proposals import adapter_for

GREEN = f"{shlex.quote(sys.executable)} -c \"print('ok')\""
TASKS = "# Tasks\n\n## Export\n\n- [ ] 1.1 Add the button\n- [ ] 1.2 Write the file\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CREWBOOK_HOME", str(tmp_path / "home"))
    root = Path(crewbook.example_project())
    (root / "_codev" / "changes" / "add-csv-export" / "tasks.md").write_text(TASKS)
    return root


def test_crew_loop_steps_to_its_end(project: Path) -> None:
    crewbook.crew_init("goal", scope="story", bar={"test": GREEN}, project=project)
    loop = crewbook.open_crew(project)
    stepper = loop.stepper()
    assert isinstance(adapter_for(loop), CrewForm)
    assert (stepper.role.value, stepper.verdict.options) == ("analyst", ("done",))
    stepper.role.value = "qa"
    stepper.step_button.click()
    assert "refused [wrong_role]" in stepper.message.value
    assert loop.acts == 0
    stepper.propose_button.click()
    stepper.run_count.value = 10
    stepper.run_button.click()
    assert loop.status().finished_reason == "scope_covered"
    assert crewbook.open_crew(project).acts == loop.acts, "the crew loop saved every act"


def test_crew_qa_can_send_work_back(project: Path) -> None:
    crewbook.crew_init("goal", scope="story", bar={"test": GREEN}, project=project)
    loop = crewbook.open_crew(project)
    stepper = Stepper(loop)
    stepper.run_count.value = 2
    stepper.run_button.click()
    assert loop.contract().role == "qa"
    assert stepper.verdict.options == ("go", "no-go")
    stepper.verdict.value = "no-go"
    stepper.set_field("payload", {"findings": ["no BOM"]})
    stepper.step_button.click()
    assert loop.contract().role == "developer"
    assert any("no BOM" in f for f in loop.contract().feedback)


def test_autonomous_loop_steps_and_refuses_a_recette_without_tests(project: Path) -> None:
    crewbook.loop_init("goal", project=project)
    loop = crewbook.open_autonomous(project)
    stepper = loop.stepper()
    assert isinstance(adapter_for(loop), AutonomousForm)
    stepper.run_count.value = 5
    stepper.run_button.click()
    assert loop.contract().stage == "recette"
    assert "refused [no_test_command]" in stepper.message.value
    assert loop.acts == 2, "the refused recette changed nothing"


def test_autonomous_stepper_saves_like_loop_step(project: Path) -> None:
    (project / "_codev" / "crew.yaml").write_text(f"stacks:\n  - name: app\n    test: {GREEN}\n")
    crewbook.loop_init("goal", project=project)
    loop = crewbook.open_autonomous(project)
    stepper = loop.stepper()
    stepper.step_button.click()
    stepper.step_button.click()
    assert loop.acts == 2
    assert crewbook.open_autonomous(project).acts == 2, "the state file has every act"
    prompt = loop.contract().prompt_path
    assert prompt is not None
    assert (project / prompt).is_file(), "the next phase's prompt is written, as loop step does"
    stepper.snapshot_list.value = 1
    stepper.rewind_button.click()
    assert loop.acts == 1
    assert crewbook.open_autonomous(project).acts == 1, "the rewind is saved too"
    crewbook.loop_step(project=project)            # someone else moves the loop on
    stepper.step_button.click()
    assert "(refused [stale])" in stepper.message.value
    assert loop.acts == 1


def test_crew_stepper_rewinds_and_marks_the_abandoned_acts(project: Path) -> None:
    crewbook.crew_init("goal", scope="story", bar={"test": GREEN}, project=project)
    loop = crewbook.open_crew(project)
    stepper = Stepper(loop, events=40)
    stepper.run_count.value = 3
    stepper.run_button.click()
    assert loop.acts == 3
    stepper.snapshot_list.value = 1
    stepper.rewind_button.click()
    assert loop.acts == 1
    assert crewbook.open_crew(project).acts == 1, "the rewind is saved in the state file"
    assert len(stepper.abandoned()) > 0
    assert "line-through" in stepper.events.value
    stepper.step_button.click()
    assert loop.acts == 2
    assert stepper.message.value == ""


def test_crew_an_empty_role_is_refused(project: Path) -> None:
    crewbook.crew_init("goal", scope="story", bar={"test": GREEN}, project=project)
    loop = crewbook.open_crew(project)
    stepper = Stepper(loop)
    stepper.role.value = ""
    assert not stepper.step()
    assert "the role is empty" in stepper.message.value
    assert "(refused [no_role])" in stepper.message.value
    assert "expects &#x27;analyst&#x27;" in stepper.message.value
    assert loop.acts == 0


def test_crew_a_fresh_loop_shows_none_of_the_previous_runs_events(project: Path) -> None:
    crewbook.crew_init("goal", scope="story", bar={"test": GREEN}, project=project)
    first = crewbook.open_crew(project)
    Stepper(first).run(3)
    assert first.acts == 3
    crewbook.crew_init("again", scope="story", bar={"test": GREEN}, project=project,
                       force=True)
    fresh = crewbook.open_crew(project)
    assert fresh.run != first.run
    stepper = Stepper(fresh, events=40)
    assert "crew loop: again" in stepper.events.value, "the fresh run's own start"
    assert "crew loop: goal" not in stepper.events.value
    assert str(first.run) not in stepper.events.value
    stepper.step()
    assert "crew loop: goal" not in stepper.events.value
    ledger: Any = fresh.ledger                   # the project's file ledger
    own = (ledger.read()["run"] == fresh.run).sum()
    assert stepper.events.value.count("<tr") == 1 + own, "a header and the run's events"


def test_crew_a_string_payload_says_what_to_write(project: Path) -> None:
    crewbook.crew_init("goal", scope="story", bar={"test": GREEN}, project=project)
    loop = crewbook.open_crew(project)
    stepper = Stepper(loop)
    stepper.set_field("payload", '"no BOM"')
    assert not stepper.step()
    message = html.unescape(stepper.message.value)
    assert "field 'payload' must be a JSON object" in message
    assert "not a string" in message
    assert 'write {"findings": ["no BOM"]}' in message, "the text, put where it belongs"
    assert loop.acts == 0
    stepper.set_field("payload", '{"findings": ["no BOM"]}')
    assert stepper.step()


def test_crew_stepper_repr_names_no_path(project: Path) -> None:
    crewbook.crew_init("goal", scope="story", bar={"test": GREEN}, project=project)
    stepper = Stepper(crewbook.open_crew(project))
    shown = repr(stepper)
    assert shown == "<Stepper: crew loop after 0 acts, at analyst>"
    assert str(project) not in shown
    assert "/" not in shown
