"""Loop factories: a fresh loop per simulated run, with settings a sweep can change.

A loop factory is any callable ``factory(**settings) -> Loop``. To run in worker
processes it must be picklable: a module-level function, a `functools.partial` of
one, or the two factories here, which carry only a path or a task and load what they
need once per process.

- `PipelineFactory(path)`: settings ``max_retries`` (every stage), ``max_retries.<stage>``
  (one stage; ``None`` is unlimited for loops), ``invalid`` (``retry``/``refuse``).
- `TaskFactory(task)`: settings ``mode`` (``standard``/``coordinator``), ``review``
  (``always``/``risk-based``), ``quick_fix``, ``focused_recheck``, every `Limits` field
  (``steps``, ``plan_revisions``, ``duration_minutes``, ``wait_minutes``,
  ``agent_steps``, ``default_launches``…) and ``launches.<role>``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import SimulationError, did_you_mean
from ..loop import Loop

if TYPE_CHECKING:
    from ..delivery import RoleCatalogue, Task
    from ..pipeline import Pipeline
    from ..routing.router import Router

LoopFactory = Callable[..., Loop[Any, Any]]
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
            from ..pipeline import load_pipeline

            base = self._pipeline or load_pipeline(self.path)
            _PIPELINES[key] = base
            return base
        from dataclasses import replace

        from ..pipeline.topology import Topology

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
        from ..pipeline import PipelineLoop

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


class TaskFactory:
    """Runs of one delivery task (see the module docstring for the settings)."""

    TASK_FIELDS = ("mode", "review", "quick_fix", "focused_recheck", "kind")

    def __init__(self, task: Task | str | os.PathLike[str] | Mapping[str, Any]) -> None:
        from ..delivery import Task, load_task

        if isinstance(task, Task):
            self.task = task
        elif isinstance(task, Mapping):
            self.task = Task.model_validate(dict(task))
        elif isinstance(task, os.PathLike) or (isinstance(task, str) and
                                               task.endswith((".yaml", ".yml"))):
            self.task = load_task(Path(task))
        else:
            self.task = Task(description=str(task))
        self._router: Router | None = None
        self._catalogue: RoleCatalogue | None = None

    def settings(self) -> list[str]:
        """Every setting name (``launches.<role>`` stands for each role)."""
        from ..delivery import Limits

        return [*self.TASK_FIELDS, *Limits.model_fields, "launches.<role>"]

    def __call__(self, **settings: Any) -> Loop[Any, Any]:
        from pydantic import ValidationError

        from ..delivery import Limits, ManualClock, Task, start_task

        data = self.task.model_dump()
        limits = dict(data["limits"])
        launches = dict(limits.get("launches") or {})
        for key, value in settings.items():
            if key in self.TASK_FIELDS:
                data[key] = value
            elif key in Limits.model_fields:
                limits[key] = value
            elif key.startswith("launches."):
                launches[key.split(".", 1)[1]] = value
            else:
                raise SimulationError(f"a delivery task has no setting {key!r}"
                                      f"{did_you_mean(key, self.settings())}; settings: "
                                      f"{', '.join(self.settings())}")
        limits["launches"] = launches
        data["limits"] = limits
        try:
            task = Task.model_validate(data) if settings else self.task
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"])
            raise SimulationError(f"settings {settings!r} make an invalid task: {where}: "
                                  f"{first['msg']}") from None
        return start_task(task, clock=ManualClock(), router=self.router,
                          catalogue=self.catalogue)

    @property
    def router(self) -> Router:
        """One router for every run (routes resolved once per process, not per run)."""
        if self._router is None:
            from ..routing.router import Router

            self._router = Router("delivery")
        return self._router

    @property
    def catalogue(self) -> RoleCatalogue:
        """The role catalogue, loaded once per process."""
        if self._catalogue is None:
            from ..delivery import load_catalogue

            self._catalogue = load_catalogue()
        return self._catalogue

    def __getstate__(self) -> dict[str, Any]:
        return {"task": self.task, "_router": None, "_catalogue": None}

    def __repr__(self) -> str:
        return f"<TaskFactory {self.task.id} ({self.task.mode})>"


def as_factory(source: Any) -> LoopFactory:
    """A loop factory from a factory, a `Pipeline`, a `Task`, or a file path (``.toml``: a
    pipeline; ``.yaml``: a task)."""
    from ..delivery import Task
    from ..pipeline import Pipeline

    if isinstance(source, Pipeline):
        return PipelineFactory(source)
    if isinstance(source, Task):
        return TaskFactory(source)
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if path.suffix == ".toml":
            return PipelineFactory(path)
        if path.suffix in (".yaml", ".yml"):
            return TaskFactory(path)
        raise SimulationError(f"{path}: simulate a pipeline (.toml) or a task (.yaml)")
    if callable(source):
        return source  # type: ignore[no-any-return]
    raise SimulationError(f"a loop factory is a callable returning a Loop, a Pipeline, a Task "
                          f"or a file path, not {type(source).__name__}")
