"""What every command shares: the common options, the project lookup, and output.

Every command prints through `emit` (or `emit_json`), so `--json` always means one
JSON document on standard output, errors included (`error_document`).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import CrewbookError

Handler = Callable[[argparse.Namespace], int]


def as_json(args: argparse.Namespace) -> bool:
    """Whether `--json` was given."""
    return bool(getattr(args, "json", False))


def emit_json(data: Any) -> None:
    """Print `data` as one indented JSON document (non-JSON values as text)."""
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def emit(args: argparse.Namespace, data: Any, text: str) -> None:
    """Print `data` as JSON with `--json`, else `text`."""
    if as_json(args):
        emit_json(data)
    else:
        print(text)


def error_document(exc: CrewbookError) -> dict[str, Any]:
    """The JSON document of an error: `{"error": {type, message, problems}}`, the
    message in the command line's words (``--force``)."""
    problems = getattr(exc, "problems", ())
    return {
        "error": {
            "type": type(exc).__name__,
            "message": exc.said_to("cli"),
            "problems": [p.to_dict() for p in problems],
        }
    }


def project_arg(args: argparse.Namespace) -> Path | None:
    """The `--project DIR` given, or None (walk up from the current folder)."""
    project = getattr(args, "project", None)
    return Path(project) if project else None


def adder(sub: Any, common: argparse.ArgumentParser
          ) -> Callable[[str, Handler, str], argparse.ArgumentParser]:
    """`add(name, handler, help)`: a subcommand of `sub` taking the common options."""

    def add(name: str, func: Handler, help_: str) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = sub.add_parser(
            name, parents=[common], help=help_, description=help_
        )
        p.set_defaults(func=func)
        return p

    return add


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


def act_text(data: dict[str, Any]) -> str:
    """The text of a loop's act contract (`Act.to_dict`): its role, route and what it
    expects, or why the loop finished."""
    if data["finished"]:
        return f"The {data['loop']} loop has finished: {data['finished_reason']}"
    route = data.get("route") or {}
    model = route.get("model") or "no model (see `crewbook routing init`)"
    lines = [f"Act {data['act']}: {data['role']} ({data['stage']}), attempt {data['attempt']}",
             f"  route: {model} · {route.get('native_text') or ''} "
             f"({route.get('tier')}/{route.get('effort')}, {route.get('via')})",
             f"  expects: {data['expects']}"]
    if data.get("prompt_path"):
        lines.append(f"  prompt: {data['prompt_path']}")
    return "\n".join(lines)
