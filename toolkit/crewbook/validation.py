"""`crewbook validate`: check any file crewbook reads, choosing the check by what it is."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from .artifacts.change import open_change
from .artifacts.project import CODEV, Project, find_project_root, load_config
from .artifacts.registry import SchemaListing, list_schemas
from .artifacts.roles import builtin_role_ids
from .artifacts.schema import ValidationReport, validate_schema
from .errors import InvalidInputError, NotFoundError, Problem, ProjectNotFoundError, did_you_mean
from .sources import read_yaml


def validate_paths(paths: Sequence[Path], project: Path | None = None) -> ValidationReport:
    """Every problem in `paths`, each a schema folder or file, a config, a change, a
    project folder (all of its schemas, config and changes) or a ledger."""
    problems: list[Problem] = []
    for path in paths:
        problems += _validate_one(path, project)
    problems = list(dict.fromkeys(problems))  # a broken schema used by many changes: once
    subject = ", ".join(str(p) for p in paths)
    return ValidationReport(tuple(problems), subject=subject)


def _root_for(path: Path, project: Path | None) -> Path | None:
    try:
        return find_project_root(project or path)
    except ProjectNotFoundError:
        return None


def _validate_one(path: Path, project: Path | None) -> list[Problem]:
    if not path.exists():
        return [Problem("file_not_found", "no such file or folder", path=str(path))]
    root = _root_for(path, project)
    if path.is_dir():
        if (path / "schema.yaml").is_file():
            return list(validate_schema(path, display_root=root).problems)
        if (path / "change.yaml").is_file():
            return _validate_change(path, root)
        if (path / CODEV).is_dir():
            return _validate_project(path)
        ledgers = sorted(path.glob("*.jsonl"))
        if ledgers:
            from .ledger.cli import validate_ledger

            return [p for ledger in ledgers for p in validate_ledger(ledger)]
        return [
            Problem(
                "unknown_kind",
                f"this folder holds no schema.yaml, change.yaml, {CODEV}/ or .jsonl ledger; "
                "point at one of those",
                path=str(path),
            )
        ]
    name = path.name
    if name == "schema.yaml":
        return list(validate_schema(path, display_root=root).problems)
    if name == "change.yaml":
        return _validate_change(path.parent, root)
    if name == "config.yaml" and path.parent.name == CODEV:
        return _errors_of(lambda: load_config(path.parent.parent))
    if path.suffix == ".toml":
        from .pipeline import validate_pipeline

        return validate_pipeline(path)
    if path.suffix == ".jsonl":
        from .ledger.cli import validate_ledger

        ledger_problems: list[Problem] = validate_ledger(path)
        return ledger_problems
    return [
        Problem(
            "unknown_kind",
            f"crewbook does not know how to check {name!r}: give a "
            "schema.yaml, config.yaml, change.yaml, a pipeline .toml, a .jsonl ledger, or a folder "
            "holding one",
            path=str(path),
        )
    ]


def _errors_of(load: object, path: str | None = None) -> list[Problem]:
    try:
        load()  # type: ignore[operator]
    except InvalidInputError as exc:
        return list(exc.problems) or [Problem("invalid", str(exc), path=path)]
    except NotFoundError as exc:  # e.g. a change naming a schema that does not exist
        code = re.sub(r"(?<!^)(?=[A-Z])", "_", type(exc).__name__.removesuffix("Error")).lower()
        return [Problem(code, str(exc), path=path)]
    return []


def _validate_change(folder: Path, root: Path | None) -> list[Problem]:
    def load() -> None:
        change = open_change(folder, Project(root) if root else None)
        status = change.status()
        problems.extend(status.problems)

    problems: list[Problem] = []
    shown = folder / "change.yaml"
    display = Project(root).relative(shown) if root else str(shown)
    return _errors_of(load, display) + problems


def _validate_project(root: Path) -> list[Problem]:
    project = Project(root)
    problems = _errors_of(lambda: project.config)
    for folder in (
        sorted(project.schemas_folder.glob("*/")) if project.schemas_folder.is_dir() else []
    ):
        if (folder / "schema.yaml").is_file():
            problems += validate_schema(folder, display_root=root).problems
    listing = list_schemas(project)
    problems += [
        Problem(w.code, w.message, path=f"{CODEV}/schemas/{w.schema}", severity="warning")
        for w in listing.warnings
        if w.code == "schema_unusable" and w.error is None
    ]
    if not problems or all(p.path != f"{CODEV}/config.yaml" for p in problems):
        problems += _config_targets(project, listing)
    if project.changes_folder.is_dir():
        for folder in sorted(project.changes_folder.iterdir()):
            if (folder / "change.yaml").is_file():
                problems += _validate_change(folder, root)
    return problems


def _config_targets(project: Project, listing: SchemaListing) -> list[Problem]:
    """Warn about config `rules:` and `roles:` keys that no usable schema knows (a typo
    there would silently apply to nothing)."""
    config = project.config
    if not (config.rules or config.roles) or not (project.codev / "config.yaml").is_file():
        return []
    artifacts = {a.id for schema in listing for a in schema.artifacts} | {"apply"}
    roles = set(builtin_role_ids()) | {r for schema in listing for r in schema.roles()}
    doc = read_yaml(project.codev / "config.yaml", display_path=f"{CODEV}/config.yaml")
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
