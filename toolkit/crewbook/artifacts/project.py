"""A codev project: the folder holding `_codev/`, its config, schemas and changes."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ..core.family import resolve
from ..errors import ConfigError, ProjectNotFoundError
from ..models import parse_model
from ..sources import read_yaml
from .model import ProjectConfig

if TYPE_CHECKING:
    from .change import Change
    from .registry import SchemaListing
    from .schema import Schema
    from .status import ChangeStatus

CODEV = "_codev"


def find_project_root(start: Path | str | None = None) -> Path:
    """The nearest folder at or above `start` (default: the current one) holding `_codev/`."""
    here = Path(start or Path.cwd()).resolve()
    if here.is_file():
        here = here.parent
    for folder in (here, *here.parents):
        if (folder / CODEV).is_dir():
            return folder
    raise ProjectNotFoundError(
        f"no `{CODEV}/` folder in {here} or any folder above it; run crewbook inside a "
        "project, pass --project DIR (project=... in Python), or create "
        f"`{CODEV}/schemas/` to start one"
    )


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

@dataclass(frozen=True, eq=False)
class Project:
    """A project: `Project(path)` finds `_codev/` at or above `path`."""

    root: Path

    def __init__(self, path: Path | str | None = None) -> None:
        object.__setattr__(self, "root", find_project_root(path))

    @property
    def codev(self) -> Path:
        """The `_codev/` folder."""
        return self.root / CODEV

    @property
    def schemas_folder(self) -> Path:
        """Where project schemas live (A1)."""
        return self.codev / "schemas"

    @property
    def changes_folder(self) -> Path:
        """Where changes live: `_codev/changes/<name>/`."""
        return self.codev / "changes"

    @cached_property
    def config(self) -> ProjectConfig:
        """The project config (defaults when `_codev/config.yaml` is absent)."""
        return load_config(self.root)

    def relative(self, path: Path) -> str:
        """`path` relative to the project root, for stable display."""
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

    def change(self, name_or_path: str | Path) -> Change:
        """An existing change, by name or folder."""
        open_change: Callable[[str | Path, Project], Change] = resolve(_OPEN_CHANGE)
        return open_change(name_or_path, self)

    def changes(self) -> list[Change]:
        """Every change folder (those holding a `change.yaml`), by name."""
        open_change: Callable[[str | Path, Project], Change] = resolve(_OPEN_CHANGE)
        if not self.changes_folder.is_dir():
            return []
        return [
            open_change(p, self)
            for p in sorted(self.changes_folder.iterdir())
            if (p / "change.yaml").is_file()
        ]

    def status(self, change: str | Path) -> ChangeStatus:
        """The state of a change (A6)."""
        return self.change(change).status()

    def __repr__(self) -> str:
        return f"<Project {self.root.name!r} at {self.root}>"

    def _repr_html_(self) -> str:
        changes = ", ".join(c.name for c in self.changes()) or "none yet"
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
