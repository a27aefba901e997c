"""`crewbook diff A B` and `crewbook diff --git REV -- PATH`: compare two designs.

The kind is picked from the files (`crewbook.compare.input_kind`): two schema folders
(or schema.yaml files), two pipeline .toml files, two routing profiles (or family
names), or two runs as ``LEDGER:RUN``. With ``--git REV`` the one PATH is compared with
its version at that git revision (read with ``git show``; the work tree is untouched).

Output: the differences as text, or one JSON document with ``--json``; ``-o FILE``
also writes the overlay drawing (``.dot``, ``.mmd``, ``.svg``, ``.png``, ``.pdf``).
Exit status: 0 compared (``--exit-code``: 1 when they differ), 1 two inputs that cannot
be compared (different kinds) or an invalid file, 2 usage error or something missing
(a path, a run, a revision).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import CompareError, UsageError
from ._shared import as_json, emit, emit_json, error_document, project_arg


def register(subparsers: Any, common: argparse.ArgumentParser | None = None) -> None:
    """Add the `diff` command to the `crewbook` subparsers."""
    parents = [common] if common is not None else []
    text = "compare two schemas, pipelines, routing profiles or runs side by side"
    p = subparsers.add_parser(
        "diff", parents=parents, help=text, description=text,
        epilog="Runs are given as LEDGER:RUN (a ledger file or folder, a colon, the run id). "
               "Exit status: 0 compared, 1 inputs of different kinds or invalid, 2 usage error.")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="A B: two schema folders, pipelines (.toml), profiles (.yaml or a "
                        "family name) or LEDGER:RUN; with --git, the one PATH")
    p.add_argument("--git", metavar="REV",
                   help="compare PATH with its version at git revision REV (git show)")
    p.add_argument("--change", metavar="C",
                   help="schemas: the consequences for this change only; profiles: list "
                        "the tasks of this change routed differently")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="also write the overlay drawing; the extension picks the format")
    p.add_argument("--exit-code", action="store_true",
                   help="exit with status 1 when the inputs differ (like git diff)")
    p.set_defaults(func=cmd_diff)


def cmd_diff(args: argparse.Namespace) -> int:
    """Compare, print the differences, and write the drawing when asked."""
    from ..compare.paths import diff, diff_at_revision, input_kind

    paths = list(args.paths)
    if args.git is not None and len(paths) != 1:
        return _usage(args, f"--git {args.git} compares one PATH with its version at that "
                            f"revision; {len(paths)} given (crewbook diff --git REV -- PATH)")
    if args.git is None and len(paths) != 2:
        return _usage(args, f"crewbook diff compares two inputs; {len(paths)} given "
                            "(crewbook diff A B, or crewbook diff --git REV -- PATH)")
    options = _options(args, input_kind(paths[0]).kind, paths[-1])
    result = (diff_at_revision(args.git, paths[0], **options) if args.git is not None
              else diff(paths[0], paths[1], **options))
    data = result.to_dict()
    text = result.text()
    if args.output:
        target = result.save(args.output)
        data["output"] = str(target)
        text += f"\nWrote {target}"
    emit(args, data, text)
    return 1 if args.exit_code and not result.empty else 0


def _usage(args: argparse.Namespace, message: str) -> int:
    """A usage error (the arguments, not a file), shaped like every error; exit status 2."""
    if as_json(args):
        emit_json(error_document(UsageError(message)))
    else:
        print(f"crewbook: error: {message}", file=sys.stderr)
    return 2


def _options(args: argparse.Namespace, kind: str, last: str) -> dict[str, Any]:
    project = project_arg(args)
    if kind == "schema":
        if project is None:  # the project around the new version: its changes' consequences
            from ..artifacts.project import find_project_root
            from ..errors import ProjectNotFoundError

            try:
                project = find_project_root(Path(last).resolve())
            except ProjectNotFoundError:
                project = None
        if args.change is not None:
            return {"changes": [args.change], "project": project}
        return {"project": project} if project is not None else {}
    if kind == "profile" and args.change is not None:
        return {"change": args.change, "project": project}
    if args.change is not None:
        raise CompareError(f"--change applies to schemas and profiles, not to a {kind}")
    return {}


__all__ = ["register"]
