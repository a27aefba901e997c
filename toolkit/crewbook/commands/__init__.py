"""The `crewbook` command line: one module per command family, on top of the library.

Exit status, the same for every command (docs/hardening.md): 0 ok (warnings
allowed), 1 invalid input found or a refusal, 2 usage error: bad arguments, or a
path, project, change or schema that does not exist. Every command takes `--json`;
with it, output (and any error, usage errors included) is one JSON document on
standard output.

Each module in `COMMANDS` exposes `register(subparsers, common)`; a loop family's own
command group is declared by its registry line (`crewbook.families.CommandGroup`: name,
help, and the module whose ``build(parser, common)`` adds its sub-commands), and the
groups of every registered family are listed where `FAMILY_GROUPS` stands. A handler returns
the exit status and raises `CrewbookError` for anything `main` should report. Nothing
in the library imports this package (an import-graph test checks it), and building
the parser imports nothing heavy: handlers import what they need when they run.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Sequence
from importlib import import_module
from typing import Any

from .. import __version__
from ..errors import CrewbookError, NotFoundError, UsageError
from ._shared import common_options, emit_json, error_document

__all__ = ["ALONE", "COMMANDS", "build_parser", "main"]

#: Where the registered families' own command groups go in `COMMANDS` (registry order).
FAMILY_GROUPS = ""
#: The command modules, in the order `crewbook --help` lists them.
COMMANDS: tuple[str, ...] = (
    "artifacts", "validate", "graph", "ledger", "routing", "step", "review", FAMILY_GROUPS,
    "mcp", "diff", "simulate",
)


def add_family_groups(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add the command group of every registered family that declares one (its name,
    aliases and help from the registry line; its sub-commands from its module)."""
    from ..families import command_groups

    for group in command_groups().values():
        parser = sub.add_parser(group.name, aliases=list(group.aliases), help=group.help,
                                description=group.description)
        import_module(group.module).build(parser, common)


#: The command modules that add one command of their own name: `crewbook mcp ...` (that
#: name first) needs only that module's parser (`build_parser`).
ALONE: tuple[str, ...] = ("validate", "graph", "ledger", "routing", "step", "mcp", "diff",
                         "simulate")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full argument parser, subcommands included; with `only` (one of `ALONE`),
    the same parser with that command alone: what ``crewbook mcp ...`` parses the same
    way, without importing and building the other commands' parsers (about 30 ms of a
    start-up, which an MCP client waits for before ``initialize`` is answered)."""
    common = common_options()
    parser = argparse.ArgumentParser(
        prog="crewbook",
        parents=[common],
        description="Check, inspect and step the workflow model of AI delivery teams.",
        epilog="Exit status: 0 ok, 1 invalid input found, 2 usage error.",
    )
    parser.add_argument("--version", action="version", version=f"crewbook {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in (only,) if only in ALONE else COMMANDS:
        if name == FAMILY_GROUPS:
            add_family_groups(sub, common)
        else:
            import_module(f"{__name__}.{name}").register(sub, common)
    return parser


#: The arguments that name a path (a file, a folder, LEDGER:RUN, or a change folder).
PATH_ARGS: tuple[str, ...] = (
    "paths", "path", "project", "payload_path", "policy", "file", "diff", "run", "workspace",
    "report", "kinds", "output", "change", "ledger", "source", "epic")


def check_path_args(args: argparse.Namespace) -> None:
    """Every path argument can name a file (no NUL, parts of at most 255 bytes, at most
    4096 bytes), else a `UsageError` naming the argument (`core.paths.checked_path`)."""
    from ..core.paths import checked_path

    for name in PATH_ARGS:
        value = getattr(args, name, None)
        values = value if isinstance(value, list | tuple) else [value]
        for item in values:
            if isinstance(item, str | os.PathLike):
                flag = name if name in ("paths", "path", "file", "diff", "source") \
                    else "--" + name.replace("_", "-")
                checked_path(item, flag.upper() if not flag.startswith("--") else flag)


def exit_status(exc: CrewbookError) -> int:
    """2 for what does not exist (a `NotFoundError`, or input whose only problems are
    missing files) and for a usage error; 1 for anything else."""
    if isinstance(exc, NotFoundError | UsageError):
        return 2
    codes = getattr(exc, "codes", None)
    return 2 if codes and all(c == "file_not_found" for c in codes) else 1


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """`parser.parse_args`, but with `--json` a usage error is one JSON document too."""
    words = list(sys.argv[1:] if argv is None else argv)
    if "--json" not in words:
        return parser.parse_args(words)
    import contextlib
    import io

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            return parser.parse_args(words)
    except SystemExit as exc:
        if exc.code in (0, None):
            raise
        message = err.getvalue().strip().splitlines()
        emit_json({"error": {"type": "UsageError", "message": message[-1] if message else
                             "invalid arguments", "usage": "\n".join(message[:-1]),
                             "problems": []}})
        raise


#: Optional packages, by the crewbook extra that installs them (pyproject.toml).
EXTRAS: dict[str, str] = {
    "mcp": "mcp", "dask": "dask", "distributed": "dask",
    "jupyterlab": "notebook", "jupyter_server": "notebook", "ipykernel": "notebook",
}


def missing_extra(exc: ModuleNotFoundError, command: str | None) -> UsageError | None:
    """A `UsageError` naming the extra to install when `exc` is an optional package not
    installed here; None for any other missing module (a real bug: let it show)."""
    root = (exc.name or "").partition(".")[0]
    extra = EXTRAS.get(root)
    if extra is None:
        return None
    what = f"`crewbook {command}`" if command else "this command"
    return UsageError(f"{what} needs the optional package {root!r}, which is not installed "
                      f"in {sys.prefix}: pip install 'crewbook[{extra}]'")


def _report(args: argparse.Namespace, error: CrewbookError) -> int:
    """Print `error` (one JSON document with `--json`, else one line on stderr); returns
    its exit status."""
    if args.json:
        emit_json(error_document(error))
    else:
        print(f"crewbook: error: {error.said_to('cli')}", file=sys.stderr)
    return exit_status(error)


def _closed_to_devnull() -> None:
    """A standard output or error crewbook was started without (``crewbook ... >&-``:
    Python sets it to None) becomes the null device, on its own descriptor: what would
    be printed there is dropped, as for a reader that left a pipe, and no file crewbook
    opens later takes that descriptor."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        if getattr(sys, name) is None:
            null = os.open(os.devnull, os.O_WRONLY)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            setattr(sys, name, open(fd, "w", encoding="utf-8", closefd=False))  # noqa: SIM115


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    _closed_to_devnull()
    if list(sys.argv[1:] if argv is None else argv) == ["--version"]:
        print(f"crewbook {__version__}")  # what argparse prints, without building every parser
        return 0
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(words[0] if words else None)
    args = _parse(parser, words)
    for name, default in (("project", None), ("json", False)):
        if not hasattr(args, name):
            setattr(args, name, default)
    status = 0
    try:
        check_path_args(args)
        status = int(args.func(args))
        sys.stdout.flush()  # a closed pipe shows here, inside the handlers below
        return status
    except CrewbookError as exc:
        return _report(args, exc)
    except KeyboardInterrupt:
        print("crewbook: interrupted", file=sys.stderr)
        return 130
    except ModuleNotFoundError as exc:
        error = missing_extra(exc, getattr(args, "command", None))
        if error is None:
            raise
        return _report(args, error)
    except BrokenPipeError:  # `crewbook ... | head`: the reader left, nothing is wrong
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return status  # the command's own status when it had finished (1: problems found)
    except (OSError, RuntimeError) as exc:  # a name the OS refuses, met deeper than the
        # arguments; Python 3.11's Path.resolve raises RuntimeError on a loop of links
        loop = isinstance(exc, RuntimeError) and str(exc).startswith("Symlink loop")
        if not loop and getattr(exc, "errno", None) not in (errno.ENAMETOOLONG, errno.ELOOP):
            raise
        where = (str(exc).removeprefix("Symlink loop from ") if loop
                 else getattr(exc, "filename", None) or "a path")
        why = "a loop of links" if loop else getattr(exc, "strerror", "")
        return _report(args, UsageError(f"{where}: {why}; give a shorter path (parts of at "
                                        "most 255 bytes) without a loop of links"))
