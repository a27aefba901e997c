"""The autonomous family (SPEC D6) described once for the front ends: ``FAMILY``.

Kinds: ``autonomous``. The loop lives in a project (``_codev/crew/loop.json``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.family import Declined, LoopFamily, StoreBase
from .codec import AutonomousCodec
from .engine import LoopStep
from .form import AutonomousForm
from .model import LoopState
from .players import AutonomousPlayers


class _Store(StoreBase[LoopState, LoopStep]):
    """The project's autonomous loop (`open_autonomous`); every step saves it."""

    def load(self, folder: Path, source: object = None,
             settings: Mapping[str, str] | None = None) -> Any:
        """The autonomous loop of the project at `folder`."""
        from .api import open_autonomous

        return open_autonomous(folder)

    def sample_source(self, folder: Path, kind: str) -> object:
        """Declined: a run is set up in a project by `loop_init` (tests/crew cover it)."""
        return Declined("its run is kept by the project's own files, set up by loop_init")

    def save(self, loop: Any, folder: Path) -> None:
        """Nothing to do: the loop saves itself after each step."""


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
    rules=_rules, store=_Store(), sample=_sample, formats=_formats,
)
