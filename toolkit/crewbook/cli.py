"""The `crewbook` command: schemas, validation, changes, instructions and roles.

Exit status: 0 ok, 1 invalid input found (or a refusal), 2 usage error (including
a project, change or schema that does not exist). Every command takes `--json`;
with it, output (and any error) is one JSON document on standard output.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import __version__
from .artifacts.change import new_change, open_change
from .artifacts.instructions import instructions, list_roles
from .artifacts.project import as_project
from .artifacts.registry import list_schemas
from .errors import CrewbookError, NotFoundError
from .examples import example_names, example_project
from .validation import validate_paths

Handler = Callable[[argparse.Namespace], int]


def emit(args: argparse.Namespace, data: Any, text: str) -> None:
    """Print `data` as JSON with `--json`, else `text` (shared by every command)."""
    if getattr(args, "json", False):
        print(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    else:
        print(text)


def project_arg(args: argparse.Namespace) -> Path | None:
    """The `--project DIR` given, or None (walk up from the current folder)."""
    project = getattr(args, "project", None)
    return Path(project) if project else None


def cmd_schemas(args: argparse.Namespace) -> int:
    listing = list_schemas(project_arg(args))
    emit(args, listing.to_dict(), str(listing))
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    report = validate_paths([Path(p) for p in args.paths], project=project_arg(args))
    emit(args, report.to_dict(), str(report))
    return 0 if report.valid else 1


def cmd_status(args: argparse.Namespace) -> int:
    if args.change is None:  # every change of the project, one status each
        statuses = [change.status() for change in as_project(project_arg(args)).changes()]
        text = "\n\n".join(str(s) for s in statuses) or (
            "No changes yet; create one with `crewbook new change NAME`."
        )
        emit(args, {"changes": [s.to_dict() for s in statuses]}, text)
    else:
        statuses = [open_change(args.change, project_arg(args)).status()]
        emit(args, statuses[0].to_dict(), str(statuses[0]))
    return 1 if any(p.severity == "error" for s in statuses for p in s.problems) else 0


def cmd_new_change(args: argparse.Namespace) -> int:
    change = new_change(
        args.name,
        args.schema,
        project_arg(args),
        description=args.description,
        skip_specs=args.skip_specs,
    )
    rel = change.project.relative(change.folder)
    emit(
        args,
        {"change": change.name, "schema": change.schema_name, "path": rel},
        f"Created change {change.name} (schema {change.schema_name}) in {rel}/",
    )
    return 0


def cmd_instructions(args: argparse.Namespace) -> int:
    result = instructions(args.artifact, args.change, project_arg(args), language=args.lang)
    emit(args, result.to_dict(), result.text().rstrip())
    return 0


def cmd_roles(args: argparse.Namespace) -> int:
    listing = list_roles(at=args.at, schema=args.schema, project=project_arg(args))
    emit(args, listing.to_dict(), str(listing))
    return 0


def cmd_example(args: argparse.Namespace) -> int:
    path = example_project(args.name, args.dest)
    emit(
        args,
        {"example": args.name, "path": str(path)},
        f"Copied example project {args.name!r} to {path}\nTry: crewbook --project {path} schemas",
    )
    return 0


def common_options() -> argparse.ArgumentParser:
    """The options every command takes: `--project DIR` and `--json`."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--project",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="the project root (default: walk up from the current folder "
        "to the one holding _codev/)",
    )
    common.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print one JSON document instead of text",
    )
    return common


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, subcommands included."""
    common = common_options()
    parser = argparse.ArgumentParser(
        prog="crewbook",
        parents=[common],
        description="Check, inspect and step the workflow model of AI delivery teams.",
        epilog="Exit status: 0 ok, 1 invalid input found, 2 usage error.",
    )
    parser.add_argument("--version", action="version", version=f"crewbook {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def add(name: str, func: Handler, help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=help_, description=help_)
        p.set_defaults(func=func)
        return p

    add("schemas", cmd_schemas, "list the usable schemas and warn about the others (A5)")
    p = add(
        "validate",
        cmd_validate,
        "check schemas, configs, changes or whole projects, reporting every problem",
    )
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="a schema folder or schema.yaml, a config.yaml, a change folder, "
        "a project folder, a pipeline (.toml) or a ledger (.jsonl)",
    )
    p = add("status", cmd_status, "where a change stands: artifacts, apply gate, tasks (A6)")
    p.add_argument("--change", metavar="DIR",
                   help="the change folder or name (default: every change of the project)")

    p = sub.add_parser("new", help="create something (a change)", description="create something")
    new_sub = p.add_subparsers(dest="what", metavar="WHAT", required=True)
    q = new_sub.add_parser(
        "change",
        parents=[common],
        help="create a change (A8)",
        description="create _codev/changes/NAME/ recording its schema",
    )
    q.set_defaults(func=cmd_new_change)
    q.add_argument("name", metavar="NAME", help="kebab-case name of the change")
    q.add_argument("--schema", metavar="S", help="schema to use (default: the config's schema:)")
    q.add_argument("--description", metavar="TEXT", help="one line on the change")
    q.add_argument("--skip-specs", action="store_true", help="skip artifacts under specs/ (A9)")

    p = add(
        "instructions",
        cmd_instructions,
        "what an agent needs to write one artifact of a change (A10)",
    )
    p.add_argument("artifact", metavar="ARTIFACT", help="an artifact id, or 'apply'")
    p.add_argument("--change", required=True, metavar="DIR", help="the change folder or name")
    p.add_argument("--lang", default="en", metavar="CODE", help="language of role names")
    p = add("roles", cmd_roles, "roles and the step they act at (A7)")
    p.add_argument("--at", metavar="STEP", help="only the roles at STEP, such as plan.write")
    p.add_argument("--schema", metavar="S", help="schema whose artifact roles to list")
    p = add("example", cmd_example, "copy a bundled example project to try crewbook on")
    p.add_argument(
        "name",
        nargs="?",
        default="tour",
        choices=example_names(),
        help="which example (default: tour)",
    )
    p.add_argument(
        "dest", nargs="?", metavar="DEST", help="where to copy it (default: a temp folder)"
    )
    for register in _plugins():
        register(sub, common)
    return parser


def _plugins() -> list[Callable[[Any, argparse.ArgumentParser], None]]:
    """Commands contributed by the other packages (each imports nothing heavy)."""
    from .delivery.cli import register as review_policy
    from .draw.cli import register as graph
    from .ledger.cli import register as ledger
    from .pipeline.cli import register as step
    from .routing.cli import register as routing

    return [graph, ledger, routing, step, review_policy]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    for name, default in (("project", None), ("json", False)):
        if not hasattr(args, name):
            setattr(args, name, default)
    try:
        return int(args.func(args))
    except CrewbookError as exc:
        status = 2 if isinstance(exc, NotFoundError) else 1
        problems = getattr(exc, "problems", ())
        if args.json:
            print(
                json.dumps(
                    {
                        "error": {
                            "type": type(exc).__name__,
                            "message": str(exc),
                            "problems": [p.to_dict() for p in problems],
                        }
                    },
                    indent=2,
                    ensure_ascii=False,
                )
            )
        else:
            print(f"crewbook: error: {exc}", file=sys.stderr)
        return status
    except KeyboardInterrupt:
        print("crewbook: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `crewbook ... | head`: the reader left, nothing is wrong
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
