"""The `crewbook` command line: one module per command family, on top of the library.

Exit status: 0 ok, 1 invalid input found (or a refusal), 2 usage error (including
a project, change or schema that does not exist). Every command takes `--json`;
with it, output (and any error) is one JSON document on standard output.

Each module in `COMMANDS` exposes `register(subparsers, common)`; a handler returns
the exit status and raises `CrewbookError` for anything `main` should report. Nothing
in the library imports this package (an import-graph test checks it), and building
the parser imports nothing heavy: handlers import what they need when they run.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib import import_module

from .. import __version__
from ..errors import CrewbookError, NotFoundError
from ._shared import common_options, emit_json, error_document

__all__ = ["COMMANDS", "build_parser", "main"]

#: The command modules, in the order `crewbook --help` lists them.
COMMANDS: tuple[str, ...] = (
    "artifacts", "validate", "graph", "ledger", "routing", "pipeline", "review", "crew",
    "mcp", "diff", "simulate",
)


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
    for name in COMMANDS:
        import_module(f"{__name__}.{name}").register(sub, common)
    return parser


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
        if args.json:
            emit_json(error_document(exc))
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
