"""The Stepper, driven as a user would: values set on its controls, buttons clicked."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from crewbook.delivery import Delegate, Plan
from crewbook.widgets import Scripted, Stepper


def events(loop: Any) -> int:
    return len(loop.ledger)


def test_step_applies_the_proposed_report_and_refreshes(any_loop: Any) -> None:
    stepper = Stepper(any_loop)
    drawing, table, header = stepper.drawing.value, stepper.events.value, stepper.header.value
    stepper.step_button.click()
    assert any_loop.acts == 1
    assert stepper.message.value == ""
    assert stepper.header.value != header
    assert stepper.drawing.value != drawing, "the drawing shows the new current node"
    assert stepper.events.value != table
    assert "<table" in stepper.events.value
    assert [label for label, _ in stepper.snapshots][:2] == ["start", stepper.snapshots[1][0]]
    assert len(stepper.snapshots) == 2


def test_the_shortcut_on_every_loop(any_loop: Any) -> None:
    stepper = any_loop.stepper(events=3)
    assert isinstance(stepper, Stepper)
    assert stepper.loop is any_loop
    assert stepper.n_events == 3
    assert repr(stepper).startswith("<Stepper of <")


def test_run_n_reaches_the_end(any_loop: Any) -> None:
    stepper = Stepper(any_loop)
    stepper.run_count.value = 50
    stepper.run_button.click()
    assert any_loop.status().finished
    assert "finished" in stepper.header.value
    assert "ran " in stepper.message.value


def test_a_refusal_shows_inline_and_changes_nothing(pipeline_loop: Any) -> None:
    stepper = Stepper(pipeline_loop)
    before = (pipeline_loop.status(), events(pipeline_loop), stepper.drawing.value)
    stepper.role.value = "planner"          # the analyst is expected
    stepper.step_button.click()
    assert "refused [wrong_stage]" in stepper.message.value
    assert "the loop is unchanged" in stepper.message.value
    assert (pipeline_loop.status(), events(pipeline_loop), stepper.drawing.value) == before
    assert stepper.refusals == 1
    assert len(stepper.snapshots) == 1


def test_a_field_that_is_not_json_is_named(pipeline_loop: Any) -> None:
    stepper = Stepper(pipeline_loop)
    stepper.set_field("artifacts", "{oops")
    stepper.step_button.click()
    assert "field &#x27;artifacts&#x27; is not JSON data" in stepper.message.value
    assert pipeline_loop.acts == 0
    stepper.propose_button.click()
    stepper.step_button.click()
    assert pipeline_loop.acts == 1


def test_the_form_is_built_from_the_contract(coordinator_loop: Any) -> None:
    stepper = Stepper(coordinator_loop)
    assert stepper.move.options == coordinator_loop.contract().moves
    assert stepper.move.value == "plan"
    assert set(stepper.field_controls) >= {"criteria", "summary"}
    stepper.set_field("criteria", ["the CSV has a header row"])
    stepper.step_button.click()
    assert coordinator_loop.status().details["path"] == "full"
    assert coordinator_loop.contract().details["criteria"] == ["the CSV has a header row"]
    stepper.run_count.value = 2
    stepper.run_button.click()                     # delegate:developer, built
    act = coordinator_loop.contract()
    stepper.move.value = "delegate:qa"
    stepper.step_button.click()
    assert coordinator_loop.contract().role == "qa"
    assert stepper.verdict.options == ("pass", "fail")
    assert act.role == "architect"
    stepper.verdict.value = "fail"
    stepper.set_field("findings", ["no header row"])
    stepper.step_button.click()
    assert coordinator_loop.status().counters["sent_back"] == 0
    assert "to forward to the developer: no header row" in coordinator_loop.contract().feedback


def test_rewind_and_reset(coordinator_loop: Any) -> None:
    stepper = Stepper(coordinator_loop)
    for _ in range(3):
        stepper.step_button.click()
    assert coordinator_loop.acts == 3
    assert len(stepper.snapshot_list.options) == 4
    stepper.snapshot_list.value = 1
    stepper.rewind_button.click()
    assert coordinator_loop.acts == 1
    assert "rewound to after act 1" in stepper.message.value
    assert coordinator_loop.ledger.events[-1]["kind"] == "rewind"
    stepper.step_button.click()
    assert coordinator_loop.acts == 2
    stepper.reset_button.click()
    assert coordinator_loop.acts == 0
    assert coordinator_loop.contract().moves[0] == "plan"


def test_a_scripted_policy_replays_after_a_rewind(coordinator_loop: Any) -> None:
    script = [Plan(("scripted",)), Delegate("explorer", "look around first")]
    stepper = Stepper(coordinator_loop, script)
    assert isinstance(stepper.policy, Scripted)
    stepper.step_button.click()
    assert stepper.move.value == "delegate:explorer"
    stepper.step_button.click()
    assert coordinator_loop.contract().role == "explorer"
    stepper.reset_button.click()
    assert stepper.field_controls["criteria"][1].value == "scripted"


def test_a_failing_callback_shows_its_error(coordinator_loop: Any) -> None:
    stepper = Stepper(coordinator_loop)

    def broken() -> Any:
        raise RuntimeError("the drawing broke")

    coordinator_loop.graph_model = broken      # the drawing fails: a card, not a crash
    stepper.step_button.click()
    assert coordinator_loop.acts == 1
    assert "RuntimeError: the drawing broke" in stepper.drawing.value
    stepper.snapshot_list.options = []           # nothing to rewind to
    stepper.rewind_button.click()
    assert "pick a snapshot" in stepper.message.value
    assert coordinator_loop.acts == 1


def test_importing_crewbook_loads_no_widgets() -> None:
    code = ("import sys, crewbook, crewbook.loop, crewbook.pipeline, crewbook.delivery\n"
            "print([m for m in ('ipywidgets', 'playwright') if m in sys.modules])\n"
            "import crewbook.widgets\n"
            "print('ipywidgets' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split("\n")
    assert out[:2] == ["[]", "True"]


@pytest.mark.parametrize("n", [0, 1])
def test_events_table_shows_the_last_events(coordinator_loop: Any, n: int) -> None:
    stepper = Stepper(coordinator_loop, events=2)
    for _ in range(n + 2):
        stepper.step_button.click()
    rows = stepper.events.value.count("<tr>") - 1
    assert rows == 2
    last = coordinator_loop.ledger.events[-1]
    assert str(last["seq"]) in stepper.events.value
