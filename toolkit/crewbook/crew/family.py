"""The crew family (SPEC D1–D5) described once for the front ends: ``FAMILY``.

Kinds: ``crew``. The loop lives in a project (``_codev/crew/``): its store opens it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.family import Declined, LoopFamily, StoreBase
from .codec import CrewCodec
from .engine import CrewReport
from .form import CrewForm
from .model import CrewState
from .players import CrewPlayers


class _Store(StoreBase[CrewState, CrewReport]):
    """The project's crew loop (`open_crew`); every accepted act saves it."""

    def load(self, folder: Path, source: object = None,
             settings: Mapping[str, str] | None = None) -> Any:
        """The crew loop of the project at `folder`."""
        from .api import open_crew

        return open_crew(folder)

    def sample_source(self, folder: Path, kind: str) -> object:
        """Declined: a run is set up in a project by `crew_init` (tests/crew cover it)."""
        return Declined("its run is kept by the project's own files, set up by crew_init")

    def save(self, loop: Any, folder: Path) -> None:
        """Nothing to do: the loop saves itself after each accepted act."""


def _rules() -> tuple[Any, ...]:
    from .checks import CREW_RULES

    return CREW_RULES


def _crew_loop(root: str) -> Any:
    """A crew loop on the storied tour's two stories, the bar off (no command runs)."""
    from ..artifacts import Project
    from ..core.clock import ManualClock
    from .engine import CrewLoop
    from .model import BarCommand, CrewConfig, CrewState

    config = CrewConfig(goal="sample", max_rounds=12, bar={"test": BarCommand(command="true")})
    state = CrewState(run="crew-1", config=config, epic="add-csv-export", story="Story 1")
    return CrewLoop(state, project=Project(root), run_bar=False, clock=ManualClock())


def _sample(folder: Path, kind: str = "crew") -> Any:
    from ..examples import storied_tour

    return functools.partial(_crew_loop, str(storied_tour(folder / "tour")))


def _formats() -> Any:
    from .model import format_models

    return format_models()


FAMILY: LoopFamily[CrewState, CrewReport] = LoopFamily(
    name="crew", kinds=("crew",),
    summary="the crew loop: analyst, developer and qa take turns over a backlog (SPEC D1-D5)",
    engine=Declined("a crew loop lives in a project; simulate it with a factory of your own "
                    "(functools.partial of a function building a CrewLoop)"),
    codec=CrewCodec(), players=CrewPlayers(), form=CrewForm(), rules=_rules, store=_Store(),
    sample=_sample, formats=_formats, duration_of=lambda report: report.duration_ms,
)
