"""`crewbook graph PATH [--schema NAME] [--change DIR] [-o FILE]`: draw a schema or a change.

Registered by `crewbook.commands` through `register(subparsers, common)`. Like the rest of
the command line it sits on top of the concepts: the handler imports
`crewbook.artifacts.graph` when it runs, never at import.

Without `-o` the DOT text is printed (or mermaid / SVG with `--format`); with `-o` the
file's extension picks the format: `.dot`, `.mmd`, `.svg`, `.png`, `.pdf`. Formats
that need the Graphviz `dot` program exit with status 1 and the install hint when it
is missing. A broken schema is still drawn (its problems go to standard error).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..draw.settings import SAVE_FORMATS
from ..errors import DotNotFoundError, Problem
from ._shared import emit_json

if TYPE_CHECKING:
    from ..draw.model import GraphModel

STDOUT_FORMATS = ("dot", "mmd", "svg", "png", "pdf")


def register(subparsers: Any, common: argparse.ArgumentParser | None = None) -> None:
    """Add the `graph` command to `subparsers` (`common`: shared options such as --project)."""
    parents = [common] if common is not None else []
    text = "draw a schema (even a broken one) or a change as DOT, mermaid, SVG or PNG"
    p = subparsers.add_parser("graph", parents=parents, help=text, description=text,
                              epilog="Formats by extension: " + ", ".join(
                                  f"{e} ({w})" for e, w in SAVE_FORMATS.items()))
    p.add_argument("path", nargs="?", default=None, metavar="PATH",
                   help="a schema folder or schema.yaml, a project, or a pipeline .toml "
                        "(default: --project, else .)")
    p.add_argument("--schema", metavar="NAME",
                   help="in a project: the schema to draw (default: the config's schema:)")
    p.add_argument("--change", metavar="DIR",
                   help="draw this change's status (a change folder, or its name in PATH)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write FILE instead of printing DOT; the extension picks the format")
    p.add_argument("-f", "--format", choices=STDOUT_FORMATS,
                   help="format when printing (default dot; svg, png, pdf need Graphviz)")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--collapse", dest="collapse", action="store_true", default=None,
                       help="collapse folders into summary nodes even for a small graph")
    group.add_argument("--no-collapse", dest="collapse", action="store_false",
                       help="never collapse (big graphs may take dot a long time)")
    p.add_argument("--expand", action="append", default=[], metavar="GROUP",
                   help="keep GROUP (a folder or rank band) expanded when collapsing; repeatable")
    p.set_defaults(func=cmd_graph)


def cmd_graph(args: argparse.Namespace) -> int:
    """Draw what PATH names; 0 when drawn, 1 when `dot` is needed but missing."""
    from ..draw.display import prepare, save  # here: `crewbook --help` draws nothing
    from ..draw.dot import to_dot
    from ..draw.mermaid import to_mermaid
    from ..draw.render import render

    args.path = args.path or getattr(args, "project", None) or "."
    if Path(args.path).suffix == ".toml":
        from ..pipeline import load_pipeline

        model = load_pipeline(args.path).graph_model()
        problems: tuple[Problem, ...] = ()
    else:
        model, problems = model_for_path(Path(args.path), schema=args.schema, change=args.change)
    model = prepare(model, collapse=args.collapse, expand=args.expand)
    as_json = bool(getattr(args, "json", False))
    if problems and not as_json:
        print(f"crewbook graph: {model.name} is invalid ({len(problems)} problem"
              f"{'s' if len(problems) != 1 else ''}), drawn from its raw data:", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
    try:
        if args.output:
            target = save(model, args.output)
            payload: dict[str, Any] = {"output": str(target)}
            message = f"Wrote {target} ({len(model)} nodes, {len(model.edges)} edges)"
        else:
            fmt = args.format or "dot"
            if fmt == "dot":
                data: str | bytes = to_dot(model)
            elif fmt == "mmd":
                data = to_mermaid(model)
            else:
                data = render(to_dot(model), fmt)
                if fmt == "svg":
                    data = data.decode("utf-8")
            payload = {"format": fmt}
            if isinstance(data, bytes):
                if as_json:
                    payload["bytes"] = len(data)
                else:
                    sys.stdout.buffer.write(data)
                    sys.stdout.flush()
                    return 0
            else:
                payload["text"] = data
            message = data if isinstance(data, str) else ""
    except DotNotFoundError as exc:
        if as_json:  # like every command: with --json, the error is the JSON document
            error = {"type": type(exc).__name__, "message": str(exc), "problems": []}
            emit_json({"error": error})
        else:
            print(f"crewbook graph: error: {exc}", file=sys.stderr)
        return 1
    if as_json:
        payload.update({
            "graph": model.name, "nodes": len(model), "edges": len(model.edges),
            "collapsed": bool(model.note), "note": model.note or None,
            "problems": [p.to_dict() for p in problems],
        })
        emit_json(payload)
    else:
        print(message, end="" if message.endswith("\n") else "\n")
    return 0


def model_for_path(
    path: Path | str, *, schema: str | None = None, change: str | None = None
) -> tuple[GraphModel, tuple[Problem, ...]]:
    """What `crewbook graph PATH [--schema NAME] [--change DIR]` draws, and its errors.

    PATH is a schema folder or schema.yaml (drawn even when broken), or a project (or
    a folder inside one) whose schema `schema` (default: the config's, then
    `spec-driven`) is drawn; with `change`, that change's status is drawn instead.
    """
    from ..artifacts.change import open_change
    from ..artifacts.project import Project
    from ..artifacts.registry import builtin_folder, builtin_names, schema_path_graph
    from ..errors import ProjectNotFoundError, SchemaNotFoundError

    where = Path(path)
    if change is not None:
        try:
            project: Project | None = Project(where)
        except ProjectNotFoundError:
            project = None
        return open_change(change, project).status().graph_model(), ()
    if where.is_file() or (where / "schema.yaml").is_file():
        return schema_path_graph(where)
    try:
        project = Project(where)
    except ProjectNotFoundError:
        if schema is not None and schema in builtin_names():
            return schema_path_graph(builtin_folder() / schema)
        raise
    name = schema or project.config.schema_ or "spec-driven"
    folder = project.schemas_folder / name
    if folder.is_dir():
        return schema_path_graph(folder)
    if name in builtin_names():
        return schema_path_graph(builtin_folder() / name)
    project.schema(name)  # raises SchemaNotFoundError with a suggestion
    raise SchemaNotFoundError(f"no schema named {name!r}")  # pragma: no cover
