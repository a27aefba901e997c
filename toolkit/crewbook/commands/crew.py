"""The crew family's command group, ``init|step|report|status`` (SPEC D1-D5); its name
and help are the family's registry line (`crewbook.families`).

Each sub-command loads the project's persisted loop (`_codev/crew/`), acts and saves, so
the command line, the MCP server and a notebook can take turns on one loop. Exit status:
0 ok, 1 invalid input or a refusal (`LoopRefused`: nothing was logged), 2 usage or
something not found (no loop yet, no project). With `--json`, one JSON document.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..errors import CrewError, Problem
from ._shared import act_text, adder, emit, project_arg

BAR_NAMES = ("test", "lint", "typecheck", "build")


def _bar(args: argparse.Namespace) -> dict[str, Any]:
    bar: dict[str, Any] = {}
    if args.bar_json:
        try:
            loaded = json.loads(args.bar_json)
        except json.JSONDecodeError as exc:
            raise CrewError("--bar-json is not JSON", [Problem(
                "bar_bad_json", exc.msg, "--bar-json", exc.lineno, exc.colno)]) from None
        if not isinstance(loaded, dict):
            raise CrewError("--bar-json is not an object", [Problem(
                "bar_not_object", "give an object such as '{\"test\": \"pytest -q\"}'",
                key="bar")])
        bar.update(loaded)
    for item in args.bar or []:
        name, sep, command = item.partition("=")
        if not sep:
            raise CrewError("--bar needs NAME=COMMAND", [Problem(
                "bar_bad_option", f"{item!r}: write it as test='pytest -q'", key="bar")])
        bar[name.strip()] = command
    return bar


def cmd_crew_init(args: argparse.Namespace) -> int:
    """`crew init GOAL`: start the crew loop."""
    from ..crew.api import crew_init

    status = crew_init(args.goal, args.scope, args.max_rounds, args.max_epics, _bar(args),
                       args.force, project=project_arg(args), epic=args.epic,
                       bar_timeout=args.bar_timeout)
    emit(args, status.to_dict(), f"Crew loop started: {_status_text(status.to_dict())}")
    return 0


def cmd_crew_step(args: argparse.Namespace) -> int:
    """`crew step`: the next act's contract (writes its prompt file)."""
    from ..crew.api import crew_step

    act = crew_step(args.document, project=project_arg(args))
    emit(args, act.to_dict(), act_text(act.to_dict()))
    return 0


def cmd_crew_report(args: argparse.Namespace) -> int:
    """`crew report ROLE VERDICT SUMMARY`: report an act, get the next."""
    from ..crew.api import crew_report

    payload = None
    if args.payload is not None:
        try:
            payload = json.loads(args.payload)
        except json.JSONDecodeError as exc:
            raise CrewError("--payload is not JSON", [Problem(
                "payload_bad_json", exc.msg, "--payload", exc.lineno, exc.colno)]) from None
    act = crew_report(args.role, args.verdict, args.summary, payload, args.payload_path,
                      project=project_arg(args), act=args.act)
    emit(args, act.to_dict(), act_text(act.to_dict()))
    return 0


def cmd_crew_status(args: argparse.Namespace) -> int:
    """`crew status`: where the loop is (read-only)."""
    from ..crew.api import crew_status

    status = crew_status(args.full, project=project_arg(args))
    data = status.to_dict()
    lines = [_status_text(data)]
    details = data["details"]
    if details["ledger_omitted"]:
        lines.append(f"  ({details['ledger_omitted']} earlier acts omitted; --full for all)")
    lines += [f"  #{r['act']} {r['role']}: {r['verdict']} — {r['summary']}"
              for r in details["ledger"]]
    emit(args, data, "\n".join(lines))
    return 0


def _status_text(data: dict[str, Any]) -> str:
    d = data["details"]
    caps = ", ".join(f"{c['name']} {c['used']}/{c['limit'] or '∞'}" for c in data["caps"])
    if data["finished"]:
        return f"{d['run']} finished: {data['finished_reason']} after {data['acts']} acts ({caps})"
    p = d["pointer"]
    task = f"task {p['task']}" if p.get("task") else "no task yet (no box in its tasks.md)"
    return (f"{d['run']} expects {d['expected_role']} ({d['step']}) on epic {p['epic']}, "
            f"story {p['story']}, {task} after {data['acts']} acts ({caps})")


def build(parser: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """Add the crew loop's sub-commands to its group's `parser` (`common`: the shared
    options, a parent of each)."""
    sub = parser.add_subparsers(dest="crew_command", metavar="COMMAND", required=True)
    add = adder(sub, common)
    p = add("init", cmd_crew_init, "start the crew loop (D1)")
    p.add_argument("goal", metavar="GOAL", help="what the loop must deliver")
    p.add_argument("--scope", default="epic", choices=("story", "epic", "all", "workshop"))
    p.add_argument("--max-rounds", type=int, default=100, help="most acts; 0 = unlimited")
    p.add_argument("--max-epics", type=int, default=3, help="most epics; 0 = unlimited")
    p.add_argument("--bar", action="append", metavar="NAME=COMMAND",
                   help=f"a bar command ({', '.join(BAR_NAMES)}); repeat; at least one")
    p.add_argument("--bar-json", metavar="JSON",
                   help='the bar as JSON: \'{"test": {"command": "pytest -q", "cwd": "api"}}\'')
    p.add_argument("--bar-timeout", type=float, default=600.0,
                   help="seconds before a bar command's process group is killed (600)")
    p.add_argument("--epic", metavar="CHANGE", help="the change to start on")
    p.add_argument("--force", action="store_true", help="overwrite an existing crew loop")
    p = add("step", cmd_crew_step, "the next act's contract; writes its prompt (D4)")
    p.add_argument("--document", metavar="ID", help="an artifact id to focus the contract on")
    p = add("report", cmd_crew_report, "report the expected role's act (D2)")
    p.add_argument("role", choices=("analyst", "developer", "qa"))
    p.add_argument("verdict", metavar="VERDICT", help="done (analyst, developer), go|no-go (qa)")
    p.add_argument("summary", metavar="SUMMARY", help="one sentence, logged")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--payload", metavar="JSON", help="the role's output as a JSON object")
    group.add_argument("--payload-path", metavar="FILE",
                       help="a JSON file under the project (at most 4 MiB)")
    p.add_argument("--act", type=int, metavar="N", help="the act number of the contract "
                   "answered: a retry of an accepted act is not logged twice")
    p = add("status", cmd_crew_status, "where the crew loop is, read-only (D3)")
    p.add_argument("--full", action="store_true", help="every act, not only the last ones")
