"""Changes: create one (A8) and compute where it stands (A6, A9).

A change is a folder `_codev/changes/<name>/` whose `change.yaml` records its schema,
so changing the project's default never affects changes in progress. OpenSpec's
changes (`openspec/changes/<name>/`, metadata in `.openspec.yaml` or none) open too.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import yaml

from ..errors import (
    AlreadyExistsError,
    ChangeNotFoundError,
    ConfigError,
    InvalidInputError,
    Problem,
)
from ..models import KEBAB_CASE, parse_model
from ..sources import read_yaml
from .model import ChangeFile
from .project import Project, ProjectLike, as_project, find_project_root
from .registry import get_schema
from .schema import Schema
from .status import ChangeStatus, compute_status

if TYPE_CHECKING:
    import pandas as pd

    from .archive import ArchivePreview
    from .specs import DeltaSpec


@dataclass(frozen=True, eq=False)
class Change:
    """A change folder and what its `change.yaml` says."""

    name: str
    folder: Path
    project: Project
    file: ChangeFile
    #: What its metadata says that crewbook does not use (OpenSpec keys), as warnings.
    warnings: tuple[Problem, ...] = ()
    #: Whose task checkbox rules apply: crewbook's, or OpenSpec's for its changes.
    flavour: Literal["codev", "openspec"] = "codev"

    @property
    def schema_name(self) -> str:
        """The schema recorded at creation (A8)."""
        return self.file.schema_

    def schema(self) -> Schema:
        """The change's schema, resolved in its project (project before built-in)."""
        return self.project.cached_schema(self.schema_name)

    def status(self) -> ChangeStatus:
        """Where the change stands: per-artifact state, apply gate, task progress (A6)."""
        return compute_status(self, self.schema())

    def deltas(self) -> dict[str, DeltaSpec]:
        """Its spec deltas, `specs/<capability>/spec.md`, by capability (A9)."""
        from .specs import read_deltas

        return read_deltas(self.folder, self.project.root)

    def requirements(self) -> pd.DataFrame:
        """One row per requirement its deltas add, modify, remove or rename."""
        from .specs import requirements_frame

        return requirements_frame(list(self.deltas().values()), {"change": self.name})

    def scenarios(self) -> pd.DataFrame:
        """One row per scenario of the requirements its deltas add or modify."""
        from .specs import scenarios_frame

        return scenarios_frame(list(self.deltas().values()))

    def validate_deltas(self) -> list[Problem]:
        """Every problem of its deltas, as `openspec validate` checks them (A9)."""
        from .delta_checks import delta_problems

        return delta_problems(self)

    def archive_preview(self, *, today: dt.date | None = None) -> ArchivePreview:
        """The main specs archiving it would produce, and why it would be refused;
        writes nothing (`today`: the archive date, by default today in UTC)."""
        from .archive import preview_archive

        return preview_archive(self, today=today)

    def __repr__(self) -> str:
        where = self.project.relative(self.folder)
        return f"<Change {self.name!r} (schema {self.schema_name!r}) at {where}>"

    def _repr_html_(self) -> str:
        return self.status()._repr_html_()


def new_change(
    name: str,
    schema: str | None = None,
    project: ProjectLike = None,
    *,
    description: str | None = None,
    skip_specs: bool = False,
    today: dt.date | None = None,
) -> Change:
    """Create `_codev/changes/<name>/change.yaml` recording its schema (A8).

    The schema defaults to the config's `schema:`, then `spec-driven`; it must exist
    and be usable. An existing change is never overwritten.
    """
    proj = as_project(project)
    if not KEBAB_CASE.match(name):
        raise InvalidInputError(
            f"change name {name!r} is not kebab-case; use lowercase letters, digits and "
            "hyphens, such as 'add-csv-export'"
        )
    schema_name = schema or proj.config.schema_ or "spec-driven"
    get_schema(schema_name, proj)  # refuses an unknown or broken schema before writing
    folder = proj.changes_folder / name
    if folder.exists():
        raise AlreadyExistsError(
            f"change {name!r} already exists at {proj.relative(folder)}; pick another name "
            "or open it with project.change(name)",
            folder,
        )
    record: dict[str, Any] = {
        "schema": schema_name,
        # UTC, as OpenSpec dates its changes: the same day on every machine at one instant
        "created": (today or dt.datetime.now(dt.UTC).date()).isoformat(),
    }
    if description:
        record["description"] = description
    if skip_specs:
        record["skip_specs"] = True
    folder.mkdir(parents=True)
    (folder / "change.yaml").write_text(
        yaml.safe_dump(record, sort_keys=False, allow_unicode=True), encoding="utf-8"
    )
    return open_change(folder, proj)


def open_change(change: str | Path | Change, project: ProjectLike = None) -> Change:
    """An existing change by name (under `_codev/changes/`) or by folder."""
    if isinstance(change, Change):
        return change
    path = Path(change)
    if path.is_dir():
        proj = as_project(project) if project is not None else Project(find_project_root(path))
        folder = path
    else:
        proj = as_project(project)
        folder = proj.changes_folder / str(change)
    strict = (folder / "change.yaml").is_file()
    openspec_meta = folder / ".openspec.yaml"
    has_meta = not strict and openspec_meta.is_file()
    in_place = proj.layout == "openspec" and folder.is_dir() and folder.name != "archive"
    if not (strict or has_meta or in_place):
        existing = (
            [p.name for p in proj.changes_folder.iterdir()
             if p.is_dir() and p.name != "archive" and not p.name.startswith(".")]
            if proj.changes_folder.is_dir() else []
        )  # the archive folder and hidden entries are not changes
        from ..core.paths import kind_of
        from ..errors import did_you_mean

        what = ("holds no change.yaml" if folder.is_dir() else
                "is a loop of links (or unreadable)" if kind_of(folder) == "unreadable"
                else "does not exist")
        raise ChangeNotFoundError(
            f"change {str(change)!r}: {proj.relative(folder)} {what}"
            + (
                did_you_mean(str(change), existing)
                or (
                    f"; changes: {', '.join(sorted(existing))}"
                    if existing
                    else "; create one with `crewbook new change NAME`"
                )
            )
        )
    name = folder.name if folder.name not in ("", ".", "..") else folder.resolve().name
    if not strict:
        from .openspec import read_metadata

        default = proj.config.schema_ or "spec-driven"
        if not has_meta:  # OpenSpec: no metadata, the project's default
            return Change(name, folder, proj, ChangeFile.model_validate({"schema": default}),
                          flavour="openspec")
        meta, problems = read_metadata(openspec_meta, lambda: proj.relative(openspec_meta),
                                       default)
        if meta is None:
            raise ConfigError(f"{proj.relative(openspec_meta)} is invalid", problems)
        return Change(name, folder, proj, meta, tuple(problems), flavour="openspec")
    doc = read_yaml(
        folder / "change.yaml",
        error_cls=ConfigError,
        display_path=proj.relative(folder / "change.yaml"),
    )
    model, problems = parse_model(ChangeFile, doc)
    problems = list(doc.problems) + problems
    if problems:
        raise ConfigError(f"{proj.relative(folder / 'change.yaml')} is invalid", problems)
    return Change(name=name, folder=folder, project=proj, file=cast(ChangeFile, model))


def change_status(change: str | Path | Change, project: ProjectLike = None) -> ChangeStatus:
    """The state of a change, given by name or folder (A6)."""
    return open_change(change, project).status()


