"""The Stepper, driven as a user would: values set on its controls, buttons clicked."""

from __future__ import annotations

import html as htmllib
import re
import subprocess
import sys
from typing import Any

import pytest

from crewbook.delivery import Delegate, Plan
from crewbook.errors import plural
from crewbook.widgets import Scripted, Stepper

from .conftest import DATA


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
    shown = repr(stepper)
    assert shown == f"<Stepper: {any_loop.kind} loop after 0 acts, at {any_loop.status().current}>"


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
    assert "the drawing broke (RuntimeError)" in stepper.drawing.value
    stepper.snapshot_list.options = []           # nothing to rewind to
    stepper.rewind_button.click()
    assert "pick a snapshot" in stepper.message.value
    assert coordinator_loop.acts == 1


def test_importing_crewbook_loads_no_widgets() -> None:
    code = ("import sys, crewbook, crewbook.core.loop, crewbook.pipeline, crewbook.delivery\n"
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


def text_of(html_text: str) -> str:
    """What a reader sees of some HTML: the text, unescaped."""
    return htmllib.unescape(re.sub(r"<[^>]+>", "", html_text)).strip()


def test_changing_the_move_gives_that_moves_fields(coordinator_loop: Any) -> None:
    stepper = Stepper(coordinator_loop)
    assert stepper.move.value == "plan"
    assert "criteria" in stepper.field_controls
    stepper.move.value = "delegate:explorer"
    assert "criteria" not in stepper.field_controls, "the plan's fields are gone"
    assert "instructions" in stepper.field_controls
    stepper.set_field("instructions", "map the export code")
    stepper.step_button.click()
    assert stepper.message.value == "", text_of(stepper.message.value)
    assert coordinator_loop.contract().role == "explorer"
    stepper.propose_button.click()
    stepper.move.value = "question"
    assert set(stepper.field_controls) >= {"text"}


def test_picking_the_proposed_move_again_gives_the_proposal(coordinator_loop: Any) -> None:
    stepper = Stepper(coordinator_loop)
    proposed = dict(stepper.draft.fields)
    stepper.move.value = "fail"
    assert set(stepper.field_controls) == {"duration_ms", "reason"}
    stepper.move.value = "plan"
    assert dict(stepper.draft.fields) == proposed


def test_a_form_without_moves_hides_the_move_picker(pipeline_loop: Any) -> None:
    stepper = Stepper(pipeline_loop)
    assert pipeline_loop.contract().moves, "the pipeline's contract names transitions"
    assert stepper.move.options == ()
    assert stepper.move.layout.display == "none"


def test_the_snapshot_picker_follows_rewind_and_reset(coordinator_loop: Any) -> None:
    stepper = Stepper(coordinator_loop)
    for _ in range(3):
        stepper.step_button.click()
    assert stepper.snapshot_list.value == 3
    stepper.snapshot_list.value = 1
    stepper.rewind_button.click()
    assert stepper.snapshot_list.value == 1, "not the stale 'after act 3'"
    labels = dict((i, label) for label, i in stepper.snapshot_list.options)
    assert labels[1].endswith("← now")
    assert "(abandoned branch)" in labels[3]
    assert "(abandoned branch)" not in labels[1]
    stepper.reset_button.click()
    assert stepper.snapshot_list.value == 0
    assert labels[0] == "start"


def test_events_of_an_abandoned_branch_are_struck_through(coordinator_loop: Any) -> None:
    stepper = Stepper(coordinator_loop, events=30)
    for _ in range(3):
        stepper.step_button.click()
    assert "branch" not in stepper.events.value
    written = len(coordinator_loop.ledger)
    stepper.snapshot_list.value = 1
    stepper.rewind_button.click()
    abandoned = stepper.abandoned()
    runs = {e["run"] for e in coordinator_loop.ledger.events[:written]}
    after_act_1 = [e for e in coordinator_loop.ledger.events[:written]
                   if (str(e["run"]), str(e["seq"])) in abandoned]
    assert len(abandoned) == len(after_act_1) > 0
    assert runs == {coordinator_loop.ledger.events[0]["run"]}
    table = stepper.events.value
    assert "<th style='text-align:left;padding:0 6px'>branch</th>" in table
    assert table.count("line-through") == len(abandoned)
    assert f"{plural(len(abandoned), 'event')} of abandoned branches" in table
    assert f"{plural(len(abandoned), 'event')} of abandoned branches" in stepper.message.value
    stepper.step_button.click()
    assert stepper.abandoned() == abandoned, "the new branch's events are current"
    stepper.snapshot_list.value = 3                 # jump forward to the old branch
    stepper.rewind_button.click()
    assert not (stepper.abandoned() & abandoned), "that branch is current again"
    assert len(stepper.abandoned()) > 0


def test_step_and_run_are_off_once_finished(coordinator_loop: Any) -> None:
    stepper = Stepper(coordinator_loop)
    assert not stepper.step_button.disabled
    stepper.run_count.value = 50
    stepper.run_button.click()
    assert coordinator_loop.status().finished
    assert stepper.step_button.disabled
    assert stepper.run_button.disabled
    assert "Rewind" in stepper.step_button.tooltip
    stepper.snapshot_list.value = 1
    stepper.rewind_button.click()
    assert not stepper.step_button.disabled
    assert not stepper.run_button.disabled


def test_failed_tries_and_the_escalation_say_why(pipeline_loop: Any) -> None:
    stepper = Stepper(pipeline_loop)
    bad = {"analysis": {"summary": "s", "acceptance_criteria": ["a"],
                        "relevant_files": ["no/such/file.py"]}}
    stepper.set_field("artifacts", bad)
    stepper.step_button.click()
    seen = text_of(stepper.message.value)
    assert seen.startswith("the try failed: "), seen
    assert "no/such/file.py" in seen
    while not pipeline_loop.status().finished:
        stepper.set_field("artifacts", bad)
        stepper.step_button.click()
    seen = text_of(stepper.message.value)
    assert "escalated: stage 'analyst' failed 3 times" in seen
    assert pipeline_loop.status().details["reason"] in text_of(stepper.header.value)


def test_error_text_starts_with_the_message(coordinator_loop: Any) -> None:
    stepper = Stepper(coordinator_loop)
    stepper.set_field("duration_ms", "soon")
    stepper.step_button.click()
    seen = text_of(stepper.message.value)
    assert seen.startswith("field 'duration_ms': 'soon' is not a number"), seen
    assert "InvalidInputError" not in seen
    stepper.propose_button.click()
    stepper.move.value = "fail"                     # a failure needs its reason
    stepper.step_button.click()
    seen = text_of(stepper.message.value)
    assert not seen.startswith(("refused", "LoopRefused")), seen
    assert re.search(r"\(refused \[\w+\]\)", seen), seen
    assert coordinator_loop.acts == 0


def test_a_pipelines_warnings_show_above_the_buttons() -> None:
    from crewbook.pipeline import load_pipeline

    pipeline = load_pipeline(DATA / "broken" / "07-no-way-out.toml")
    assert pipeline.warnings
    stepper = Stepper(pipeline.loop(workspace=DATA / "workspace"))
    assert "1 validation warning" in stepper.problems.value
    assert "no_way_out" in stepper.problems.value
    shown = pipeline._repr_mimebundle_()["text/html"]     # the pipeline's own display
    assert "<b>validation</b>: 1 warning (" in shown
    assert shown.index("validation") < shown.index("no_way_out")
    clean = Stepper(load_pipeline(DATA / "role_pipeline.toml").loop(
        workspace=DATA / "workspace"))
    assert clean.problems.value == ""
    assert "<b>validation</b>: no problems" in clean.loop.pipeline._repr_html_()
