"""`crewbook validate`: check any file crewbook reads, choosing the check by what it is."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from .artifacts.change import open_change
from .artifacts.project import CODEV, Project, find_project_root, load_config
from .artifacts.registry import list_schemas
from .artifacts.schema import ValidationReport, validate_schema
from .errors import InvalidInputError, NotFoundError, Problem, ProjectNotFoundError


def validate_paths(paths: Sequence[Path], project: Path | None = None) -> ValidationReport:
    """Every problem in `paths`, each a schema folder or file, a config, a change, a
    project folder (all of its schemas, config and changes) or a ledger."""
    problems: list[Problem] = []
    for path in paths:
        problems += _validate_one(path, project)
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
    if project.changes_folder.is_dir():
        for folder in sorted(project.changes_folder.iterdir()):
            if (folder / "change.yaml").is_file():
                problems += _validate_change(folder, root)
    return problems
