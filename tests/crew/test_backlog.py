"""The backlog: epics are changes, stories sections of tasks.md, tasks checkboxes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import crewbook
from crewbook.artifacts.checklist import parse_tasks
from crewbook.crew.backlog import Backlog, slug, stories_of
from crewbook.errors import CrewError


def test_stories_are_sections_in_order(project: Path) -> None:
    epic = Backlog(crewbook.Project(project)).epic("add-csv-export")
    assert [s.title for s in epic.stories] == ["Export", "Check"]
    assert [t.id for t in epic.stories[0].tasks] == ["1.1", "1.2"]
    assert epic.story("Check") is epic.stories[1]
    assert epic.story("nope") is None


def test_no_checkbox_is_one_whole_epic_story_and_no_heading_a_no_section_story() -> None:
    assert [s.title for s in stories_of("e", ())] == ["(whole epic)"]
    assert [s.title for s in stories_of("e", parse_tasks("- [ ] 1 a\n## B\n- [x] 2 b\n"))] \
        == ["(no section)", "B"]


def test_an_edited_tasks_file_is_read_again(project: Path) -> None:
    backlog = Backlog(crewbook.Project(project))
    first = backlog.epic("add-csv-export")
    assert backlog.epic("add-csv-export") is first  # cached
    tasks = project / "_codev" / "changes" / "add-csv-export" / "tasks.md"
    tasks.write_text(tasks.read_text() + "\n## Docs\n\n- [ ] 3.1 Document the export\n")
    stamp = tasks.stat().st_mtime_ns + 10**9
    os.utime(tasks, ns=(stamp, stamp))
    assert [s.title for s in backlog.epic("add-csv-export").stories][-1] == "Docs"


def test_a_new_backlog_reads_the_file_and_parses_it_again_only_when_it_changed(
        project: Path) -> None:
    first = Backlog(crewbook.Project(project)).epic("add-csv-export")
    again = Backlog(crewbook.Project(project)).epic("add-csv-export")
    assert again is not first
    assert again.stories is first.stories  # the same text: the same (immutable) stories
    tasks = project / "_codev" / "changes" / "add-csv-export" / "tasks.md"
    tasks.write_text(tasks.read_text().replace("- [ ] 2.1", "- [x] 2.1"))
    edited = Backlog(crewbook.Project(project)).epic("add-csv-export")
    assert edited.stories is not first.stories
    assert edited.story("Check").checked  # type: ignore[union-attr]
    assert not first.story("Check").checked  # type: ignore[union-attr]


def test_next_story_skips_covered_and_checked(project: Path) -> None:
    backlog = Backlog(crewbook.Project(project))
    assert backlog.next_story("add-csv-export", set()).title == "Export"  # type: ignore[union-attr]
    covered = {("add-csv-export", "Export")}
    assert backlog.next_story("add-csv-export", covered).title == "Check"  # type: ignore[union-attr]
    assert backlog.next_story("add-csv-export", covered | {("add-csv-export", "Check")}) is None
    assert backlog.first_open(covered | {("add-csv-export", "Check")}, set()) is None


def test_unknown_stack_has_a_did_you_mean(project: Path) -> None:
    backlog = Backlog(crewbook.Project(project))
    assert backlog.stack("python").name == "python"
    with pytest.raises(CrewError, match="did you mean 'rust'"):
        backlog.stack("rsut")


@given(st.text(max_size=80))
def test_slug_is_always_a_change_name(text: str) -> None:
    assert crewbook.models.KEBAB_CASE.match(slug(text))
