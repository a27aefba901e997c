"""A delivery run kept in a folder between processes, for ``crewbook step delivery``.

The folder holds ``run.json``: the task (as its file gives it) and every event the run
logged. Loading replays those events' reports on a fresh loop (the family codec's
``from_events``, on the task's own clock, so the replayed events are the same ones), so
the state is never written twice and always agrees with the events.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.atomic import write_atomic
from ..core.clock import ManualClock
from ..core.family import StoreBase
from ..core.loop import Loop
from ..core.sinks import MemoryLedger
from ..errors import InvalidInputError, UsageError

__all__ = ["RUN_FILE", "DeliveryStore"]

RUN_FILE = "run.json"
FORMAT = "crewbook-delivery-run/1"


class DeliveryStore(StoreBase[Any, Any]):
    """Load and save a delivery run in a folder (see the module docstring)."""

    def load(self, folder: Path, source: object = None,
             settings: Mapping[str, str] | None = None) -> Loop[Any, Any]:
        """The run in `folder`; a new one of the task `source` (a ``.yaml`` path or a
        `Task`) when the folder holds none yet."""
        from .codec import DeliveryCodec
        from .model import Task, load_task
        from .standard import start_task

        path = Path(folder) / RUN_FILE
        events: list[dict[str, Any]] = []
        if path.is_file():
            data = json.loads(path.read_text("utf-8"))
            if not isinstance(data, dict) or data.get("format") != FORMAT:
                raise InvalidInputError(f"{path} is not a crewbook delivery run ({FORMAT})")
            task = Task.model_validate(data["task"])
            events = list(data.get("events") or ())
        elif isinstance(source, Task):
            task = source
        elif source is not None:
            task = load_task(Path(str(source)))
        else:
            raise UsageError(f"{folder} holds no delivery run yet: name the task file "
                             "(crewbook step delivery TASK.yaml --run DIR)")
        loop = start_task(task, clock=ManualClock(), ledger=MemoryLedger(task.id))
        reports, _ = DeliveryCodec().from_events(events, loop)
        for report in reports:
            loop.report(report)
        return loop

    def sample_source(self, folder: Path, kind: str) -> object:
        """A small task in `kind`'s mode (standard or coordinator)."""
        from .model import Task

        return Task.model_validate({"id": "csv", "mode": kind, "description": "Export as CSV"})

    def save(self, loop: Loop[Any, Any], folder: Path) -> None:
        """Write the task and every event of `loop`'s run to ``run.json``."""
        task = getattr(loop, "task", None)
        ledger = loop.ledger
        if task is None or not isinstance(ledger, MemoryLedger):
            raise UsageError("only a delivery loop started by DeliveryStore.load can be saved")
        data = {"format": FORMAT, "task": task.model_dump(mode="json"),
                "events": ledger.events}
        write_atomic(Path(folder) / RUN_FILE,
                     json.dumps(data, indent=1, ensure_ascii=False, default=str) + "\n")
