"""The history of a project: every change, active and archived, with its dates, task
progress and artifacts, so a notebook can show cycle time and throughput.

Dates come from the files (`created` in the change's metadata, the archive folder's
`YYYY-MM-DD-` prefix) and, when the project is in a git repository, from git: the
first and last commit touching the change's folder under either of its names.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import CrewbookError
from .openspec import ARCHIVE, ARCHIVED_NAME

if TYPE_CHECKING:
    import pandas as pd

    from .change import Change
    from .project import Project

COLUMNS: dict[str, str] = {
    "change": "string", "state": "category", "schema": "string",
    "created": "datetime64[ns]", "archived": "datetime64[ns]",
    "tasks_done": "Int64", "tasks_total": "Int64", "artifacts": "string",
    "n_artifacts": "Int64", "git_first": "datetime64[ns, UTC]",
    "git_last": "datetime64[ns, UTC]", "cycle_days": "Int64", "problems": "Int64",
}
GIT_TIMEOUT_S = 60


def git_dates(project: Project) -> dict[str, tuple[dt.datetime, dt.datetime]]:
    """First and last commit time (UTC) touching each change folder, by change name
    (an archived change counts under its name without the date); empty without git."""
    git = shutil.which("git")
    if git is None:
        return {}
    rel = project.relative(project.changes_folder)
    try:
        out = subprocess.run(
            [git, "-C", str(project.root), "log", "--format=@%ct", "--name-only",
             "--no-renames", "--relative", "--", rel],
            capture_output=True, text=True, timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    if out.returncode != 0:
        return {}
    dates: dict[str, tuple[dt.datetime, dt.datetime]] = {}
    when: dt.datetime | None = None
    prefix = rel.rstrip("/") + "/"
    for line in out.stdout.splitlines():
        if line.startswith("@"):
            when = dt.datetime.fromtimestamp(int(line[1:]), tz=dt.UTC)
            continue
        if not line.startswith(prefix) or when is None:
            continue
        parts = line[len(prefix):].split("/")
        if parts[0] == ARCHIVE and len(parts) > 2:
            m = ARCHIVED_NAME.match(parts[1])
            name = m.group(2) if m else parts[1]
        elif parts[0] != ARCHIVE and len(parts) > 1:
            name = parts[0]
        else:
            continue
        first, last = dates.get(name, (when, when))
        dates[name] = (min(first, when), max(last, when))
    return dates


def _row(change: Change | None, name: str, state: str, archived: dt.date | None,
         problems: int) -> dict[str, Any]:
    row: dict[str, Any] = {"change": name, "state": state, "archived": archived,
                           "problems": problems}
    if change is None:
        return row
    row["schema"] = change.schema_name
    created = change.file.created
    if created and re.fullmatch(r"\d{4}-\d{2}-\d{2}", created):
        row["created"] = dt.date.fromisoformat(created)
    try:
        status = change.status()
    except CrewbookError:
        row["problems"] = problems + 1
        return row
    done = [a.id for a in status.artifacts if a.status == "done"]
    row.update(tasks_done=status.apply.done, tasks_total=status.apply.total,
               artifacts=", ".join(done), n_artifacts=len(done),
               problems=problems + sum(p.severity == "error" for p in status.problems))
    return row


def project_history(project: Project, *, git: bool = True) -> pd.DataFrame:
    """One row per change, active and archived (see `COLUMNS`), by archive date then
    name, active changes last; `git=False` skips the git dates."""
    import pandas as pd

    scan = project.scan()
    rows = [_row(a.change, a.name, "archived", a.archived, len(a.problems))
            for a in project.archived()]
    rows += [_row(c, c.name, "active", None, 0) for c in scan.changes]
    rows += [{"change": Path(name).name, "state": "active", "problems": 1}
             for name in scan.broken]
    dates = git_dates(project) if git else {}
    for row in rows:
        first_last = dates.get(row["change"])
        if first_last:
            row["git_first"], row["git_last"] = first_last
    df = pd.DataFrame(rows, columns=list(COLUMNS))
    for col in ("created", "archived"):
        df[col] = pd.to_datetime(df[col])
    for col in ("git_first", "git_last"):
        df[col] = pd.to_datetime(df[col], utc=True)
    df = df.astype(COLUMNS)
    df["state"] = df["state"].cat.set_categories(["archived", "active"])
    start = df["created"].fillna(df["git_first"].dt.tz_localize(None).dt.normalize())
    df["cycle_days"] = (df["archived"] - start).dt.days.astype("Int64")
    return df.sort_values(["state", "archived", "change"], kind="stable",
                          na_position="last").reset_index(drop=True)
