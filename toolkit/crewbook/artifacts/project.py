"""A project: the folder holding `_codev/` (codev layout) or `openspec/` (OpenSpec's
layout, read in place), its config, schemas and changes."""

from __future__ import annotations

import html
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

from ..core.family import resolve
from ..errors import ConfigError, Problem, ProjectNotFoundError
from ..models import parse_model
from ..sources import read_yaml
from .model import ProjectConfig

if TYPE_CHECKING:
    import pandas as pd

    from .change import Change
    from .openspec import ArchivedChange, ChangeScan
    from .registry import SchemaListing
    from .schema import Schema
    from .specs import MainSpec
    from .status import ChangeStatus

CODEV = "_codev"
OPENSPEC = "openspec"
Layout = Literal["codev", "openspec"]
#: The folder each layout keeps its config, schemas and changes in.
LAYOUT_FOLDER: dict[str, str] = {"codev": CODEV, "openspec": OPENSPEC}


def locate_project(start: Path | str | None = None) -> tuple[Path, Layout, tuple[Problem, ...]]:
    """The nearest folder at or above `start` holding `_codev/` or `openspec/`, its
    layout, and a warning when it holds both (`_codev/` is used: it is crewbook's own)."""
    here = Path(start or Path.cwd()).resolve()
    if here.is_file():
        here = here.parent
    for folder in (here, *here.parents):
        codev, openspec = (folder / CODEV).is_dir(), (folder / OPENSPEC).is_dir()
        if codev and openspec:
            return folder, "codev", (Problem(
                "two_layouts",
                f"{folder.name}/ holds both `{CODEV}/` and `{OPENSPEC}/`; crewbook uses "
                f"`{CODEV}/`. Pass --project {folder / OPENSPEC} (Project(...) in Python) to "
                f"read the OpenSpec one, or remove the folder you do not use",
                path=str(folder), severity="warning"),)
        if codev or openspec:
            return folder, "codev" if codev else "openspec", ()
    raise ProjectNotFoundError(
        f"no `{CODEV}/` or `{OPENSPEC}/` folder in {here} or any folder above it; run "
        "crewbook inside a project, pass --project DIR (project=... in Python), or create "
        f"`{CODEV}/schemas/` to start one"
    )


def find_project_root(start: Path | str | None = None) -> Path:
    """The nearest folder at or above `start` (default: the current one) holding
    `_codev/` or `openspec/`."""
    return locate_project(start)[0]


def load_config(root: Path) -> ProjectConfig:
    """`_codev/config.yaml`, or the defaults when the file does not exist."""
    file = root / CODEV / "config.yaml"
    if not file.exists():
        return ProjectConfig()
    doc = read_yaml(file, error_cls=ConfigError, display_path=f"{CODEV}/config.yaml")
    model, problems = parse_model(ProjectConfig, doc)
    problems = list(doc.problems) + problems
    if problems:
        raise ConfigError(f"{CODEV}/config.yaml is invalid", problems)
    return cast(ProjectConfig, model)


#: The modules above this one that `Project`'s shortcuts call, by dotted path (resolved
#: when called), so that the project, the bottom of the concept, imports none of them.
_LIST_SCHEMAS = "crewbook.artifacts.registry:list_schemas"
_GET_SCHEMA = "crewbook.artifacts.registry:get_schema"
_OPEN_CHANGE = "crewbook.artifacts.change:open_change"
_GET_SCHEMA = "crewbook.artifacts.registry:get_schema"
_SCAN_CHANGES = "crewbook.artifacts.openspec:scan_changes"
_ARCHIVED_CHANGES = "crewbook.artifacts.openspec:archived_changes"
_READ_MAIN_SPECS = "crewbook.artifacts.specs:read_main_specs"
_REQUIREMENTS_FRAME = "crewbook.artifacts.specs:requirements_frame"
_SCENARIOS_FRAME = "crewbook.artifacts.specs:scenarios_frame"
_PROJECT_HISTORY = "crewbook.artifacts.history:project_history"
_SETTLE_ARCHIVE = "crewbook.artifacts.archive_commit:settle_on_open"

@dataclass(frozen=True, eq=False)
class Project:
    """A project: `Project(path)` finds `_codev/` or `openspec/` at or above `path`.

    `path` may also be the `openspec/` (or `_codev/`) folder itself, which picks that
    layout when a folder holds both.
    """

    root: Path
    layout: Layout
    notes: tuple[Problem, ...]

    def __init__(self, path: Path | str | None = None) -> None:
        given = Path(path).resolve() if path is not None else None
        root: Path
        layout: Layout
        notes: tuple[Problem, ...]
        is_layout_folder = (given is not None and given.name in (CODEV, OPENSPEC)
                            and given.is_dir() and not (given / CODEV).is_dir()
                            and not (given / OPENSPEC).is_dir())
        if given is not None and is_layout_folder:
            root, layout, notes = given.parent, "codev" if given.name == CODEV else "openspec", ()
        else:
            root, layout, notes = locate_project(path)
        object.__setattr__(self, "root", root)
        object.__setattr__(self, "layout", layout)
        if os.path.lexists(self.changes_folder / "archive" / ".crewbook-journal.json"):
            # an archive is committing or was killed while committing: finish it first,
            # so nothing read sees half of it
            notes += resolve(_SETTLE_ARCHIVE)(self)
        object.__setattr__(self, "notes", notes)

    @cached_property
    def codev(self) -> Path:
        """The layout's folder: `_codev/`, or `openspec/` for an OpenSpec project (root
        and layout never change, so it and the folders below are computed once)."""
        return self.root / LAYOUT_FOLDER[self.layout]

    @property
    def folder_name(self) -> str:
        """`_codev` or `openspec`, for messages."""
        return LAYOUT_FOLDER[self.layout]

    @cached_property
    def schemas_folder(self) -> Path:
        """Where project schemas live (A1)."""
        return self.codev / "schemas"

    @cached_property
    def changes_folder(self) -> Path:
        """Where changes live: `_codev/changes/<name>/` (or `openspec/changes/<name>/`)."""
        return self.codev / "changes"

    @cached_property
    def specs_folder(self) -> Path:
        """Where main specs live: `<layout folder>/specs/<capability>/spec.md` (A9)."""
        return self.codev / "specs"

    @cached_property
    def _config_and_warnings(self) -> tuple[ProjectConfig, tuple[Problem, ...]]:
        if self.layout == "openspec":
            from .openspec import load_openspec_config

            return load_openspec_config(self.codev)
        return load_config(self.root), ()

    @property
    def config(self) -> ProjectConfig:
        """The project config (defaults when the config file is absent)."""
        return self._config_and_warnings[0]

    @property
    def warnings(self) -> tuple[Problem, ...]:
        """What the project's files say that crewbook does not use (OpenSpec keys it
        ignores), and which layout is used when a folder holds both."""
        return self.notes + self._config_and_warnings[1]

    @cached_property
    def root_prefix(self) -> str:
        """The root as text ending with a separator (`relative` compares paths with it)."""
        return str(self.root).rstrip("/") + "/"

    def relative(self, path: Path) -> str:
        """`path` relative to the project root, for stable display."""
        text, root = str(path), self.root_prefix
        if text.startswith(root) and os.sep == "/" and "/../" not in text + "/":
            return text[len(root):]  # no resolve, no pathlib: 1,000s of calls
        if path.is_absolute() and ".." not in path.parts and path.is_relative_to(self.root):
            return path.relative_to(self.root).as_posix()
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return str(path)

    def schemas(self) -> SchemaListing:
        """Every schema usable here, with warnings for the others (A5)."""
        list_schemas: Callable[[Project], SchemaListing] = resolve(_LIST_SCHEMAS)
        return list_schemas(self)

    def schema(self, name: str | None = None) -> Schema:
        """The schema `name` (default: the config's `schema:`, else `spec-driven`)."""
        get_schema: Callable[[str, Project], Schema] = resolve(_GET_SCHEMA)
        return get_schema(name or self.config.schema_ or "spec-driven", self)

    def cached_schema(self, name: str) -> Schema:
        """`schema(name)`, read once per project object while its `schema.yaml` is
        unchanged (computing the status of 1,000 changes reads it once, not 1,000 times)."""
        get_schema: Callable[..., Schema] = resolve(_GET_SCHEMA)
        try:
            stamp: int | None = os.stat(
                os.path.join(self.schemas_folder, name, "schema.yaml")).st_mtime_ns
        except OSError:
            stamp = None
        cache: dict[tuple[str, int | None], Schema] = self.__dict__.setdefault("_schemas", {})
        if (name, stamp) not in cache:
            cache[(name, stamp)] = get_schema(name, self)
        return cache[(name, stamp)]

    def change(self, name_or_path: str | Path) -> Change:
        """An existing change, by name or folder."""
        open_change: Callable[[str | Path, Project], Change] = resolve(_OPEN_CHANGE)
        return open_change(name_or_path, self)

    def changes(self) -> list[Change]:
        """Every active change that opens, by name (`scan()` also reports the others)."""
        return list(self.scan().changes)

    def scan(self) -> ChangeScan:
        """Every active change folder: the changes that open, and a problem for each
        folder that does not (never all-or-nothing)."""
        scan_changes: Callable[[Project], ChangeScan] = resolve(_SCAN_CHANGES)
        return scan_changes(self)

    def archived(self) -> list[ArchivedChange]:
        """The archived changes, `changes/archive/YYYY-MM-DD-<name>/`, oldest first."""
        archived_changes: Callable[[Project], list[ArchivedChange]] = resolve(_ARCHIVED_CHANGES)
        return archived_changes(self)

    def specs(self) -> dict[str, MainSpec]:
        """The main specs, `specs/<capability>/spec.md`, by capability (A9)."""
        read_main_specs: Callable[[Path, Path], dict[str, MainSpec]] = resolve(_READ_MAIN_SPECS)
        return read_main_specs(self.specs_folder, self.root)

    def requirements(self) -> pd.DataFrame:
        """One row per requirement of the main specs: capability, requirement, op,
        scenarios, normative, file, line."""
        requirements_frame: Callable[[list[MainSpec]], pd.DataFrame] = resolve(_REQUIREMENTS_FRAME)
        return requirements_frame(list(self.specs().values()))

    def scenarios(self) -> pd.DataFrame:
        """One row per scenario of the main specs: capability, requirement, scenario,
        file, line."""
        scenarios_frame: Callable[[list[MainSpec]], pd.DataFrame] = resolve(_SCENARIOS_FRAME)
        return scenarios_frame(list(self.specs().values()))

    def history(self, *, git: bool = True) -> pd.DataFrame:
        """Every change, active and archived: dates, task progress, artifacts present,
        and the first and last git commit touching it (see `history.COLUMNS`)."""
        project_history: Callable[..., pd.DataFrame] = resolve(_PROJECT_HISTORY)
        return project_history(self, git=git)

    def status(self, change: str | Path) -> ChangeStatus:
        """The state of a change (A6)."""
        return self.change(change).status()

    def __repr__(self) -> str:
        layout = " (openspec)" if self.layout == "openspec" else ""
        return f"<Project {self.root.name!r}{layout} at {self.root}>"

    def _repr_html_(self) -> str:
        from ..draw.cards import short_list

        changes = short_list([c.name for c in self.changes()]) or "none yet"
        return (
            f"<div><b>Project {html.escape(self.root.name)}</b>: default schema "
            f"<code>{html.escape(self.config.schema_ or 'spec-driven')}</code>; "
            f"changes: {html.escape(changes)}</div>"
        )


ProjectLike = Project | Path | str | None


def as_project(project: ProjectLike) -> Project:
    """A `Project` from a Project, a path, or None (walk up from the current folder)."""
    return project if isinstance(project, Project) else Project(project)


def project_or_none(project: ProjectLike) -> Project | None:
    """The given project, or the one around the current folder, or None outside any."""
    if project is not None:
        return as_project(project)
    try:
        return Project()
    except ProjectNotFoundError:
        return None
