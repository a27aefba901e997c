"""One small fresh loop per ledger kind of every registered family, for the protocol
suite (`test_protocol.py`): the way transitions runs its core tests over each machine
class, every family runs the same tests here.

A new family adds its kinds to `SAMPLES` (a picklable factory: a module-level function
or a `functools.partial` of one, so that simulate may send it to a worker).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import crewbook
from crewbook.autonomous import AutonomousLoop
from crewbook.core.clock import ManualClock
from crewbook.crew.engine import CrewLoop
from crewbook.crew.model import BarCommand, CrewConfig, CrewState, LoopState
from crewbook.delivery.factory import TaskFactory
from crewbook.families import FAMILIES, family
from crewbook.pipeline.factory import PipelineFactory

DATA = Path(__file__).parent.parent / "data" / "pipelines"
PIPELINE = DATA / "role_pipeline.toml"
WORKSPACE = DATA / "workspace"


def crew_loop(root: str) -> CrewLoop:
    """A crew loop on two stories of the tour project, bar off (no command runs)."""
    config = CrewConfig(goal="protocol", max_rounds=12, bar={"test": BarCommand(command="true")})
    state = CrewState(run="crew-1", config=config, epic="add-csv-export", story="Story 1")
    return CrewLoop(state, project=crewbook.Project(root), run_bar=False,
                    clock=ManualClock())


def autonomous_loop(root: str) -> AutonomousLoop:
    """An autonomous loop at Plan in the tour project."""
    return AutonomousLoop(LoopState(run="loop-1", goal="protocol", max_recettes=2),
                          project=crewbook.Project(root), clock=ManualClock())


def tour(folder: Path) -> str:
    """The tour project, its change given two stories of two tasks."""
    root = crewbook.example_project(dest=folder / "tour")
    lines = ["# Tasks", ""]
    for s in (1, 2):
        lines += [f"## Story {s}", "", f"- [ ] {s}.1 First", f"- [ ] {s}.2 Second", ""]
    (root / "_codev" / "changes" / "add-csv-export" / "tasks.md").write_text("\n".join(lines))
    return str(root)


#: Ledger kind → (family name, a maker of a picklable loop factory in a folder).
SAMPLES: dict[str, tuple[str, Callable[[Path], Callable[[], Any]]]] = {
    "pipeline": ("pipeline", lambda _: PipelineFactory(PIPELINE, workspace=WORKSPACE)),
    "standard": ("delivery", lambda _: TaskFactory({"id": "csv", "mode": "standard",
                                                     "description": "Export as CSV"})),
    "coordinator": ("delivery", lambda _: TaskFactory({"id": "csv", "mode": "coordinator",
                                                        "description": "Export as CSV"})),
    "crew": ("crew", lambda folder: functools.partial(crew_loop, tour(folder))),
    "autonomous": ("autonomous", lambda folder: functools.partial(autonomous_loop,
                                                                  tour(folder))),
}


def test_every_family_kind_has_a_sample() -> None:
    kinds = {k for name in FAMILIES for k in family(name).kinds}
    assert kinds == set(SAMPLES)


@pytest.fixture(params=sorted(SAMPLES))
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def factory(kind: str, tmp_path: Path) -> Callable[[], Any]:
    return SAMPLES[kind][1](tmp_path)
