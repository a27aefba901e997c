"""The crew loop's backlog: the project's own codev world, not a new format (D1, D5).

- an **epic** is a change (`_codev/changes/<name>/`), in name order;
- a **story** is a section of its `apply.tracks` file (`tasks.md`): the checkboxes under
  one heading (the last heading above them, of any level). Checkboxes before any
  heading form the story ``(no section)``; a change with no checkbox yet is one story,
  ``(whole epic)``, which the analyst frames (writing the tasks is part of it);
- a **task** is a checkbox, with the id routing classifies (`1.2`, or its position),
  parsed by `crewbook.artifacts.checklist` as everywhere else.

A story is open while qa has not said `go` on it and one of its boxes is unchecked (a
story whose boxes are all checked was delivered before the loop and is skipped). The
loop records coverage in its own state; it never edits `tasks.md`.

The **workshop** (D5) is the list ``workshop:`` of `_codev/crew.yaml`: axes of
evolution in order. In scope ``all`` the cascade enters it when no epic is left and
promotes the next axis to an epic: a new change named after the axis (kebab-case),
created with the project's default schema, its description the axis. Declared
``stacks:`` in the same file give the bar's commands (`crewbook.artifacts.crew_file`,
which reads that file for every family).

Reading is cached per change on the tasks file's modification time, size and inode, so
the loop re-reads a change only when someone edited or replaced it; the parse of a text
is remembered by the text (`parsed_stories`), so a new loop reads the file but parses it
again only when it changed. The loop looks at the file on every act (a hand edit is seen
at the next act) through a descriptor it keeps open (`FileWatch`): an ``fstat`` costs
half a ``stat`` of the path, and a file replaced or deleted shows as a link count of 0.
"""

from __future__ import annotations

import os
import re
import weakref
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any, Final

from ..artifacts.change import Change, new_change, open_change
from ..artifacts.checklist import TaskItem, parse_tasks
from ..artifacts.crew_file import (
    STACK_MODELS,
    CrewFile,
    Remembered,
    StackDecl,
    find_stack,
    read_crew_file,
    stamp_of,
)
from ..artifacts.project import Project
from ..errors import ChangeNotFoundError
from .model import NO_SECTION, SAFE_NAME, WHOLE_EPIC

#: Per project folder: a change's name → (change.yaml's stamp, its name, its schema), read
#: once while change.yaml is unchanged (every loop a CLI or MCP call opens reads its
#: backlog); the stamp check makes it safe to share between `Project`s of one folder.
_CHANGES: dict[str, dict[str, tuple[tuple[int, int, int], str, str]]] = {}


@dataclass(frozen=True, eq=False)
class Story:
    """A section of an epic's tasks file (or the whole epic before it has tasks)."""

    epic: str
    title: str
    tasks: tuple[TaskItem, ...]

    @cached_property
    def checked(self) -> bool:
        """Every box checked (and at least one box)."""
        return bool(self.tasks) and all(t.done for t in self.tasks)

    @cached_property
    def next_task(self) -> TaskItem | None:
        """The first unchecked box, else the first box, else None."""
        for task in self.tasks:
            if not task.done:
                return task
        return self.tasks[0] if self.tasks else None

    @cached_property
    def rows(self) -> tuple[dict[str, object], ...]:
        """`{"id", "text", "done"}` per task, as contracts show them."""
        return tuple({"id": t.id, "text": task_text(t), "done": t.done} for t in self.tasks)


def task_text(task: TaskItem) -> str:
    """A checkbox's text without its leading task number (`1.2 Write it` → `Write it`)."""
    for prefix in (f"{task.id}. ", f"{task.id} "):
        if task.text.startswith(prefix):
            return task.text[len(prefix):].strip() or task.text
    return task.text


@dataclass(frozen=True, eq=False)
class Epic:
    """A change and its stories; `exists` is False for a promoted axis not created yet."""

    name: str
    stories: tuple[Story, ...]
    tracks: str = "tasks.md"
    exists: bool = True

    def story(self, title: str | None) -> Story | None:
        """The story of that title, or None."""
        return self._by_title.get(title) if title is not None else None

    @cached_property
    def _by_title(self) -> dict[str, Story]:
        return {s.title: s for s in self.stories}


def stories_of(epic: str, tasks: list[TaskItem] | tuple[TaskItem, ...]) -> tuple[Story, ...]:
    """Group checkboxes by section, sections in order of first appearance."""
    if not tasks:
        return (Story(epic, WHOLE_EPIC, ()),)
    groups: dict[str, list[TaskItem]] = {}
    for task in tasks:
        groups.setdefault(task.section or NO_SECTION, []).append(task)
    return tuple(Story(epic, title, tuple(items)) for title, items in groups.items())


@lru_cache(maxsize=16)
def parsed_stories(epic: str, text: str) -> tuple[Story, ...]:
    """`stories_of(epic, parse_tasks(text))`, remembered by the text itself: a loop opened
    again on an unchanged tasks file reads it but does not parse it again (stories and
    tasks are immutable, so loops can share them)."""
    return stories_of(epic, parse_tasks(text))


def slug(text: str) -> str:
    """A kebab-case change name for a workshop axis (`Multi-currency totals` →
    `multi-currency-totals`)."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "-".join(words)[:60].strip("-") or "workshop-axis"


class Backlog:
    """The epics, stories and workshop of one project, read from disk with a cache."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self._epics: dict[str, tuple[FileWatch, Epic]] = {}
        self._crew_file: Remembered = {}

    # -- epics -------------------------------------------------------------------------
    def epic_names(self) -> list[str]:
        """Every change of the project, by name."""
        folder = self.project.changes_folder
        if not folder.is_dir():
            return []
        return sorted(p.name for p in folder.iterdir() if (p / "change.yaml").is_file())

    def epic(self, name: str) -> Epic:
        """The change `name` and its stories (a placeholder epic when it does not exist)."""
        cached = self._epics.get(name)
        if cached is not None and cached[0].same():
            return cached[1]
        if not SAFE_NAME.fullmatch(name):  # never a path out of the changes folder
            return Epic(name, stories_of(name, ()), exists=False)
        folder = self.project.changes_folder / name
        stamp = _stat(folder / "change.yaml")
        if stamp is None or not (folder / "change.yaml").is_file():
            return Epic(name, stories_of(name, ()), exists=False)
        # the change's name and schema, read once per project while change.yaml is unchanged
        # (every loop a CLI or MCP call opens reads its backlog again)
        opened = _CHANGES.setdefault(str(self.project.root), {})
        known = opened.get(name)
        if known is None or known[0] != stamp:
            change = open_change(name, self.project)
            known = opened[name] = (stamp, change.name, change.schema_name)
        tracks = self.project.cached_schema(known[2]).model.apply.tracks
        path = folder / tracks
        watch = FileWatch(str(path))  # before the read: an edit meanwhile is seen next time
        text = path.read_text("utf-8", errors="replace") if path.is_file() and \
            path.resolve().is_relative_to(folder.resolve()) else ""
        epic = Epic(known[1], parsed_stories(known[1], text), tracks)
        if cached is not None:
            cached[0].close()
        self._epics[name] = (watch, epic)
        return epic

    def next_story(self, name: str, covered: set[tuple[str, str]]) -> Story | None:
        """The first story of `name` still to deliver, or None."""
        for story in self.epic(name).stories:
            if (name, story.title) not in covered and not story.checked:
                return story
        return None

    def open_stories(self, name: str, covered: set[tuple[str, str]]) -> list[Story]:
        """The stories of `name` still to deliver."""
        return [s for s in self.epic(name).stories
                if (name, s.title) not in covered and not s.checked]

    def first_open(self, covered: set[tuple[str, str]], skip: set[str]) -> str | None:
        """The first change with an open story, not in `skip`."""
        for name in self.epic_names():
            if name not in skip and self.next_story(name, covered) is not None:
                return name
        return None

    # -- crew file ----------------------------------------------------------------------
    def crew_file(self) -> CrewFile:
        """`_codev/crew.yaml` (empty when absent); `CrewError` naming file:line when invalid
        (`crewbook.artifacts.crew_file`, which the autonomous loop reads too)."""
        return read_crew_file(self.project.root, self._crew_file)

    def workshop(self) -> tuple[str, ...]:
        """The workshop's axes, in order."""
        return self.crew_file().workshop

    def stack(self, name: str) -> StackDecl:
        """A declared stack, or a built-in model used as is; `CrewError` otherwise."""
        return find_stack(self.crew_file(), name)

    # -- workshop promotion ------------------------------------------------------------
    def promote(self, axis: str, name: str) -> Change:
        """Create the change `name` for a workshop axis (or open it when it exists)."""
        try:
            return open_change(name, self.project)
        except ChangeNotFoundError:
            return new_change(name, project=self.project, description=axis)


class FileWatch:
    """Whether a file is still as it was when the watch began: same modification time,
    size and inode, and still linked at its path.

    On POSIX it keeps the file open and asks ``fstat`` (no path lookup, half the cost of
    a ``stat``): an edit in place changes the time or the size, and a file deleted or
    replaced by a rename (as editors and ``git checkout`` save) loses its link (count 0).
    A symbolic link, an absent file, or Windows (where an open file cannot be renamed
    over) use ``stat`` on the path. The descriptor is closed by `close`, or when the
    watch is collected."""

    __slots__ = ("__weakref__", "_closer", "_fd", "_key", "path")

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd: int | None = None
        self._closer: weakref.finalize[Any, Any] | None = None
        if _HOLD:
            try:
                self._fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            except OSError:  # absent, or a symbolic link: the path is asked each time
                pass
            else:
                self._closer = weakref.finalize(self, os.close, self._fd)
        self._key = self._look()

    def _look(self) -> tuple[int, int, int] | None:
        if self._fd is None:
            return _stat(self.path)
        st = os.fstat(self._fd)
        return (st.st_mtime_ns, st.st_size, st.st_ino) if st.st_nlink else None

    def same(self) -> bool:
        """Whether the file is as the watch first saw it (an absent file: still absent)."""
        fd = self._fd
        if fd is None:
            return _stat(self.path) == self._key
        st = os.fstat(fd)
        key = self._key
        return (key is not None and st.st_nlink != 0 and st.st_mtime_ns == key[0]
                and st.st_size == key[1])

    def close(self) -> None:
        """Let the descriptor go now (the path is asked from then on)."""
        closer, self._closer, self._fd = self._closer, None, None
        if closer is not None:
            closer()


#: Whether `FileWatch` keeps files open (POSIX: renaming over an open file is allowed).
_HOLD: Final = os.name == "posix" and hasattr(os, "O_NOFOLLOW")


_stat = stamp_of


__all__ = ["STACK_MODELS", "Backlog", "Epic", "Story", "slug", "stories_of", "task_text"]
