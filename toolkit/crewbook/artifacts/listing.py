"""`crewbook list` and `crewbook list --specs`: the OpenSpec CLI's listings, with its
words and its `--json` fields, so an OpenSpec user's habits work.

`list_changes` gives, per active change, `name`, `completedTasks`, `totalTasks`,
`lastModified` (newest file, ISO UTC) and `status` (`no-tasks`, `complete`,
`in-progress`); a change whose status cannot be computed is listed with its tasks.md
counted (as the CLI does) and its problems. `list_specs` gives `id` and
`requirementCount`, counted the way the CLI's markdown parser counts (every header
under `## Requirements`; 0 for a spec without Purpose or Requirements).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, Literal

from ..errors import CrewbookError, Problem
from .project import Project
from .spec_checks import requirement_count
from .specs import spec_files


def _last_modified(folder: Path) -> dt.datetime:
    times = [p.stat().st_mtime for p in folder.rglob("*") if p.is_file()]
    stamp = max(times) if times else folder.stat().st_mtime
    return dt.datetime.fromtimestamp(stamp, dt.UTC)


def _iso(when: dt.datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def _tasks_md(folder: Path) -> tuple[int, int]:
    from .checklist import parse_tasks

    file = folder / "tasks.md"
    tasks = parse_tasks(file.read_text("utf-8", errors="replace"), "openspec") \
        if file.is_file() else []
    return sum(t.done for t in tasks), len(tasks)


def list_changes(project: Project, sort: Literal["recent", "name"] = "recent"
                 ) -> list[dict[str, Any]]:
    """Every active change as `openspec list --json` shows it (plus `problems` for a
    change crewbook cannot read), newest first or by name."""
    scan = project.scan()
    rows: list[tuple[dt.datetime, dict[str, Any]]] = []
    opened = {c.name: c for c in scan.changes}
    for name in sorted([*opened, *scan.broken]):
        folder = project.changes_folder / name
        problems: list[Problem] = []
        change = opened.get(name)
        if change is not None:
            try:
                apply = change.status().apply
                done, total = apply.done, apply.total
            except CrewbookError as exc:
                problems = list(getattr(exc, "problems", ())) or [
                    Problem("status_failed", str(exc), path=project.relative(folder))]
                done, total = _tasks_md(folder)
        else:
            problems = [p for p in scan.problems if p.path and f"/{name}/" in f"/{p.path}/"]
            done, total = _tasks_md(folder)
        when = _last_modified(folder)
        row: dict[str, Any] = {
            "name": name, "completedTasks": done, "totalTasks": total,
            "lastModified": _iso(when),
            "status": "no-tasks" if total == 0 else "complete" if done == total
            else "in-progress"}
        if problems:
            row["problems"] = [p.to_dict() for p in problems]
        rows.append((when, row))
    if sort == "recent":  # ties by name, so the order never depends on the file system
        rows.sort(key=lambda r: (-r[0].timestamp(), r[1]["name"]))
    return [row for _when, row in rows]


def list_specs(project: Project) -> list[dict[str, Any]]:
    """Every main spec as `openspec list --specs --json` shows it: id, requirementCount."""
    return [{"id": cap, "requirementCount": requirement_count(
                file.read_bytes().decode("utf-8", errors="replace"))}
            for cap, file in spec_files(project.specs_folder)]


def task_words(done: int, total: int) -> str:
    """The CLI's words for task progress."""
    if total == 0:
        return "No tasks"
    return "✓ Complete" if done == total else f"{done}/{total} tasks"
