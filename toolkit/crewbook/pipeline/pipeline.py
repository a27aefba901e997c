"""`load_pipeline`: a pipeline file (SPEC B) checked in one pass, as a `Pipeline` to look
at, draw and run; `validate_pipeline`: every problem, errors and warnings, never raising."""

from __future__ import annotations

import hashlib
import html
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.loop import EventSink, utc_now
from ..draw.display import Drawable
from ..errors import (
    PipelineError,
    Problem,
    StageNotFoundError,
    did_you_mean,
    plural,
    problems_html,
)
from ..models import parse_model
from ..report import ValidationReport
from ..sources import MAX_TOML_BYTES, parse_toml, read_text
from .checks import check_pipeline
from .kinds import ArtifactKind, find_kinds_config, load_kinds
from .lint import unreceived
from .model import PipelineFile, StageSpec, TransitionSpec
from .topology import Topology

if TYPE_CHECKING:
    from ..draw.model import GraphModel
    from .engine import InvalidPolicy, PipelineLoop, PipelineState
    from .frames import PipelineFrames
    from .plan import StagePlan


@dataclass(frozen=True, eq=False)
class Pipeline(Drawable):
    """A pipeline file that passed every check (warnings are kept in `warnings`)."""

    model: PipelineFile
    path: Path
    kinds: dict[str, ArtifactKind]
    kinds_config: Path | None
    topology: Topology
    warnings: tuple[Problem, ...] = ()
    sha256: str = ""
    display_path: str = field(default="", compare=False)

    # ----------------------------------------------------------------- views
    @property
    def id(self) -> str:
        """The pipeline's id."""
        return self.model.id

    @property
    def start(self) -> str:
        """The stage a run starts in."""
        return self.model.start

    @property
    def stages(self) -> tuple[StageSpec, ...]:
        """The stages in file order."""
        return self.model.stages

    @property
    def transitions(self) -> tuple[TransitionSpec, ...]:
        """The transitions in file order (the order a run evaluates them)."""
        return self.model.transitions

    @property
    def folder(self) -> Path:
        """The folder prompts are relative to."""
        return self.path.parent

    def stage(self, stage_id: str) -> StageSpec:
        """One stage, or `StageNotFoundError` (a KeyError) naming the nearest."""
        try:
            return self.topology.stages[stage_id]
        except KeyError:
            raise StageNotFoundError(f"pipeline {self.id!r} has no stage {stage_id!r}"
                           + did_you_mean(stage_id, self.topology.order)) from None

    @cached_property
    def plans(self) -> dict[str, StagePlan]:
        """Per-stage facts the engine uses at every step, worked out once."""
        from .plan import stage_plans

        return stage_plans(self)

    def unreceived(self) -> dict[str, list[str]]:
        """Stage → artifacts produced upstream that it does not `need` (the B5 lint)."""
        return unreceived(self.topology)

    def frames(self) -> PipelineFrames:
        """Stages, transitions and artifact kinds as DataFrames (`crewbook.pipeline.frames`)."""
        from .frames import pipeline_frames

        return pipeline_frames(self)

    # --------------------------------------------------------------- running
    def loop(
        self, workspace: str | Path | None = None, *, ledger: EventSink | None = None,
        run: str | None = None, clock: Callable[[], datetime] = utc_now,
        invalid: InvalidPolicy = "retry", state: PipelineState | None = None, acts: int = 0,
    ) -> PipelineLoop:
        """A run of this pipeline (`PipelineLoop`), at its start unless `state` is given."""
        from .engine import PipelineLoop

        return PipelineLoop(self, workspace, ledger=ledger, run=run, clock=clock,
                            invalid=invalid, state=state, acts=acts)

    # --------------------------------------------------------------- drawing
    def graph_model(self, run: PipelineLoop | None = None) -> GraphModel:
        """The state diagram (with `run`: where that run stands)."""
        from .graph import state_graph

        return state_graph(self, run)

    def flow_model(self, run: PipelineLoop | None = None) -> GraphModel:
        """The artifact flow: which stage produces and needs which artifact."""
        from .graph import flow_graph

        return flow_graph(self, run)

    # --------------------------------------------------------------- display
    def __repr__(self) -> str:
        chain = " → ".join(self.topology.order)
        warn = f", {len(self.warnings)} warnings" if self.warnings else ""
        return (f"<Pipeline {self.id}: {len(self.stages)} stages, {len(self.transitions)} "
                f"transitions; start {self.start}: {chain}{warn}>")

    def _repr_html_(self) -> str:
        rows = "".join(
            "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in (
                s.id, ", ".join(s.needs), ", ".join(f"{p.name} ({p.kind})" for p in s.produces),
                s.max_retries if s.max_retries is not None else "", s.token_budget or ""))
            + "</tr>" for s in self.stages)
        head = "".join(f"<th>{h}</th>" for h in ("stage", "needs", "produces", "max_retries",
                                                  "token_budget"))
        warn = (f"<p class='crewbook-validation'><b>validation</b>: "
                f"{plural(len(self.warnings), 'warning')} (the pipeline loads and runs; "
                f"fix them or know why not)</p>{problems_html(self.warnings)}"
                if self.warnings else "<p class='crewbook-validation'><b>validation</b>: "
                "no problems</p>")
        return (f"<div class='crewbook-pipeline'><b>pipeline {html.escape(self.id)}</b> "
                f"(start <code>{html.escape(self.start)}</code>)<table><tr>{head}</tr>{rows}"
                f"</table>{warn}</div>")


def inspect_pipeline(
    path: str | Path, kinds: str | Path | None = None,
) -> tuple[Pipeline | None, list[Problem]]:
    """(the pipeline or None when it has errors, every problem found, sorted by place)."""
    path = Path(path)
    shown = str(path)
    try:
        text = read_text(path, error_cls=PipelineError, max_bytes=MAX_TOML_BYTES,
                         display_path=shown)
        doc = parse_toml(text, path, error_cls=PipelineError, display_path=shown)
    except PipelineError as exc:
        return None, list(exc.problems)
    model, problems = parse_model(PipelineFile, doc)
    if not isinstance(model, PipelineFile):
        return None, _sorted(problems)
    config = Path(kinds) if kinds is not None else find_kinds_config(path)
    if kinds is not None and config is not None and not config.is_file():
        return None, [Problem("file_not_found", "no such kinds config", path=str(config))]
    used = {p.kind for s in model.stages for p in s.produces}
    shown_config = None
    if config is not None:
        shown_config = str(config) if kinds is not None else os.path.normpath(
            os.path.join(path.parent, os.path.relpath(config, path.resolve().parent)))
    found = load_kinds(config, used, display=shown_config)
    topology, checked = check_pipeline(model, doc, found.kinds, found.config, path.parent, text,
                                       kinds_known=found.complete)
    problems = _sorted([*found.problems, *checked])
    if any(p.severity == "error" for p in problems):
        return None, problems
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Pipeline(model, path, found.kinds, found.config, topology, tuple(problems), digest,
                    shown), problems


def _sorted(problems: list[Problem]) -> list[Problem]:
    return sorted(problems, key=lambda p: (p.path or "", p.line or 0, p.column or 0, p.code))


def load_pipeline(path: str | Path, *, kinds: str | Path | None = None) -> Pipeline:
    """Load and check a pipeline file; raise one `PipelineError` listing every problem.

    `kinds` is the config holding the ``[[artifacts]]`` kinds (default: the
    ``config.toml`` next to the pipeline, else in its parent folder). Warnings do not
    stop loading: they are in ``pipeline.warnings``.
    """
    pipeline, problems = inspect_pipeline(path, kinds)
    if pipeline is None:
        raise PipelineError(f"{path} is not a valid pipeline", problems)
    return pipeline


def validate_pipeline(path: Path | str, kinds: str | Path | None = None) -> ValidationReport:
    """Every problem of a pipeline file and of the kinds it uses; never raises for bad input."""
    return ValidationReport(tuple(inspect_pipeline(Path(path), kinds)[1]), subject=str(path))
