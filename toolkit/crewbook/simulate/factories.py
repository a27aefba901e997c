"""Loop factories: a fresh loop per simulated run, with settings a sweep can change.

A loop factory is any callable ``factory(**settings) -> Loop``. To run in worker
processes it must be picklable: a module-level function, a `functools.partial` of
one, or a family's own factory (`crewbook.pipeline.factory.PipelineFactory`,
`crewbook.delivery.factory.TaskFactory`), which carry only a path or a task and load
what they need once per process. `as_factory` asks each family (through
`crewbook.families`) whether it understands a source.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..core.family import Declined, resolve
from ..core.loop import Loop
from ..errors import SimulationError

__all__ = ["LoopFactory", "as_factory"]

LoopFactory = Callable[..., Loop[Any, Any]]

#: The families' factories, still importable from here (dotted paths, loaded on use).
_MOVED = {"PipelineFactory": "crewbook.pipeline.factory:PipelineFactory",
          "TaskFactory": "crewbook.delivery.factory:TaskFactory"}


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        return resolve(_MOVED[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def as_factory(source: Any) -> LoopFactory:
    """A loop factory from a factory, or a source a family's engine understands (a
    `Pipeline` or a ``.toml`` path, a `Task` or a ``.yaml`` task...), asked through the
    family registry."""
    from ..families import families

    engines = [f.engine for f in families() if not isinstance(f.engine, Declined)]
    if not callable(source) or isinstance(source, type):
        for engine in engines:
            made = engine.factory_for(source)
            if made is not None:
                return made
    sources = "; ".join(e.sources for e in engines)
    if isinstance(source, str | os.PathLike):
        raise SimulationError(f"{source}: simulate one of: {sources}")
    if callable(source):
        return source  # type: ignore[no-any-return]
    raise SimulationError(f"a loop factory is a callable returning a Loop, or one of: "
                          f"{sources}; not {type(source).__name__}")
