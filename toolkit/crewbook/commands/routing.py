"""`crewbook routing …`: presets, init, show, classify, route and table.

Registered by `crewbook.commands` through `register(subparsers, common)`. Exit status: 0 ok,
1 invalid input or a refusal (an existing profile without --force), 2 usage or
something not found (a family, a task, a project); errors are raised and printed
by `crewbook.commands.main`.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..routing.axes import COMPLEXITIES, EFFORTS, SCOPES, TIERS
from ._shared import adder, common_options, emit, project_arg


def cmd_presets(args: argparse.Namespace) -> int:
    """`routing presets`: the built-in and custom presets."""
    from ..routing.presets import provider_presets_list

    listing = provider_presets_list()
    emit(args, listing.to_dict(), str(listing))
    return 0


def cmd_init(args: argparse.Namespace) -> int:
    """`routing init FAMILY`: write a profile from a preset."""
    from ..routing.profiles import provider_profile_init

    result = provider_profile_init(args.family, args.scope, args.force, project_arg(args))
    emit(args, result.to_dict(), str(result))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    """`routing show`: the active profile and where each value comes from."""
    from ..routing.active import provider_profile_show

    profile = provider_profile_show(project_arg(args))
    emit(args, profile.to_dict(), str(profile))
    return 0


def cmd_classify(args: argparse.Namespace) -> int:
    """`routing classify TASK`: store axes, print the resolved route."""
    from ..routing.routes import task_classify

    route = task_classify(
        args.task,
        args.complexity,
        args.tier,
        args.effort,
        change=args.change,
        project=project_arg(args),
    )
    emit(args, route.to_dict(), str(route))
    return 0


def cmd_route(args: argparse.Namespace) -> int:
    """`routing route TASK`: the suggested route, with its resolution path."""
    from ..routing.routes import task_route_show

    route = task_route_show(args.task, change=args.change, project=project_arg(args))
    emit(args, route.to_dict(), str(route))
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    """`routing table --change C`: the routes of every task of a change."""
    from ..routing.routes import task_routes

    table = task_routes(args.change, project_arg(args))
    emit(args, table.to_dict(), str(table))
    return 0


def register(subparsers: Any, common: argparse.ArgumentParser | None = None) -> None:
    """Add `routing` and its subcommands to the `crewbook` subparsers."""
    common = common or common_options()
    routing = subparsers.add_parser(
        "routing",
        help="model routing: presets, profiles, task classes and routes (D7-D9)",
        description="Which model, at which effort, each task and role gets (SPEC D7-D9).",
    )
    sub = routing.add_subparsers(dest="routing_command", metavar="COMMAND", required=True)

    add = adder(sub, common)

    add("presets", cmd_presets, "list the provider presets, built-in and custom (D7)")
    p = add("init", cmd_init, "write a profile (tier x effort -> model) from a preset (D7)")
    p.add_argument("family", metavar="FAMILY", help="claude, codex, gemini, mistral, or custom")
    p.add_argument(
        "--scope",
        default="global",
        choices=SCOPES,
        help="global ($CREWBOOK_HOME/profile.yaml, the default) or project "
        "(_codev/routing/profile.yaml)",
    )
    p.add_argument("--force", action="store_true", help="overwrite an existing profile")
    add("show", cmd_show, "the active profile and where each value comes from (D7)")

    def task_args(q: argparse.ArgumentParser) -> None:
        q.add_argument("task", metavar="TASK", help="a task id or position, or any id")
        q.add_argument("--change", metavar="C", help="the change whose tasks.md holds TASK")

    p = add("classify", cmd_classify, "classify a task on 1+ axes; prints its route (D8)")
    task_args(p)
    p.add_argument("--complexity", metavar="C", help="|".join(COMPLEXITIES))
    p.add_argument("--tier", metavar="T", help="capability tier: " + "|".join(TIERS))
    p.add_argument("--effort", metavar="E", help="effort level: " + "|".join(EFFORTS))
    p = add("route", cmd_route, "the suggested model and native effort of a task (D9)")
    task_args(p)
    p = add("table", cmd_table, "the routes of every task of a change")
    p.add_argument("--change", metavar="C", required=True, help="the change")
