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


def fallback_tasks(project: Project, folder: Path) -> tuple[int, int]:
    """(done, total) of a change whose status cannot be computed, counted as the OpenSpec
    CLI counts them: in the files of the artifact generating the schema's `apply.tracks`
    (a glob allowed; the artifact `tasks` when there is no `tracks`), read from the raw
    schema.yaml; `tasks.md` when the schema or that artifact cannot be found or OpenSpec
    would refuse the schema (an artifact without `description` or `template`)."""
    from .checklist import parse_tasks

    files = [folder / rel for rel in _tracked(project, folder)] or [folder / "tasks.md"]
    done = total = 0
    for file in files:
        if file.is_file():
            tasks = parse_tasks(file.read_text("utf-8", errors="replace"), "openspec")
            done += sum(t.done for t in tasks)
            total += len(tasks)
    return done, total


def _tracked(project: Project, folder: Path) -> list[str]:
    import yaml

    from .status import match_outputs

    try:
        meta = yaml.safe_load((folder / ".openspec.yaml").read_text("utf-8")) \
            if (folder / ".openspec.yaml").is_file() else {}
        name = meta.get("schema") if isinstance(meta, dict) else None
        if not isinstance(name, str):
            return []
        file = project.schemas_folder / name / "schema.yaml"
        data = yaml.safe_load(file.read_text("utf-8")) if file.is_file() else None
    except (OSError, yaml.YAMLError):
        return []
    if not isinstance(data, dict) or not isinstance(data.get("artifacts"), list):
        return []
    apply = data.get("apply")
    tracks = apply.get("tracks") if isinstance(apply, dict) else None
    arts = [a for a in data["artifacts"] if isinstance(a, dict)]
    if len(arts) != len(data["artifacts"]) or not all(
            isinstance(a.get(k), str) for a in arts for k in ("id", "generates", "description",
                                                             "template")):
        return []  # a schema OpenSpec refuses: it counts tasks.md
    art = next((a for a in arts if (a.get("generates") == tracks if tracks is not None
                                    else a.get("id") == "tasks")), None)
    generates = art.get("generates") if art else None
    if not isinstance(generates, str):
        return []
    return sorted(match_outputs(folder, generates)[0])


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
                done, total = fallback_tasks(project, folder)
        else:
            problems = [p for p in scan.problems if p.path and f"/{name}/" in f"/{p.path}/"]
            done, total = fallback_tasks(project, folder)
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
