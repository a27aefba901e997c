"""The crew engine's working state (`crewbook.crew.working`): what the loop shows and
saves stays the `CrewState` it always was, snapshots stay put while the loop goes on,
and the next story is still found after any edit of the tasks file."""

from __future__ import annotations

from pathlib import Path

import crewbook
from crewbook.core.loop import MemoryLedger
from crewbook.crew import CrewReport
from crewbook.crew.engine import CrewLoop
from crewbook.crew.model import BarCommand, CrewConfig, CrewState

STORY = (("analyst", "done"), ("developer", "done"), ("qa", "go"))


def _loop(project: Path, ledger: MemoryLedger | None = None) -> CrewLoop:
    config = CrewConfig(goal="g", max_rounds=0, bar={"test": BarCommand(command="x")})
    state = CrewState(run="w", config=config, epic="add-csv-export", story="Export")
    return CrewLoop(state, project=crewbook.Project(project), ledger=ledger, run_bar=False)


def _act(loop: CrewLoop, role: str, verdict: str) -> None:
    loop.report(CrewReport(role, verdict, f"{role} {verdict}"))


def test_the_state_shown_is_the_checked_state_it_stands_for(project: Path) -> None:
    loop = _loop(project)
    for role, verdict in (*STORY, ("analyst", "done"), ("developer", "done"), ("qa", "no-go")):
        _act(loop, role, verdict)
    state = loop.state
    again = CrewState.model_validate_json(state.model_dump_json())
    assert again == state
    assert [r.act for r in state.trail] == [1, 2, 3, 4, 5, 6]
    assert state.stories_covered == (("add-csv-export", "Export"),)
    assert (state.story, state.expected, state.attempt, state.no_go) == ("Check", "developer",
                                                                         2, 1)
    assert loop.view is loop.view  # built once per change, not on every read
    assert loop.status(full=True).details["ledger"] == [
        {**r.model_dump(mode="json")} for r in state.trail]


def test_snapshots_stay_put_and_a_restore_starts_from_theirs(project: Path) -> None:
    loop = _loop(project, MemoryLedger("w", loop="crew"))
    for role, verdict in STORY:
        _act(loop, role, verdict)
    early = loop.snapshot()
    for role, verdict in (("analyst", "done"), ("developer", "done")):
        _act(loop, role, verdict)
    late = loop.snapshot()
    assert [r.act for r in early.state.trail] == [1, 2, 3]
    assert [r.act for r in late.state.trail] == [1, 2, 3, 4, 5]
    loop.restore(early)
    _act(loop, "analyst", "done")
    assert [(r.act, r.role) for r in loop.state.trail] == [
        (1, "analyst"), (2, "developer"), (3, "qa"), (4, "analyst")]
    assert [r.act for r in early.state.trail] == [1, 2, 3]  # neither snapshot moved
    assert [r.act for r in late.state.trail] == [1, 2, 3, 4, 5]
    assert early.state.stories_covered == (("add-csv-export", "Export"),)
    loop.restore(late)
    _act(loop, "qa", "go")
    assert loop.state.finished_reason == "scope_covered"
    assert loop.state.stories_covered == (("add-csv-export", "Export"),
                                          ("add-csv-export", "Check"))


def test_transition_changes_nothing_in_the_loop(project: Path) -> None:
    loop = _loop(project)
    _act(loop, "analyst", "done")
    before = loop.state
    moved = loop.transition(before, CrewReport("developer", "done", "built"))
    assert (moved.state.acts, moved.state.expected, moved.state.version) == (2, "qa", 1)
    assert [e["kind"] for e in moved.events] == ["report"]
    assert "loop" not in moved.events[0]
    assert loop.state == before
    assert loop.acts == 1


def test_a_story_written_above_the_pointer_is_still_found(project: Path) -> None:
    loop = _loop(project)
    for role, verdict in STORY:
        _act(loop, role, verdict)
    assert loop.view.story == "Check"
    tasks = project / "_codev" / "changes" / "add-csv-export" / "tasks.md"
    tasks.write_text("# Tasks\n\n## Zero\n\n- [ ] 0.1 A story added on top\n\n"
                     + tasks.read_text(encoding="utf-8").split("\n", 2)[2], encoding="utf-8")
    for role, verdict in STORY:
        _act(loop, role, verdict)
    assert loop.view.story == "Zero"  # not covered, open: next, though above the pointer
    for role, verdict in STORY:
        _act(loop, role, verdict)
    assert loop.view.finished_reason == "scope_covered"


def test_the_crew_state_fields_are_declared_once(project: Path) -> None:
    """`CrewState` and the engine's `Working` take their fields from one declaration
    (`CrewFields`), and a working copy of a state turns back into an equal state."""
    from crewbook.crew.model import CrewFields
    from crewbook.crew.working import SCALARS, Working

    assert list(CrewState.model_fields) == list(CrewFields.__annotations__)
    assert issubclass(CrewState, CrewFields)
    assert issubclass(Working, CrewFields)
    assert set(SCALARS) == set(CrewState.model_fields) - {"format", "stories_covered", "trail"}
    loop = _loop(project)
    for role, verdict in (*STORY, ("analyst", "done"), ("developer", "done"), ("qa", "no-go")):
        _act(loop, role, verdict)
    state = loop.state
    assert state.no_go == 1
    assert state.stories_covered == (("add-csv-export", "Export"),)
    assert len(state.trail) == 6
    assert Working.of(state).state() == state
