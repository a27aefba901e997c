"""`PipelineFactory`: a fresh pipeline loop per simulated run, with settings a sweep can
change (``max_retries`` for every stage, ``max_retries.<stage>``, ``invalid``). Picklable:
it carries a path and loads the pipeline once per process."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.loop import Loop
from ..errors import SimulationError, did_you_mean

if TYPE_CHECKING:
    from ..routing.router import Router
    from .pipeline import Pipeline

__all__ = ["PipelineFactory", "factory_for"]

#: Pipelines loaded in this process, by (path, overrides): each worker loads a file once.
_PIPELINES: dict[tuple[str, tuple[tuple[str, Any], ...]], Pipeline] = {}


class PipelineFactory:
    """Runs of one pipeline file (see the module docstring for the settings)."""

    SETTINGS = ("max_retries", "max_retries.<stage>", "invalid")

    def __init__(self, pipeline: Pipeline | str | os.PathLike[str], *,
                 workspace: str | os.PathLike[str] | None = None) -> None:
        if isinstance(pipeline, str | os.PathLike):
            self.path = str(Path(pipeline).resolve())
            self._pipeline: Pipeline | None = None
        else:
            self.path = str(Path(pipeline.path).resolve())
            self._pipeline = pipeline
        self.workspace = None if workspace is None else str(workspace)
        self._router: Router | None = None

    @property
    def pipeline(self) -> Pipeline:
        """The pipeline as loaded (once per process)."""
        if self._pipeline is None:
            self._pipeline = self._load(())
        return self._pipeline

    def _load(self, overrides: tuple[tuple[str, Any], ...]) -> Pipeline:
        key = (self.path, overrides)
        found = _PIPELINES.get(key)
        if found is not None:
            return found
        if not overrides:
            from .pipeline import load_pipeline

            base = self._pipeline or load_pipeline(self.path)
            _PIPELINES[key] = base
            return base
        from dataclasses import replace

        from .topology import Topology

        base = self.pipeline
        retries = dict(overrides)
        stages = []
        for stage in base.model.stages:
            if stage.id in retries:
                stage = stage.model_copy(update={"max_retries": retries[stage.id]})
            stages.append(stage)
        model = base.model.model_copy(update={"stages": tuple(stages)})
        made = replace(base, model=model, topology=Topology(model))
        _PIPELINES[key] = made
        return made

    def __call__(self, **settings: Any) -> Loop[Any, Any]:
        pipeline = self.pipeline
        stages = list(pipeline.topology.order)
        overrides: dict[str, Any] = {}
        invalid = "retry"
        for key, value in settings.items():
            if key == "invalid":
                invalid = str(value)
            elif key == "max_retries":
                overrides.update({s: _retries(key, value) for s in stages})
            elif key.startswith("max_retries."):
                stage = key.split(".", 1)[1]
                if stage not in stages:
                    raise SimulationError(f"setting {key!r}: pipeline {pipeline.id!r} has no "
                                          f"stage {stage!r}{did_you_mean(stage, stages)}")
                overrides[stage] = _retries(key, value)
            else:
                raise SimulationError(f"a pipeline has no setting {key!r}"
                                      f"{did_you_mean(key, ('max_retries', 'invalid'))}; "
                                      f"settings: {', '.join(self.SETTINGS)}")
        made = self._load(tuple(sorted(overrides.items()))) if overrides else pipeline
        if invalid not in ("retry", "refuse"):
            raise SimulationError(f"setting invalid={invalid!r}: 'retry' or 'refuse'")
        from .engine import PipelineLoop

        return PipelineLoop(made, self.workspace, invalid=invalid,  # type: ignore[arg-type]
                            router=self.router)

    @property
    def router(self) -> Router:
        """One router for every run (routes resolved once per process, not per run)."""
        if self._router is None:
            from ..routing.router import Router

            self._router = Router("pipeline")
        return self._router

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "workspace": self.workspace, "_pipeline": None,
                "_router": None}

    def __repr__(self) -> str:
        return f"<PipelineFactory {Path(self.path).name}>"


def _retries(key: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SimulationError(f"setting {key}={value!r}: a number of retries (0 or more), "
                              "or None")
    return value


def factory_for(source: Any) -> PipelineFactory | None:
    """A factory for `source` when it is a `Pipeline` or a ``.toml`` path, else None."""
    from .pipeline import Pipeline

    if isinstance(source, Pipeline):
        return PipelineFactory(source)
    if isinstance(source, str | os.PathLike) and Path(source).suffix == ".toml":
        return PipelineFactory(source)
    return None
