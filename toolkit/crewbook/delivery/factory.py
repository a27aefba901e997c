"""`TaskFactory`: a fresh delivery loop per simulated run of one task, with settings a
sweep can change (``mode``, ``review``, ``quick_fix``, ``focused_recheck``, every
`Limits` field and ``launches.<role>``). Picklable: it carries the task."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.loop import Loop
from ..errors import SimulationError, did_you_mean

if TYPE_CHECKING:
    from ..routing.router import Router
    from .catalogue import RoleCatalogue
    from .model import Task

__all__ = ["TaskFactory", "factory_for"]


class TaskFactory:
    """Runs of one delivery task (see the module docstring for the settings)."""

    TASK_FIELDS = ("mode", "review", "quick_fix", "focused_recheck", "kind")

    def __init__(self, task: Task | str | os.PathLike[str] | Mapping[str, Any]) -> None:
        from . import Task, load_task

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
        from . import Limits

        return [*self.TASK_FIELDS, *Limits.model_fields, "launches.<role>"]

    def __call__(self, **settings: Any) -> Loop[Any, Any]:
        from pydantic import ValidationError

        from . import Limits, ManualClock, Task, start_task

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
            from . import load_catalogue

            self._catalogue = load_catalogue()
        return self._catalogue

    def __getstate__(self) -> dict[str, Any]:
        return {"task": self.task, "_router": None, "_catalogue": None}

    def __repr__(self) -> str:
        return f"<TaskFactory {self.task.id} ({self.task.mode})>"


def factory_for(source: Any) -> TaskFactory | None:
    """A factory for `source` when it is a `Task` or a ``.yaml`` task path, else None."""
    from . import Task

    if isinstance(source, Task):
        return TaskFactory(source)
    if isinstance(source, str | os.PathLike) and Path(source).suffix in (".yaml", ".yml"):
        return TaskFactory(source)
    return None
