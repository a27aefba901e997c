"""Role pipelines (SPEC B): load, check, draw and step a pipeline file cell by cell.

``load_pipeline(path)`` reads a "correx" pipeline TOML (stages, transitions), its
artifact kinds (``config.toml`` with JSON Schemas) and checks everything in one pass,
each problem at file:line with a code; ``pipeline.loop(workspace=...)`` is a
`PipelineLoop` on the Loop protocol of `crewbook.core.loop`: ``contract()``,
``report(...)``, ``status()``, ``snapshot()``/``restore()``. docs/pipeline.md has the
whole story.

Importing this package loads pydantic models only: jsonschema, pandas and graphviz
are imported by the functions that need them.
"""

from ..core.loop import Act, Cap, JournalEntry, MemoryLedger, Snapshot, Status, Verdict
from .engine import PipelineLoop
from .kinds import ArtifactKind
from .model import DONE, ESCALATED, PipelineFile, StageSpec, TransitionSpec
from .pipeline import Pipeline, inspect_pipeline, load_pipeline, validate_pipeline
from .plan import DEFAULT_MAX_RETRIES
from .state import PipelineState, StageReport, Steer, parse_report

__all__ = [
    "DEFAULT_MAX_RETRIES",
    "DONE",
    "ESCALATED",
    "Act",
    "ArtifactKind",
    "Cap",
    "JournalEntry",
    "MemoryLedger",
    "Pipeline",
    "PipelineFile",
    "PipelineLoop",
    "PipelineState",
    "Snapshot",
    "StageReport",
    "StageSpec",
    "Status",
    "Steer",
    "TransitionSpec",
    "Verdict",
    "inspect_pipeline",
    "load_pipeline",
    "parse_report",
    "validate_pipeline",
]
