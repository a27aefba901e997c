"""The pipeline family (SPEC B) described once for the front ends: ``FAMILY``.

Kinds: ``pipeline``. A source is a pipeline file (``.toml``) or a `Pipeline`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.family import LoopFamily
from .codec import PipelineCodec
from .engine import PipelineReport, PipelineState
from .factory import factory_for
from .form import PipelineForm
from .players import PipelinePlayers
from .state import StageReport
from .store import PipelineStore


class _Engine:
    """Loop factories for pipeline files."""

    sources = "a pipeline (.toml) or a Pipeline"

    def factory_for(self, source: Any) -> Any:
        """A `PipelineFactory` for a `Pipeline` or a ``.toml`` path, else None."""
        return factory_for(source)


def _rules() -> tuple[Any, ...]:
    from .checks import PIPELINE_RULES

    return PIPELINE_RULES


def _sample(folder: Path, kind: str = "pipeline") -> Any:
    """Runs of the seed's role pipeline, as the tour project ships it."""
    from ..examples import example_project
    from .factory import PipelineFactory

    root = example_project("tour", folder / "tour") / "pipeline"
    return PipelineFactory(root / "role_pipeline.toml", workspace=root / "workspace")


def _duration_of(report: PipelineReport) -> int | None:
    """A stage report's ``duration_ms`` (a steer takes no time)."""
    return report.duration_ms if isinstance(report, StageReport) else None


def _formats() -> Any:
    from .model import format_models

    return format_models()


FAMILY: LoopFamily[PipelineState, PipelineReport] = LoopFamily(
    name="pipeline", kinds=("pipeline",),
    summary="a role pipeline: stages hand artifacts on along transitions (SPEC B)",
    engine=_Engine(), codec=PipelineCodec(), players=PipelinePlayers(), form=PipelineForm(),
    rules=_rules,
    store=PipelineStore(),
    sample=_sample, formats=_formats, duration_of=_duration_of,
)
