"""Which change each agent session served, and what each change cost: `runs_by_change`.

An imported session (Claude Code, Codex, any source of `import_runs`) is tied to the
changes of an OpenSpec or codev project by what it did, strongest first:

1. an OpenSpec command typed in it, ``/openspec:<verb> <change>`` or
   ``/opsx:<verb> <change>`` (the verb gives the phase: ``proposal``/``new``/``explore``
   → proposal, ``apply``/``verify`` → apply, ``archive``/``sync`` → archive), and an
   ``openspec archive <change>`` shell command;
2. a file it wrote under ``<changes folder>/<change>/`` (``proposal.md`` → proposal,
   ``specs/`` → specs, ``design.md`` → design, ``tasks.md`` → tasks) or a file the
   change's ``tasks.md`` names (→ apply);
3. its git branch, when the branch is named after a change (``add-export``,
   ``feat/add-export``): the whole session, phase ``other``.

From a signal on, the session's events count for that change and phase until the next
signal; the events before the first signal count for the first one. Ticking tasks off
in ``tasks.md`` while applying stays in the apply phase. A session with no
signal is its own row, change ``(untied)``: its cost is shown, never dropped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import pandas as pd

    from .project import Project

#: The phases of a change, in order (``other``: tied by branch only).
PHASES: Final[tuple[str, ...]] = ("proposal", "specs", "design", "tasks", "apply",
                                  "archive", "other")
#: The row of the sessions tied to no change.
UNTIED: Final = "(untied)"
COMMAND: Final = re.compile(r"^/(?:openspec|opsx)[:\-]([\w-]+)$")
VERBS: Final[dict[str, str]] = {
    "proposal": "proposal", "propose": "proposal", "new": "proposal", "explore": "proposal",
    "onboard": "proposal", "continue": "proposal", "ff": "proposal",
    "apply": "apply", "verify": "apply",
    "archive": "archive", "bulk-archive": "archive", "sync": "archive",
}
ARCHIVE_CLI: Final = re.compile(r"\bopenspec\s+archive\s+([\w.-]+)")
FILES: Final[dict[str, str]] = {"proposal.md": "proposal", "design.md": "design",
                                "tasks.md": "tasks"}
DATED: Final = re.compile(r"^\d{4}-\d\d-\d\d-(.+)$")
NAMED_PATH: Final = re.compile(r"`([^`\s]+[/.][^`\s]+)`")
#: The columns of `runs_by_change`.
COLUMNS: Final[tuple[str, ...]] = ("change", "phase", "sessions", "model_calls",
                                   "tokens_in", "tokens_out", "cost", "wall_time", "rework")


def runs_by_change(project: Project | str | os.PathLike[str],
                   runs: pd.DataFrame | str | os.PathLike[str]
                   | Iterable[str | os.PathLike[str]]) -> pd.DataFrame:
    """Per change and phase of `project`: ``sessions``, ``model_calls``, ``tokens_in``,
    ``tokens_out``, ``cost`` (USD; NA when nothing was priced), ``wall_time`` (the
    sessions' time spent on it, timedelta) and ``rework`` (sessions that went back to
    work on the change after its first apply session started; archiving is not
    rework). `runs` is a frame of `import_runs` or what to import. Rows: changes by
    name, phases in `PHASES` order, ``(untied)`` last."""
    import pandas as pd

    from .project import Project

    if not isinstance(runs, pd.DataFrame):
        from ..ledger import import_runs

        runs = import_runs(runs)
    project = project if isinstance(project, Project) else Project(Path(project))
    tied = tie_events(project, runs)
    return _aggregate(tied)


def tie_events(project: Project, runs: pd.DataFrame) -> pd.DataFrame:
    """`runs` with three more columns for every event: ``change``, ``phase`` and
    ``session`` (the run, or for a sub-agent's child run the session it ran in: it
    counts for that session's change when nothing of its own ties it)."""
    import pandas as pd

    names, named = _changes(project)
    changes_dir = project.relative(project.changes_folder).rstrip("/") + "/"
    frame = runs.reset_index(drop=True)
    tie: dict[int, tuple[str, str]] = {}
    first: dict[str, tuple[str, str]] = {}
    session: dict[int, str] = {}
    groups = list(frame.groupby(frame["run"].astype(str), sort=False))
    parents = {run: _parent(events) for run, events in groups}
    # sessions first, then the child runs, which may take their session's tie
    for run, events in sorted(groups, key=lambda g: parents[g[0]] is not None):
        signals = [_signal(payload, names, named, changes_dir)
                   for payload in events["payload"]]
        current = next((s for s in signals if s is not None), None)
        parent = parents[run]
        if current is None and parent is not None:
            current = first.get(parent)
        if current is None:
            branch = _branch(events, names)
            current = (branch, "other") if branch else (UNTIED, "(none)")
        first[run] = current
        for index, signal in zip(events.index, signals, strict=True):
            if signal is not None and not (signal[1] == "tasks" and current[1] == "apply"
                                           and signal[0] == current[0]):
                current = signal  # (ticking tasks.md off while applying stays apply)
            tie[int(index)] = current
            session[int(index)] = parent or run
    return frame.assign(change=pd.Series({i: c for i, (c, _) in tie.items()}),
                        phase=pd.Series({i: p for i, (_, p) in tie.items()}),
                        session=pd.Series(session))


def _parent(events: pd.DataFrame) -> str | None:
    """The session a child run (a sub-agent's own transcript) ran in, from its init."""
    for payload in events.loc[events["kind"] == "init", "payload"]:
        if isinstance(payload, dict) and isinstance(payload.get("parent_run"), str):
            return str(payload["parent_run"])
    return None


def _changes(project: Project) -> tuple[set[str], dict[str, str]]:
    """The names of the project's changes (active and archived), and the paths each
    change's tasks name → that change."""
    names: set[str] = set()
    named: dict[str, str] = {}
    folders: list[tuple[str, Path]] = []
    for change in project.changes():
        names.add(change.name)
        folders.append((change.name, change.folder))
    for archived in project.archived():
        names.add(archived.name)
        folders.append((archived.name, archived.folder))
    for name, folder in sorted(folders):
        tasks = folder / "tasks.md"
        if tasks.is_file():
            for match in NAMED_PATH.finditer(tasks.read_text(encoding="utf-8", errors="replace")):
                named.setdefault(match[1].lstrip("./"), name)
    return names, named


def _signal(payload: Any, names: set[str], named: dict[str, str],
            changes_dir: str) -> tuple[str, str] | None:
    """(change, phase) an event's payload points at, or None."""
    if not isinstance(payload, dict):
        return None
    command = payload.get("command")
    if isinstance(command, str):
        match = COMMAND.match(command.strip())
        if match and match[1] in VERBS:
            args = str(payload.get("args") or "").split()
            change = next((a for a in args if a in names), None)
            if change:
                return change, VERBS[match[1]]
        cli = ARCHIVE_CLI.search(command)
        if cli and cli[1] in names:
            return cli[1], "archive"
    written = payload.get("writes")
    if isinstance(written, str):
        return _file_signal(written.replace("\\", "/"), names, named, changes_dir)
    return None


def _file_signal(path: str, names: set[str], named: dict[str, str],
                 changes_dir: str) -> tuple[str, str] | None:
    at = path.find(changes_dir)
    if at >= 0:
        parts = path[at + len(changes_dir):].split("/")
        if parts[0] == "archive" and len(parts) > 1:
            m = DATED.match(parts[1])
            parts = [m[1] if m else parts[1], *parts[2:]]
        if parts[0] in names and len(parts) > 1:
            phase = "specs" if parts[1] == "specs" else FILES.get(parts[1], "other")
            return parts[0], phase
    for tail, change in named.items():
        if path.endswith("/" + tail) or path == tail:
            return change, "apply"
    return None


def _branch(events: pd.DataFrame, names: set[str]) -> str | None:
    for payload in events.loc[events["kind"] == "init", "payload"]:
        branch = payload.get("git_branch") if isinstance(payload, dict) else None
        if isinstance(branch, str):
            tail = branch.rsplit("/", 1)[-1]
            if tail in names:
                return tail
    return None


def _aggregate(tied: pd.DataFrame) -> pd.DataFrame:
    import pandas as pd

    if tied.empty:
        return pd.DataFrame({c: [] for c in COLUMNS})
    from ..ledger.calls import model_calls

    tied = tied.assign(run=tied["session"].astype(str), is_call=model_calls(tied))
    session_start = tied.groupby("run")["ts"].min()
    first_apply = (tied[tied["phase"] == "apply"].assign(start=lambda d: d["run"].map(
        session_start)).groupby("change")["start"].min())
    rows = []
    for (change, phase), group in tied.groupby(["change", "phase"], sort=False):
        runs = sorted(set(group["run"]))
        starts = session_start.loc[runs]
        applied = first_apply.get(change)
        rework = (int((starts > applied).sum())
                  if applied is not None and phase != "archive" else 0)
        rows.append({
            "change": change, "phase": phase, "sessions": len(runs),
            "model_calls": int(group["is_call"].sum()),
            "tokens_in": group["tokens_in"].sum(min_count=1),
            "tokens_out": group["tokens_out"].sum(min_count=1),
            "cost": group["cost"].sum(min_count=1),
            "wall_time": (lambda t: (t.max() - t.min()).sum())(group.groupby("run")["ts"]),
            "rework": rework})
    out = pd.DataFrame(rows, columns=list(COLUMNS))
    order = {p: i for i, p in enumerate(PHASES)}
    out = out.assign(_u=out["change"] == UNTIED, _p=out["phase"].map(order).fillna(len(order)))
    out = out.sort_values(["_u", "change", "_p"], kind="stable").drop(columns=["_u", "_p"])
    for name in ("sessions", "model_calls", "tokens_in", "tokens_out", "rework"):
        out[name] = out[name].astype("Int64")
    out["cost"] = out["cost"].astype("Float64")
    out["wall_time"] = pd.to_timedelta(out["wall_time"])
    return out.reset_index(drop=True)
