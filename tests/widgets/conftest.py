"""Loops and data the widget tests step through."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from crewbook.delivery import CoordinatorLoop, ManualClock, StandardLoop, Task
from crewbook.pipeline import load_pipeline

DATA = Path(__file__).parent.parent / "data" / "pipelines"


@pytest.fixture
def pipeline_loop() -> Any:
    return load_pipeline(DATA / "role_pipeline.toml").loop(workspace=DATA / "workspace")


@pytest.fixture
def coordinator_loop() -> CoordinatorLoop:
    return CoordinatorLoop(Task(id="csv", description="CSV export"),
                           clock=ManualClock("2025-03-01T09:00:00+00:00"))


@pytest.fixture
def standard_loop() -> StandardLoop:
    return StandardLoop(Task(id="csv", description="CSV export"),
                        clock=ManualClock("2025-03-01T09:00:00+00:00"))


@pytest.fixture(params=["pipeline", "standard", "coordinator"])
def any_loop(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue(f"{request.param}_loop")
