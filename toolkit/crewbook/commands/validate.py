"""`crewbook validate PATH...`: check any file crewbook reads, choosing the check by what
it is (a schema, config, change, project, pipeline or ledger)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.paths import kind_of
from ..errors import InvalidInputError, Problem, ProjectNotFoundError
from ._shared import emit, project_arg

if TYPE_CHECKING:  # the checks load when a path is validated, not with the parser
    from ..report import ValidationReport

__all__ = ["register", "strict", "validate_paths"]


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `validate` to the `crewbook` subparsers."""
    text = "check schemas, configs, changes or whole projects, reporting every problem"
    p = sub.add_parser("validate", parents=[common], help=text, description=text)
    p.set_defaults(func=cmd_validate)
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="a schema folder or schema.yaml, a config.yaml, a change folder, "
        "a project folder, a pipeline (.toml) or a ledger (.jsonl)",
    )
    p.add_argument(
        "--rules",
        action="store_true",
        help="for ledgers, also check each run against the rules of the loop that wrote "
        "it (seq, time, who may judge or report, QA before finalising, caps)",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="count warnings as errors (as `openspec validate --strict`)",
    )


def cmd_validate(args: argparse.Namespace) -> int:
    missing = [Problem("file_not_found", "no such file or folder", path=str(p))
               for p in args.paths if kind_of(p) in ("missing", "unreadable")]
    if missing:  # a usage error, as in every command: exit 2, the error document
        raise InvalidInputError("cannot validate: a path does not exist", missing)
    report = validate_paths([Path(p) for p in args.paths], project=project_arg(args),
                            rules=bool(getattr(args, "rules", False)))
    if getattr(args, "strict", False):
        report = strict(report)
    emit(args, report.to_dict(), str(report))
    return 0 if report.valid else 1


def validate_paths(paths: Sequence[Path], project: Path | None = None, *,
                   rules: bool = False) -> ValidationReport:
    """Every problem in `paths`, each a schema folder or file, a config, a change, a
    project folder (all of its schemas, config and changes) or a ledger; with `rules`,
    a ledger's runs are also checked against their loop's rules (`check_conformance`)."""
    from ..report import ValidationReport

    problems: list[Problem] = []
    for path in paths:
        problems += _validate_one(path, project)
        if rules and path.exists() and (path.suffix == ".jsonl" or (path.is_dir() and (
                any(path.glob("*.jsonl")) or (path / "state.json").is_file()))):
            from ..ledger.conformance import conformance_problems

            problems += conformance_problems(path)
    problems = list(dict.fromkeys(problems))  # a broken schema used by many changes: once
    subject = ", ".join(str(p) for p in paths)
    return ValidationReport(tuple(problems), subject=subject)


#: Warnings `--strict` leaves warnings: notes on what crewbook reads differently or
#: ignores, which `openspec validate --strict` does not report (or reports as INFO).
ADVISORY = frozenset({"unused_key", "delta_target_missing", "not_a_requirement",
                      "metadata_no_schema", "two_layouts", "retire_marker_invalid"})


def strict(report: ValidationReport) -> ValidationReport:
    """`report` with its warnings counted as errors (`--strict`), advisory notes aside."""
    import dataclasses

    problems = tuple(dataclasses.replace(p, severity="error")
                     if p.severity == "warning" and p.code not in ADVISORY else p
                     for p in report.problems)
    return dataclasses.replace(report, problems=problems)


def _root_for(path: Path, project: Path | None) -> Path | None:
    from ..artifacts.project import find_project_root

    try:
        return find_project_root(project or path)
    except ProjectNotFoundError:
        return None


def _validate_one(path: Path, project: Path | None) -> list[Problem]:
    from ..artifacts.audit import errors_of, validate_change, validate_project
    from ..artifacts.project import CODEV, OPENSPEC, load_config
    from ..artifacts.schema import validate_schema

    kind = kind_of(path)
    if kind in ("missing", "unreadable"):
        return [Problem("file_not_found", "no such file or folder", path=str(path))]
    if kind not in ("file", "folder"):
        return [Problem("not_a_file", f"it is a {kind}, not a file or a folder: crewbook "
                        "checks regular files and folders only", path=str(path))]
    root = _root_for(path, project)
    if path.is_dir():
        if (path / "schema.yaml").is_file():
            return list(validate_schema(path, display_root=root))
        in_openspec = path.parent.name == "changes" and path.parent.parent.name == OPENSPEC
        if (path / "change.yaml").is_file() or (path / ".openspec.yaml").is_file() or in_openspec:
            return list(validate_change(path, root))
        if (path / CODEV).is_dir() or (path / OPENSPEC).is_dir() or path.name == OPENSPEC:
            return list(validate_project(path))
        ledgers = sorted(path.glob("*.jsonl"))
        if ledgers:
            from ..ledger.reader import validate_ledger

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
        return list(validate_schema(path, display_root=root))
    if name == "change.yaml":
        return list(validate_change(path.parent, root))
    if name == "config.yaml" and path.parent.name == CODEV:
        return errors_of(lambda: load_config(path.parent.parent))
    if path.suffix == ".toml":
        from ..pipeline import validate_pipeline

        return list(validate_pipeline(path))
    if path.suffix == ".jsonl":
        from ..ledger.reader import validate_ledger

        return list(validate_ledger(path))
    return [
        Problem(
            "unknown_kind",
            f"crewbook does not know how to check {name!r}: give a "
            "schema.yaml, config.yaml, change.yaml, a pipeline .toml, a .jsonl ledger, or a folder "
            "holding one",
            path=str(path),
        )
    ]
