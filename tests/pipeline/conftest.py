"""Fixtures of the pipeline tests: the cleaned seed pipeline, its workspace, good reports."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from crewbook.pipeline import Pipeline, PipelineLoop, load_pipeline

PIPELINES = Path(__file__).parent.parent / "data" / "pipelines"
SEED = PIPELINES / "role_pipeline.toml"
WORKSPACE = PIPELINES / "workspace"
BROKEN = PIPELINES / "broken"

ANALYSIS = {
    "summary": "Sessions expire after 30 minutes of inactivity.",
    "acceptance_criteria": ["a session idle for 30 minutes is gone",
                            "an active session is kept"],
    "relevant_files": ["core/sessions/store.py", "testing/sessions/check_store.py"],
}
DESIGN = {"approach": "Store the last access time and evict on load.",
          "components": [{"name": "store", "responsibility": "load and evict sessions",
                          "files": ["core/sessions/store.py"]}]}
PLAN = {"steps": [{"id": 1, "description": "record last access", "verify": "unit test"},
                  {"id": 2, "description": "evict idle sessions", "verify": "unit test"}]}
CHANGES = {"verdict": "changes_requested",
           "findings": [{"requirement": "an active session is kept", "severity": "major",
                         "detail": "every load evicts"}]}
APPROVED = {"verdict": "approved", "findings": []}

#: The reports that take the seed from its start to the implementer.
TO_IMPLEMENTER: list[dict[str, Any]] = [
    {"stage": "analyst", "artifacts": {"analysis": ANALYSIS}},
    {"stage": "architect", "artifacts": {"design": DESIGN}},
    {"stage": "planner", "artifacts": {"impl_plan": PLAN}},
]
IMPLEMENT = {"stage": "implementer", "writes": ["core/sessions/store.py"]}
REJECT = {"stage": "reviewer", "artifacts": {"review_report": CHANGES}}
APPROVE = {"stage": "reviewer", "artifacts": {"review_report": APPROVED}}


def fixed_clock() -> Callable[[], datetime]:
    """A clock that starts at 2025-03-01 09:00 UTC and moves one minute per call."""
    ticks: Iterator[int] = iter(range(10**9))
    start = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
    return lambda: start + timedelta(minutes=next(ticks))


@pytest.fixture(scope="session")
def seed() -> Pipeline:
    """The seed's pipeline, loaded once."""
    return load_pipeline(SEED)


@pytest.fixture
def loop(seed: Pipeline) -> PipelineLoop:
    """A fresh run of the seed with the test workspace and a fixed clock."""
    return seed.loop(WORKSPACE, clock=fixed_clock(), run="r-test")


def tree_digest(folder: Path) -> str:
    """A hash of every file's path and bytes under `folder` (for byte-identical checks)."""
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()
