"""Checks across a project: a change, or a whole project (config, schemas, changes).

`validate_project` and `validate_change` return every problem found as a
`ValidationReport`, never raising for bad input (like every `validate_*`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from ..errors import InvalidInputError, NotFoundError, Problem, did_you_mean
from ..report import ValidationReport
from ..sources import read_yaml
from .change import Change, open_change
from .project import CODEV, Project
from .registry import SchemaListing, list_schemas
from .schema import validate_schema
from .step_roles import builtin_role_ids


def validate_change(folder: Path | str, root: Path | str | None = None) -> ValidationReport:
    """Every problem of the change in `folder` (its change.yaml, schema and artifacts)."""
    folder, base = Path(folder), Path(root) if root is not None else None
    return ValidationReport(tuple(change_problems(folder, base)), subject=str(folder))


def validate_project(root: Path | str) -> ValidationReport:
    """Every problem of a project: its config, its schemas and all its changes."""
    return ValidationReport(tuple(project_problems(Path(root))), subject=str(root))


def errors_of(load: Callable[[], object],
              path: str | Callable[[], str] | None = None) -> list[Problem]:
    """The problems `load()` raises (none: []); `path` (or what it returns, asked only
    then) locates an error that names no place."""
    try:
        load()
    except InvalidInputError as exc:
        return list(exc.problems) or [Problem("invalid", str(exc), path=_shown(path))]
    except NotFoundError as exc:  # e.g. a change naming a schema that does not exist
        code = re.sub(r"(?<!^)(?=[A-Z])", "_", type(exc).__name__.removesuffix("Error")).lower()
        return [Problem(code, str(exc), path=_shown(path))]
    return []


def _shown(path: str | Callable[[], str] | None) -> str | None:
    return path() if callable(path) else path


def change_problems(folder: Path, root: Path | None,
                    change: Change | None = None) -> list[Problem]:
    """Every problem of one change: its metadata, schema, status and (OpenSpec) deltas;
    `change`, when given, is the change already opened (a project's scan shares its
    schema cache with it)."""
    def load() -> None:
        opened = change or open_change(folder, Project(root) if root else None)
        status = opened.status()
        problems.extend(status.problems)
        if opened.flavour == "openspec":  # codev's specs/ may hold any file names
            from .delta_checks import delta_problems  # A9: deltas under specs/ only

            problems.extend(delta_problems(opened, status.files))

    def display() -> str:  # where the change is described: only asked on an error
        shown = folder / "change.yaml"
        if not shown.is_file():
            shown = folder / ".openspec.yaml" if (folder / ".openspec.yaml").is_file() \
                else folder
        return ((change.project if change else Project(root)).relative(shown)
                if root or change else str(shown))

    problems: list[Problem] = []
    return errors_of(load, display) + problems


def project_problems(root: Path) -> list[Problem]:
    project = Project(root)
    problems = errors_of(lambda: project.config)
    if not problems:
        problems += list(project.warnings)
    for folder in (
        sorted(project.schemas_folder.glob("*/")) if project.schemas_folder.is_dir() else []
    ):
        if (folder / "schema.yaml").is_file():
            problems += validate_schema(folder, display_root=root).problems
    listing = list_schemas(project)
    problems += [
        Problem(w.code, w.message, path=f"{project.folder_name}/schemas/{w.schema}",
                severity="warning")
        for w in listing.warnings
        if w.code == "schema_unusable" and w.error is None
    ]
    if not problems or all(p.path != f"{CODEV}/config.yaml" for p in problems):
        problems += config_targets(project, listing)
    problems += main_spec_problems(project)
    scan = project.scan()
    problems += list(scan.problems)
    for change in scan.changes:
        problems += change_problems(change.folder, project.root, change)
    return problems


def main_spec_problems(project: Project) -> list[Problem]:
    """Every problem of the project's main specs (`openspec validate --specs`): an
    OpenSpec project's only; codev main specs are checked when archive writes them."""
    if project.layout != "openspec":
        return []
    from .spec_checks import check_main_spec
    from .specs import spec_files

    problems: list[Problem] = []
    for _cap, file in spec_files(project.specs_folder):
        problems += check_main_spec(file.read_text("utf-8", errors="replace"),
                                    project.relative(file))
    return problems


def config_targets(project: Project, listing: SchemaListing) -> list[Problem]:
    """Warn about config `rules:` and `roles:` keys that no usable schema knows (a typo
    there would silently apply to nothing)."""
    config = project.config
    if not (config.rules or config.roles) or not (project.codev / "config.yaml").is_file():
        return []
    artifacts = {a.id for schema in listing for a in schema.artifacts} | {"apply"}
    roles = set(builtin_role_ids()) | {r for schema in listing for r in schema.roles()}
    doc = read_yaml(project.codev / "config.yaml",
                    display_path=f"{project.folder_name}/config.yaml")
    found = []
    for section, known, what in (("rules", artifacts, "artifact"), ("roles", roles, "role")):
        for key in getattr(config, section):
            if key not in known:
                found.append(doc.problem(
                    f"unknown_{what}",
                    f"`{section}` names {key!r}, which is no {what} of any usable schema, so "
                    f"it applies to nothing{did_you_mean(key, known)}",
                    (section, key), severity="warning",
                ))
    return found
