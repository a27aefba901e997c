"""Fixtures of the simulation tests: loop factories, policies and a Dask-free setup."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from crewbook.simulate import PipelineFactory, RandomPolicy, TaskFactory

PIPELINE = Path(__file__).parent.parent / "data" / "pipelines" / "role_pipeline.toml"

#: A random policy with every kind of behaviour: send-backs, questions, long waits.
DELIVERY_POLICY: dict[str, Any] = {
    "roles": {
        "qa": {"fail": 0.3},
        "reviewer": {"fail": 0.2},
        "developer": {"question": 0.2,
                      "duration_ms": {"dist": "exponential", "mean": 1_800_000}},
    },
    "coordinator": {"finalise_early": 0.1},
}
PIPELINE_POLICY: dict[str, Any] = {
    "roles": {
        "analyst": {"fail": 0.2},
        "reviewer": {"verdicts": {"review_report.verdict": {"approved": 0.6,
                                                            "changes_requested": 0.4}}},
    },
}


@pytest.fixture
def coordinator() -> TaskFactory:
    return TaskFactory({"id": "csv-export", "description": "Export the report as CSV"})


@pytest.fixture
def standard() -> TaskFactory:
    return TaskFactory({"id": "csv-export", "description": "Export the report as CSV",
                        "mode": "standard"})


@pytest.fixture
def pipeline() -> PipelineFactory:
    return PipelineFactory(PIPELINE)


@pytest.fixture
def delivery_policy() -> RandomPolicy:
    return RandomPolicy(DELIVERY_POLICY)


@pytest.fixture
def pipeline_policy() -> RandomPolicy:
    return RandomPolicy(PIPELINE_POLICY)
