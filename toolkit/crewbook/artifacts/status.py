"""Where a change stands (A6, A9): each artifact done, ready, blocked or skipped, the
apply gate, and the checklist of the tracked file. `compute_status` reads the change's
folder against its schema; `ChangeStatus` is what it returns (frames, drawing, text)."""

from __future__ import annotations

import fnmatch
import glob
import html
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..draw.display import Drawable
from ..errors import Problem
from ..models import is_glob
from .checklist import TaskItem, parse_tasks
from .model import STATUS_ORDER, ArtifactStatus
from .schema import Schema

if TYPE_CHECKING:
    import pandas as pd

    from ..draw.model import GraphModel
    from .change import Change

ApplyStatus = Literal["blocked", "ready", "in_progress", "complete"]


@dataclass(frozen=True)
class ArtifactState:
    """One artifact of a change: its status, what it waits for, which files it has."""

    id: str
    status: ArtifactStatus
    missing: tuple[str, ...]
    paths: tuple[str, ...]
    generates: str
    role_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """`{"id", "status", "missing", "paths"}` as `crewbook status --json` prints it."""
        return {
            "id": self.id,
            "status": self.status,
            "missing": list(self.missing),
            "paths": list(self.paths),
        }


@dataclass(frozen=True)
class ApplyState:
    """Whether implementation may start, and how far the tracked checkboxes are."""

    state: ApplyStatus
    done: int
    total: int
    missing: tuple[str, ...]
    tracks: str

    def to_dict(self) -> dict[str, Any]:
        """`{"state", "done", "total", "missing"}`."""
        return {
            "state": self.state,
            "done": self.done,
            "total": self.total,
            "missing": list(self.missing),
        }


@dataclass(frozen=True, eq=False)
class ChangeStatus(Drawable):
    """Where a change stands; `frame()` for pandas, `to_dict()` for JSON, `graph()` to see it."""

    change: str
    schema: Schema
    artifacts: tuple[ArtifactState, ...]
    apply: ApplyState
    tasks: tuple[TaskItem, ...]
    problems: tuple[Problem, ...] = ()
    skip_specs: bool = False
    #: Every file of the change folder as the status scan saw it (None when it fell back
    #: to globbing); delta checks reuse it instead of walking the folder again.
    files: dict[str, bool] | None = field(default=None, compare=False, repr=False)

    def __getitem__(self, artifact_id: str) -> ArtifactState:
        for state in self.artifacts:
            if state.id == artifact_id:
                return state
        self.schema.artifact(artifact_id)  # raises with a suggestion
        raise AssertionError  # pragma: no cover

    @property
    def ready(self) -> list[str]:
        """Artifacts that can be written now, in dependency order."""
        return [a.id for a in self.artifacts if a.status == "ready"]

    @property
    def next(self) -> str | None:
        """The first artifact to write next, or None."""
        return self.ready[0] if self.ready else None

    @cached_property
    def counts(self) -> dict[str, int]:
        """Number of artifacts per status."""
        return {s: sum(a.status == s for a in self.artifacts) for s in STATUS_ORDER}

    def to_dict(self) -> dict[str, Any]:
        """The shape of `crewbook status --json`."""
        return {
            "change": self.change,
            "schema": self.schema.name,
            "artifacts": [a.to_dict() for a in self.artifacts],
            "apply": self.apply.to_dict(),
            "problems": [p.to_dict() for p in self.problems],
        }

    def frame(self) -> pd.DataFrame:
        """One row per artifact, in dependency order: id, status (category), missing,
        paths (lists), generates, role_id, n_files (Int64)."""
        from .frames import status_frame

        return status_frame(self)

    def tasks_frame(self) -> pd.DataFrame:
        """The checklist of the `apply.tracks` file: index, id, text, done, section, line."""
        from .frames import tasks_frame

        return tasks_frame(self)

    def graph_model(self) -> GraphModel:
        """The schema's drawing coloured by status, with a legend and the next artifact bold."""
        from .graph import status_graph

        return status_graph(self)

    def __str__(self) -> str:
        width = max((len(a.id) for a in self.artifacts), default=0)
        lines = [f"Change {self.change} (schema {self.schema.name})"]
        for a in self.artifacts:
            extra = f"  waiting for {', '.join(a.missing)}" if a.missing else ""
            files = f"  ({len(a.paths)} files)" if len(a.paths) > 1 else ""
            lines.append(f"  {_MARK[a.status]} {a.id:<{width}}  {a.status}{files}{extra}")
        ap = self.apply
        lines.append(
            f"  apply: {ap.state.replace('_', ' ')}, {ap.done}/{ap.total} tasks"
            + (f", waiting for {', '.join(ap.missing)}" if ap.missing else "")
        )
        lines += [f"  {p}" for p in self.problems]
        return "\n".join(lines)

    def __repr__(self) -> str:
        counts = ", ".join(f"{n} {s}" for s, n in self.counts.items() if n)
        return (
            f"<ChangeStatus {self.change!r} ({self.schema.name}): {counts}; apply "
            f"{self.apply.state} {self.apply.done}/{self.apply.total}>"
        )

    def _repr_html_(self) -> str:
        from ..draw.cards import head_tail, more_row, short_list

        first, hidden, last = head_tail(self.artifacts)

        def row(a: ArtifactState) -> str:
            return (f"<tr><td>{_MARK[a.status]}</td><td><b>{html.escape(a.id)}</b></td>"
                    f"<td style='color:{_COLOUR[a.status]}'>{a.status}</td>"
                    f"<td>{html.escape(short_list(a.missing))}</td>"
                    f"<td><code>{html.escape(', '.join(a.paths[:5]))}"
                    f"{' …' if len(a.paths) > 5 else ''}</code></td></tr>")

        rows = ("".join(row(a) for a in first) + more_row(hidden, 5, "artifacts")
                + "".join(row(a) for a in last))
        ap = self.apply
        pct = f"{100 * ap.done / ap.total:.0f}%" if ap.total else "–"
        nxt = f"; next: <b>{html.escape(self.next)}</b>" if self.next else ""
        probs = "".join(f"<li>{html.escape(str(p))}</li>" for p in self.problems)
        return (
            f"<div class='crewbook-status'><p><b>Change {html.escape(self.change)}</b> "
            f"(schema <code>{html.escape(self.schema.name)}</code>){nxt}</p>"
            "<table><thead><tr><th></th><th>artifact</th><th>status</th><th>waiting for</th>"
            f"<th>files</th></tr></thead><tbody>{rows}</tbody></table>"
            f"<p>apply: <b>{ap.state.replace('_', ' ')}</b>, {ap.done}/{ap.total} tasks "
            f"({pct})</p>" + (f"<ul>{probs}</ul>" if probs else "") + "</div>"
        )


_MARK = {"done": "✔", "ready": "○", "blocked": "✖", "skipped": "–"}
_COLOUR = {"done": "#2e7d32", "ready": "#1565c0", "blocked": "#c62828", "skipped": "#757575"}


def _inside(path: Path, root: Path) -> bool:
    """Whether `path` (below `root` by its name) stays inside `root` once links are
    followed; only resolved when a part of it below `root` is a symlink (fast path)."""
    here = path
    while here != root and here != here.parent:
        if here.is_symlink():
            return path.resolve().is_relative_to(root.resolve())
        here = here.parent
    return here == root or path.resolve().is_relative_to(root.resolve())


MAX_SCANNED = 20_000


def scan_files(folder: Path) -> dict[str, bool] | None:
    """Every file below `folder` by relative POSIX path, True when it is a symlink;
    None when the folder holds a symlinked folder or too many entries (callers then
    use `glob`, which follows links, with the containment check)."""
    found: dict[str, bool] = {}
    stack = [(str(folder), "")]
    while stack:
        path, prefix = stack.pop()
        try:
            entries = list(os.scandir(path))
        except OSError:
            continue
        for entry in entries:
            rel = prefix + entry.name
            if entry.is_dir(follow_symlinks=False):
                stack.append((entry.path, rel + "/"))
            elif entry.is_symlink():
                if entry.is_dir():
                    return None
                found[rel] = True
            else:
                found[rel] = False
            if len(found) + len(stack) > MAX_SCANNED:
                return None
    return found


def _glob_match(pattern: list[str], parts: list[str]) -> bool:
    """`glob.glob(recursive=True)` semantics on path parts: `**` spans folders, and a
    name starting with `.` matches only a pattern part starting with `.`."""
    if not pattern:
        return not parts
    head = pattern[0]
    if head == "**":
        if _glob_match(pattern[1:], parts):
            return True
        return bool(parts) and not parts[0].startswith(".") and _glob_match(pattern, parts[1:])
    if not parts or (parts[0].startswith(".") and not head.startswith(".")):
        return False
    return fnmatch.fnmatchcase(parts[0], head) and _glob_match(pattern[1:], parts[1:])


def match_outputs(folder: Path, generates: str, files: dict[str, bool] | None = None
                  ) -> tuple[list[str], list[str]]:
    """Files of `folder` matching `generates` (a path or a glob with `*`, `**`, `?`,
    `[...]`), and the matches rejected because they lead outside the folder. `files`
    (from `scan_files`) answers without touching the disk again for plain files."""
    if files is not None and ".." not in generates.split("/"):
        pattern = [p for p in generates.split("/") if p not in ("", ".")]
        if is_glob(generates):
            hits = sorted(rel for rel in files if _glob_match(pattern, rel.split("/")))
        else:
            rel = "/".join(pattern)
            hits = [rel] if rel in files else []
        found = [rel for rel in hits if not files[rel]]
        linked = [rel for rel in hits if files[rel]]
        if not linked:
            return found, []
        more, rejected = match_outputs(folder, generates)
        return sorted(set(found) | set(more)), rejected
    if is_glob(generates):
        candidates = sorted(glob.glob(generates, root_dir=folder, recursive=True))
    else:
        candidates = (
            [generates]
            if (folder / generates).exists() or (folder / generates).is_symlink()
            else []
        )
    found, rejected = [], []
    for rel in candidates:
        path = folder / rel
        if not _inside(path, folder):
            rejected.append(Path(rel).as_posix())
        elif path.is_file():
            found.append(Path(rel).as_posix())
    return found, rejected


def refused_by_openspec(status: ChangeStatus, change: Change) -> ChangeStatus:
    """`status` with the error the OpenSpec CLI's `status` reports for `change`, where
    it refuses one crewbook reads: metadata without `schema`, or whose
    `retire_capabilities` is not true or false ("Invalid metadata"), at the metadata's
    file, line and key. The status is still computed and shown (crewbook
    reads the change with the project's schema and says so as a warning); `crewbook
    status` exits 1, as `openspec status` does."""
    from dataclasses import replace

    name = status.schema.name
    fixes = {"metadata_no_schema": f"`schema` is required; add `schema: {name}` (the "
                                   "status above is crewbook's reading with the project's "
                                   f"schema {name!r})",
             "retire_marker_invalid": "`retire_capabilities` must be true or false"}
    said = [p for p in change.warnings if p.code in fixes]
    if not said:
        return status
    return replace(status, problems=status.problems + tuple(Problem(
        "metadata_invalid", f"Invalid metadata: {fixes[p.code]}; the OpenSpec CLI's status "
        "and apply refuse this change", path=p.path, line=p.line, column=p.column, key=p.key)
        for p in said))


def specs_not_a_folder(change: Change, files: dict[str, bool] | None = None
                       ) -> Problem | None:
    """An error when an OpenSpec change's `specs` is a file, not the folder of its deltas
    (the CLI's status and archive stop on it: ENOTDIR); `files` is the change's
    `scan_files`, when at hand (no stat then for the usual change)."""
    specs = change.folder / "specs"
    if change.flavour != "openspec" or (files is not None and "specs" not in files) \
            or not os.path.lexists(specs) or specs.is_dir():
        return None
    return Problem("specs_not_a_folder", "`specs` is a file, not a folder: a change's deltas "
                   "are specs/<capability>/spec.md; remove or rename the file (the OpenSpec "
                   "CLI's status and archive stop on it)", path=change.project.relative(specs))


def compute_status(change: Change, schema: Schema) -> ChangeStatus:
    """Per-artifact status, apply readiness and task progress of `change` under `schema`."""
    folder = change.folder
    problems: list[Problem] = []
    satisfied: set[str] = set()
    states: dict[str, ArtifactState] = {}
    files = scan_files(folder)
    for art_id in schema.order:
        art = schema.artifact(art_id)
        role_id = art.role.id if art.role else None
        if change.file.skip_specs and art.generates.startswith("specs/"):
            states[art_id] = ArtifactState(art_id, "skipped", (), (), art.generates, role_id)
            satisfied.add(art_id)
            continue
        found, rejected = match_outputs(folder, art.generates, files)
        for rel in rejected:
            problems.append(
                Problem(
                    code="path_outside_change",
                    message=f"{rel!r} matches `generates` of {art_id!r} but leads outside the "
                    "change folder (a symlink?); it is not counted",
                    path=f"{change.project.relative(folder)}/{rel}",
                    key=f"{art_id}.generates",
                )
            )
        missing = tuple(dep for dep in art.requires if dep not in satisfied)
        if found:
            status: ArtifactStatus = "done"
            satisfied.add(art_id)
        else:
            status = "blocked" if missing else "ready"
        states[art_id] = ArtifactState(
            art_id, status, missing if not found else (), tuple(found), art.generates, role_id
        )
    apply_missing = tuple(dep for dep in schema.model.apply.requires if dep not in satisfied)
    tracks = schema.model.apply.tracks
    tasks: list[TaskItem] = []
    tracked = folder / tracks
    if change.flavour == "openspec" and not any(
            schema.artifact(a).generates == tracks for a in schema.order):
        tracked = folder / "tasks.md"  # OpenSpec counts tasks.md when no artifact writes tracks
    if tracked.is_file() and _inside(tracked, folder):
        tasks = parse_tasks(tracked.read_text("utf-8", errors="replace"), change.flavour)
    done = sum(t.done for t in tasks)
    if (not_folder := specs_not_a_folder(change, files)) is not None:
        problems.append(not_folder)
    if apply_missing:
        state: ApplyStatus = "blocked"
    elif tasks and done == len(tasks):
        state = "complete"
    elif done:
        state = "in_progress"
    else:
        state = "ready"
    return ChangeStatus(
        change=change.name,
        schema=schema,
        artifacts=tuple(states[a] for a in schema.order),
        apply=ApplyState(state, done, len(tasks), apply_missing, tracks),
        tasks=tuple(tasks),
        problems=change.warnings + tuple(problems),
        skip_specs=change.file.skip_specs,
        files=files,
    )
