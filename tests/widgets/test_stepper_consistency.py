"""The Stepper never contradicts itself: the form's verdict picker and its JSON, the
snapshot list after a reset, the notes over the events table, a move with no verdict."""

from __future__ import annotations

import re
from typing import Any

from crewbook.widgets import Stepper


def labels(stepper: Stepper) -> list[str]:
    return [label for label, _ in stepper.snapshot_list.options]


def test_pipeline_verdict_picker_and_artifacts_json_never_disagree(pipeline_loop: Any) -> None:
    stepper = Stepper(pipeline_loop)
    stepper.run(4)
    act = pipeline_loop.contract()
    assert act.stage == "reviewer"
    assert stepper.verdict.options == ("approved", "changes_requested")
    assert "verdict" not in stepper.draft.fields["artifacts"]["review_report"], \
        "the verdict lives in the picker only"
    stepper.verdict.value = "changes_requested"
    stepper.set_field("artifacts", {"review_report": {"verdict": "approved", "findings": []}})
    assert not stepper.step()
    assert "(refused [verdict_mismatch])" in stepper.message.value
    assert "the verdict picker says &#x27;changes_requested&#x27;" in stepper.message.value
    assert pipeline_loop.acts == 4, "the loop is unchanged"
    stepper.verdict.value = "approved"               # now they agree
    assert stepper.step()
    assert pipeline_loop.ledger.events[-1]["verdict"] != "changes_requested"


def test_a_question_shows_no_verdict_picker(coordinator_loop: Any) -> None:
    stepper = Stepper(coordinator_loop)
    stepper.run(4)
    assert coordinator_loop.contract().role == "qa"
    assert stepper.verdict.layout.display == "", "a judgement has its picker"
    stepper.move.value = "question"
    assert stepper.verdict.options == ()
    assert stepper.verdict.layout.display == "none"
    stepper.move.value = "judgement"
    assert stepper.verdict.options == ("pass", "fail")
    assert stepper.verdict.layout.display == ""


def test_a_qa_fail_without_findings_is_refused(coordinator_loop: Any) -> None:
    stepper = Stepper(coordinator_loop)
    stepper.run(4)
    stepper.verdict.value = "fail"
    stepper.set_field("findings", "")
    assert not stepper.step()
    assert "(refused [no_findings])" in stepper.message.value
    assert coordinator_loop.acts == 4
    stepper.set_field("findings", "no header row")
    assert stepper.step()
    assert coordinator_loop.acts == 5
    verdict = coordinator_loop.ledger.events[-1]
    assert (verdict["verdict"], verdict["payload"]["findings"]) == ("fail", ["no header row"])


def test_after_reset_the_snapshot_list_holds_no_duplicates(coordinator_loop: Any) -> None:
    stepper = Stepper(coordinator_loop)
    for _ in range(3):
        stepper.step()
        stepper.reset()
    assert labels(stepper) == ["start ← now"]
    stepper.step()
    stepper.step()
    shown = labels(stepper)
    assert len(shown) == len(set(shown)) == 3
    assert not any("abandoned" in label for label in shown)


def test_the_abandoned_note_only_when_a_shown_row_is_struck(coordinator_loop: Any) -> None:
    """A rewind copies the kept events into a new run: with a short table, the
    abandoned rows are no longer among the rows shown, and nothing says they are."""
    stepper = Stepper(coordinator_loop, events=3)
    stepper.run(4)
    stepper.rewind(1)
    assert stepper.abandoned(), "the ledger still holds the abandoned events"
    assert "line-through" not in stepper.events.value
    assert "abandoned branches" not in stepper.events.value
    assert "abandoned branches" not in stepper.message.value
    assert stepper.message.value.count("rewound to after act 1") == 1


def test_the_count_in_the_notes_is_the_rows_struck(coordinator_loop: Any) -> None:
    stepper = Stepper(coordinator_loop, events=5)
    stepper.run(4)
    stepper.rewind(1)
    struck = stepper.events.value.count("line-through")
    assert 0 < struck < len(stepper.abandoned()), "more were abandoned than are shown"
    for text in (stepper.events.value, stepper.message.value):
        found = re.search(r"(\d+) events? of abandoned branches", text)
        assert found is not None
        assert int(found.group(1)) == struck
