"""Commands on artifact schemas and changes (SPEC A): schemas, status, new change,
instructions, roles, example and archive."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import CrewbookError, Problem
from ..examples import example_names
from ._shared import adder, emit, project_arg

if TYPE_CHECKING:
    from ..artifacts.project import Project

# Each handler imports the models it needs: building the parser (`crewbook --help`)
# loads none of them.


def cmd_schemas(args: argparse.Namespace) -> int:
    from ..artifacts.registry import list_schemas

    listing = list_schemas(project_arg(args))
    emit(args, listing.to_dict(), str(listing))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from ..artifacts.change import open_change
    from ..artifacts.project import as_project
    from ..artifacts.status import refused_by_openspec

    if args.change is not None:
        opened = open_change(args.change, project_arg(args))
        status = refused_by_openspec(opened.status(), opened)
        emit(args, status.to_dict(), str(status))
        return 1 if any(p.severity == "error" for p in status.problems) else 0
    # every change of the project: a broken one is listed with its problems, never dropped
    project = as_project(project_arg(args))
    scan = project.scan()
    statuses, problems = [], list(project.warnings) + list(scan.problems)
    entries: list[dict[str, Any]] = []
    texts: list[str] = []
    for change in scan.changes:
        try:
            status = refused_by_openspec(change.status(), change)
        except CrewbookError as exc:
            found = list(getattr(exc, "problems", ())) or [
                Problem("status_failed", f"change {change.name!r}: {exc}",
                        path=project.relative(change.folder))]
            entry = unread_entry(project, change.folder, found)
            entries.append(entry)
            texts.append(f"Change {change.name}: its status cannot be computed ({len(found)} "
                         f"problem(s) below); tasks {entry['apply']['done']}/"
                         f"{entry['apply']['total']}, counted as OpenSpec counts them")
            problems += found
            continue
        statuses.append(status)
        entries.append(status.to_dict())
        texts.append(str(status))
    for name in scan.broken:
        found = [p for p in scan.problems
                 if p.path and f"/{name}/" in f"/{p.path}/" and p.severity == "error"]
        entries.append(unread_entry(project, project.changes_folder / name, found))
    entries.sort(key=lambda e: e["change"])
    if not entries and not problems:
        texts.append(f"No changes yet in {project.relative(project.changes_folder)}/; create "
                     "one with `crewbook new change NAME`.")
    texts += [str(p) for p in problems]
    emit(args, {"layout": project.layout, "changes": entries,
                "problems": [p.to_dict() for p in problems]}, "\n\n".join(texts))
    errors = [p for s in statuses for p in s.problems] + problems
    return 1 if any(p.severity == "error" for p in errors) else 0


def unread_entry(project: Project, folder: Path, problems: list[Problem]) -> dict[str, Any]:
    """The `status --json` entry of a change whose status cannot be computed (unknown
    schema, unreadable metadata): its problems, and its tasks counted the way the
    OpenSpec CLI falls back to them."""
    from ..artifacts.listing import fallback_tasks

    done, total = fallback_tasks(project, folder)
    return {"change": folder.name, "schema": None, "artifacts": [],
            "apply": {"state": "unknown", "done": done, "total": total, "missing": []},
            "problems": [p.to_dict() for p in problems]}


def cmd_list(args: argparse.Namespace) -> int:
    from ..artifacts.listing import list_changes, list_specs, task_words
    from ..artifacts.project import as_project

    project = as_project(project_arg(args))
    if args.specs:
        specs = list_specs(project)
        width = max((len(s["id"]) for s in specs), default=0)
        text = "\n".join(["Specs:"] + [f"  {s['id'].ljust(width)}     requirements "
                                       f"{s['requirementCount']}" for s in specs]) \
            if specs else "No specs found."
        emit(args, {"specs": specs}, text)
        return 0
    changes = list_changes(project, "name" if args.sort == "name" else "recent")
    width = max((len(c["name"]) for c in changes), default=0)
    lines = ["Changes:"] + [
        f"  {c['name'].ljust(width)}     "
        f"{task_words(c['completedTasks'], c['totalTasks']).ljust(12)}  "
        f"{c['lastModified'][:10]}" + ("  (cannot be read: see status)" if "problems" in c
                                       else "") for c in changes]
    emit(args, {"changes": changes}, "\n".join(lines) if changes else
         "No active changes found.")
    return 0


def cmd_archive(args: argparse.Namespace) -> int:
    from ..artifacts.archive import archive_change, preview_archive
    from ..artifacts.change import open_change

    change = open_change(args.change, project_arg(args))
    if args.dry_run:
        preview = preview_archive(change)
        emit(args, preview.to_dict(), f"{preview}\n\n{preview.diff()}")
        return 0 if preview.ok else 1
    done = archive_change(change)
    emit(args, done.to_dict(), str(done))
    return 0


def cmd_new_change(args: argparse.Namespace) -> int:
    from ..artifacts.change import new_change

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
    from ..artifacts.agent_instructions import instructions

    result = instructions(args.artifact, args.change, project_arg(args), language=args.lang)
    emit(args, result.to_dict(), result.text().rstrip())
    return 0


def cmd_roles(args: argparse.Namespace) -> int:
    from ..artifacts.agent_instructions import list_roles

    listing = list_roles(at=args.at, schema=args.schema, project=project_arg(args))
    emit(args, listing.to_dict(), str(listing))
    return 0


def cmd_example(args: argparse.Namespace) -> int:
    from ..examples import example_project

    path = example_project(args.name, args.dest)
    emit(
        args,
        {"example": args.name, "path": str(path)},
        f"Copied example project {args.name!r} to {path}\nTry: crewbook --project {path} schemas",
    )
    return 0


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add the artifact commands to the `crewbook` subparsers."""

    add = adder(sub, common)

    add("schemas", cmd_schemas, "list the usable schemas and warn about the others (A5)")
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
    p = add("list", cmd_list, "active changes with their task progress, or the main specs "
            "with their requirement counts (`openspec list` words and --json fields)")
    p.add_argument("--specs", action="store_true", help="list the main specs instead")
    p.add_argument("--changes", action="store_true", help="list the changes (the default)")
    p.add_argument("--sort", choices=("recent", "name"), default="recent",
                   help="changes newest first (default) or by name")
    p = add("archive", cmd_archive,
            "apply a change's spec deltas to the main specs and move it to changes/archive/")
    p.add_argument("change", metavar="CHANGE", help="the change folder or name")
    p.add_argument("--dry-run", action="store_true",
                   help="show the resulting specs and a side-by-side diff, write nothing")
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
