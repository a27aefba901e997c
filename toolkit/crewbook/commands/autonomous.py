"""The autonomous family's command group, ``init|step`` (SPEC D6); its name, its old
name ``loop`` and its help are the family's registry line (`crewbook.families`).

``step`` advances the persisted loop one phase and runs the recette's test command.
Exit status: 0 ok, 1 invalid input or a refusal (`LoopRefused`: nothing was logged), 2
usage or something not found (no loop yet, no project). With `--json`, one JSON
document.
"""

from __future__ import annotations

import argparse

from ._shared import act_text, adder, emit, project_arg


def cmd_loop_init(args: argparse.Namespace) -> int:
    """`loop init GOAL`: start the autonomous loop."""
    from ..autonomous.api import loop_init

    status = loop_init(args.goal, args.force, project=project_arg(args),
                       max_recettes=args.max_recettes)
    emit(args, status.to_dict(), f"Autonomous loop started at plan: {args.goal}")
    return 0


def cmd_loop_step(args: argparse.Namespace) -> int:
    """`loop step`: advance the autonomous loop one phase."""
    from ..autonomous.api import loop_step

    act = loop_step(args.test_command, project=project_arg(args), act=args.act)
    emit(args, act.to_dict(), act_text(act.to_dict()))
    return 0


def build(parser: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """Add the autonomous loop's sub-commands to its group's `parser` (`common`: the
    shared options, a parent of each)."""
    lsub = parser.add_subparsers(dest="loop_command", metavar="COMMAND", required=True)
    add = adder(lsub, common)
    p = add("init", cmd_loop_init, "start the autonomous loop at plan")
    p.add_argument("goal", metavar="GOAL")
    p.add_argument("--max-recettes", type=int, default=3,
                   help="failed recettes before it escalates; 0 = unlimited")
    p.add_argument("--force", action="store_true", help="overwrite an existing loop")
    p = add("step", cmd_loop_step, "advance one phase (runs the test at the recette)")
    p.add_argument("--test-command", metavar="CMD",
                   help="the recette's test command (default: the first declared stack's)")
    p.add_argument("--act", type=int, metavar="N", help="the act number of the contract "
                   "answered: a step already taken is not taken again")
