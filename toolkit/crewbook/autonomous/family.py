"""The autonomous family (SPEC D6) described once for the front ends: ``FAMILY``.

Kinds: ``autonomous``. The loop lives in a project (``_codev/crew/loop.json``).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from ..core.family import Declined, LoopFamily
from .codec import AutonomousCodec
from .engine import LoopStep
from .form import AutonomousForm
from .model import LoopState
from .players import AutonomousPlayers


def _rules() -> tuple[Any, ...]:
    from .rules import AUTONOMOUS_RULES

    return AUTONOMOUS_RULES


def _autonomous_loop(root: str) -> Any:
    """An autonomous loop at Plan in the storied tour."""
    from ..artifacts import Project
    from ..core.clock import ManualClock
    from .engine import AutonomousLoop

    return AutonomousLoop(LoopState(run="loop-1", goal="sample", max_recettes=2),
                          project=Project(root), clock=ManualClock())


def _sample(folder: Path, kind: str = "autonomous") -> Any:
    from ..examples import storied_tour

    return functools.partial(_autonomous_loop, str(storied_tour(folder / "tour")))


def _formats() -> Any:
    from .model import format_models

    return format_models()


FAMILY: LoopFamily[LoopState, LoopStep] = LoopFamily(
    name="autonomous", kinds=("autonomous",),
    summary="the autonomous loop: plan, implementation, recette, delivery (SPEC D6)",
    engine=Declined("an autonomous loop lives in a project; simulate it with a factory of "
                    "your own (a function building an AutonomousLoop)"),
    codec=AutonomousCodec(), players=AutonomousPlayers(), form=AutonomousForm(),
    rules=_rules,
    store=Declined("step it with `crewbook autonomous step` (alias `loop step`), the one "
                   "command path of this loop: it runs the recette's test command itself and "
                   "takes the project's lock, where a report given as JSON could claim a "
                   "test run nobody ran"),
    sample=_sample, formats=_formats,
)
