"""Task classes (SPEC D8): which tasks exist, and the axes stored for them.

Task ids come from a change's `apply.tracks` checkboxes — a task's explicit number
(`- [ ] 1.2 Write the serializer` → `1.2`) or its position (`3`, counting from 1) —
or, without a change, any id the user gives (`TSK-03`). Classes live in the project
in `_codev/routing/tasks.yaml` (format `schemas/routing-tasks.json`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..artifacts.change import Change, open_change
from ..artifacts.checklist import TaskItem
from ..artifacts.project import Project
from ..core.atomic import write_atomic
from ..errors import Problem, RoutingError, TaskNotFoundError, did_you_mean
from .files import dump_yaml, load_model
from .model import TASK_ID, TaskClass, TaskClassesFile

TASKS_FILE = "_codev/routing/tasks.yaml"
_HEADER = (
    "Task classes (crewbook routing, SPEC D8), written by `crewbook routing classify`.\n"
    "changes: change -> task id -> axes; tasks: ids not tied to a change.\n"
    "Axes: complexity simple|complex, capability_tier deep|standard|light,\n"
    "effort_level low|medium|high. Format: schemas/routing-tasks.json."
)


def tasks_path(project: Project) -> Path:
    """Where task classes live: `_codev/routing/tasks.yaml`."""
    return project.codev / "routing" / "tasks.yaml"


def load_task_classes(project: Project) -> TaskClassesFile:
    """The stored task classes (empty when the file does not exist yet)."""
    path = tasks_path(project)
    if not path.exists():
        return TaskClassesFile()
    return load_model(path, TaskClassesFile, project.relative(path), "task classes")


def natural_key(task_id: str) -> list[tuple[int, int | str]]:
    """Sort key putting `1.2` before `1.10` and `TSK-2` before `TSK-10`."""
    return [(0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", task_id) if p]


def save_task_classes(project: Project, classes: TaskClassesFile) -> None:
    """Write the task classes atomically."""
    data: dict[str, Any] = {
        "changes": {
            change: {task: tasks[task].to_dict() for task in sorted(tasks, key=natural_key)}
            for change, tasks in sorted(classes.changes.items())
        },
        "tasks": {
            task: classes.tasks[task].to_dict() for task in sorted(classes.tasks, key=natural_key)
        },
    }
    write_atomic(tasks_path(project), dump_yaml(data, _HEADER))


@dataclass(frozen=True)
class TaskRef:
    """A task, resolved: its canonical id, the change it belongs to, its checkbox."""

    id: str
    change: str | None
    item: TaskItem | None = None

    @property
    def text(self) -> str | None:
        """The checkbox text without its leading task number, or None for a free id."""
        if self.item is None:
            return None
        text = self.item.text
        for prefix in (f"{self.id}. ", f"{self.id} "):
            if text.startswith(prefix):
                return text[len(prefix) :].strip() or text
        return text

    @property
    def label(self) -> str:
        """`add-csv-export#1.2` or `TSK-03`."""
        return f"{self.change}#{self.id}" if self.change else self.id


def change_tasks(change: Change) -> tuple[TaskItem, ...]:
    """The checkboxes of the change's `apply.tracks` file."""
    return change.status().tasks


def resolve_task(task_id: str, change: str | Path | Change | None, project: Project) -> TaskRef:
    """The task `task_id` names: explicit id first, then position, in `change`; without a
    change, `task_id` itself (checked for shape only)."""
    task_id = str(task_id).strip()
    if change is None:
        if not TASK_ID.match(task_id):
            raise RoutingError(
                "invalid task id",
                [
                    Problem(
                        "invalid_id",
                        f"task id {task_id!r} must start with a letter or digit and hold only "
                        "letters, digits, '.', '_' and '-', such as 'TSK-03'",
                        key="task_id",
                    )
                ],
            )
        return TaskRef(task_id, None)
    ch = open_change(change, project)
    items = change_tasks(ch)
    for item in items:
        if item.id == task_id:
            return TaskRef(item.id, ch.name, item)
    if task_id.isdigit() and 1 <= int(task_id) <= len(items):
        item = items[int(task_id) - 1]
        return TaskRef(item.id, ch.name, item)
    tracks = ch.schema().model.apply.tracks
    if not items:
        raise TaskNotFoundError(
            f"change {ch.name!r} has no tasks yet: its {tracks} holds no checkbox (`- [ ] 1.1 …`)"
        )
    ids = [i.id for i in items]
    raise TaskNotFoundError(
        f"no task {task_id!r} in change {ch.name!r} ({tracks})"
        + (did_you_mean(task_id, ids) or "")
        + f"; tasks: {', '.join(ids[:20])}{' …' if len(ids) > 20 else ''}"
        + f", or a position 1–{len(items)}"
    )


def stored_class(classes: TaskClassesFile, ref: TaskRef) -> TaskClass | None:
    """The class stored for `ref`, if any."""
    if ref.change is None:
        return classes.tasks.get(ref.id)
    return classes.changes.get(ref.change, {}).get(ref.id)


def classify(
    project: Project,
    ref: TaskRef,
    values: dict[str, str | None],
) -> TaskClass:
    """Merge `values` (None = unchanged) into the stored class of `ref` and save it."""
    classes = load_task_classes(project)  # a broken file is reported, never overwritten
    old = stored_class(classes, ref)
    merged = {**(old.to_dict() if old else {}), **{k: v for k, v in values.items() if v}}
    new = TaskClass.model_validate(merged)
    if ref.change is None:
        tasks = {**classes.tasks, ref.id: new}
        updated = classes.model_copy(update={"tasks": tasks})
    else:
        per_change = {**classes.changes.get(ref.change, {}), ref.id: new}
        updated = classes.model_copy(
            update={"changes": {**classes.changes, ref.change: per_change}}
        )
    save_task_classes(project, updated)
    return new
