"""A pipeline run kept in a folder between processes, for ``crewbook step PIPELINE.toml
--run DIR`` (the pipeline family's store).

DIR keeps the run: ``state.json`` (where the run is, its artifacts, the pipeline's hash)
and ``ledger.jsonl`` (every accepted act; `crewbook.Ledger` format). A pipeline file that
changed since the run started is refused (``pipeline_changed``). The settings
``workspace`` (checked by ``ground_references``; default: the one the run started with,
else the current folder), ``kinds`` (an artifact-kinds config) and ``invalid`` (``retry``
or ``refuse``) are remembered from the first accepted report.
"""

from __future__ import annotations

import json
import os
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.atomic import write_atomic
from ..core.family import StoreBase
from ..core.loop import Act, Loop
from ..errors import InvalidInputError, LoopRefused, UsageError
from .engine import InvalidPolicy, PipelineLoop, PipelineReport, PipelineState

if TYPE_CHECKING:
    from ..ledger import Ledger

__all__ = ["LEDGER_FILE", "STATE_FILE", "STATE_FORMAT", "PipelineStore", "render_contract"]

STATE_FILE = "state.json"
LEDGER_FILE = "ledger.jsonl"
STATE_FORMAT = "crewbook-pipeline-run/1"


class _LazyLedger:
    """Opens the run's ledger only when an accepted act is appended (refusals touch nothing)."""

    def __init__(self, path: Path, run: str) -> None:
        self.path, self.run = path, run
        self.opened: Ledger | None = None

    def append(self, event: Any) -> Any:
        if self.opened is None:
            from ..ledger import Ledger

            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.opened = Ledger(self.path, run=self.run, loop=PipelineLoop.kind)
        return self.opened.append(event)

    def close(self) -> None:
        if self.opened is not None:
            self.opened.close()


@dataclass(frozen=True)
class _Run:
    """What `save` writes besides the loop's state: how the run was loaded."""

    ledger: _LazyLedger
    path: str
    kinds: str | None
    workspace: str


class PipelineStore(StoreBase[PipelineState, PipelineReport]):
    """Load and save a pipeline run in a folder (see the module docstring)."""

    settings: tuple[str, ...] = ("workspace", "kinds", "invalid")

    def __init__(self) -> None:
        self._runs: weakref.WeakKeyDictionary[Loop[Any, Any], _Run] = (
            weakref.WeakKeyDictionary())

    def load(self, folder: Path, source: object = None,
             settings: Mapping[str, str] | None = None) -> Loop[Any, Any]:
        """The run in `folder` of the pipeline file `source` (default: the file the run
        in `folder` started with); `LoopRefused` (codes
        ``usage``, ``bad_run``, ``invalid_pipeline``, ``pipeline_changed``) when it
        cannot be."""
        from .pipeline import load_pipeline

        given = dict(settings or {})
        try:
            saved = _read_state(folder)
        except (ValueError, OSError) as exc:
            raise LoopRefused(f"cannot read the run in {folder}: {exc}",
                              code="bad_run") from None
        source = source or saved.get("pipeline", {}).get("path")  # the run's own file
        if source is None:
            raise LoopRefused("name the pipeline file: crewbook step PIPELINE.toml --run DIR",
                              code="usage")
        kinds = given.get("kinds") or saved.get("kinds")
        try:
            pipeline = load_pipeline(str(source), kinds=kinds)
        except InvalidInputError as exc:
            raise LoopRefused(str(exc), code="invalid_pipeline") from None
        if saved and saved.get("pipeline", {}).get("sha256") != pipeline.sha256:
            raise LoopRefused(f"{source} changed since the run in {folder} started; start a "
                              "new run folder (or restore the file)", code="pipeline_changed")
        workspace = given.get("workspace") or saved.get("workspace") or os.getcwd()
        invalid: InvalidPolicy = ("refuse" if (given.get("invalid") or saved.get("invalid"))
                                  == "refuse" else "retry")
        run = saved.get("run") or _new_run_id()
        ledger = _LazyLedger(folder / LEDGER_FILE, run)
        state = PipelineState.from_dict(saved["state"]) if saved else None
        loop = pipeline.loop(Path(workspace), ledger=ledger, run=run, invalid=invalid,
                             state=state, acts=int(saved.get("acts", 0)))
        self._runs[loop] = _Run(ledger, str(Path(str(source)).resolve()),
                                str(pipeline.kinds_config) if given.get("kinds")
                                else saved.get("kinds"), str(Path(workspace).resolve()))
        return loop

    def save(self, loop: Loop[Any, Any], folder: Path) -> None:
        """Write ``state.json`` (the ledger has the act already) and close the ledger."""
        run = self._runs.get(loop)
        if run is None or not isinstance(loop, PipelineLoop):
            raise UsageError("only a pipeline loop PipelineStore.load gave can be saved")
        run.ledger.close()
        pipeline = loop.pipeline
        data = {
            "format": STATE_FORMAT, "run": loop.run, "acts": loop.acts,
            "pipeline": {"id": pipeline.id, "path": run.path, "sha256": pipeline.sha256},
            "kinds": run.kinds, "workspace": run.workspace, "invalid": loop.invalid,
            "state": loop.view.to_dict(),
        }
        write_atomic(folder / STATE_FILE, json.dumps(data, indent=2, ensure_ascii=False) + "\n")

    def sample_source(self, folder: Path, kind: str) -> object:
        """The seed's role pipeline, as the tour project ships it."""
        from ..examples import example_project

        return (example_project("tour", folder / "sample-tour") / "pipeline"
                / "role_pipeline.toml")

    def shown(self, loop: Loop[Any, Any], accepted: bool | None) -> tuple[dict[str, Any], str]:
        """The contract with the artifacts it receives; the text `render_contract` gives."""
        if not isinstance(loop, PipelineLoop):
            return super().shown(loop, accepted)
        act = loop.contract()
        inputs = {n: loop.artifact(n) for n in act.receives if n in loop.artifacts}
        return ({"accepted": accepted, "run": loop.run, "contract": act.to_dict(),
                 "inputs": inputs, "status": loop.status().to_dict()},
                render_contract(act, loop.pipeline.id, accepted))


def _new_run_id() -> str:
    from ..ledger.writer import new_run_id

    return new_run_id()


def _read_state(folder: Path) -> dict[str, Any]:
    path = folder / STATE_FILE
    if not path.is_file():
        return {}
    data = json.loads(path.read_text("utf-8"))
    if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
        raise InvalidInputError(f"{path} is not a crewbook pipeline run state ({STATE_FORMAT})")
    return data


def render_contract(act: Act, pipeline: str, accepted: bool | None = None) -> str:
    """A contract as ``crewbook step PIPELINE.toml`` prints it."""
    lines = [f"accepted; next is act {act.act}"] if accepted else []
    if act.finished:
        lines.append(f"pipeline {pipeline} finished: {act.finished_reason}")
        if act.details.get("reason"):
            lines.append(f"reason: {act.details['reason']}")
    else:
        details = act.details
        lines += [
            f"pipeline {pipeline} · act {act.act} · stage {act.stage} (attempt {act.attempt})",
            "receives: " + (", ".join(f"{n} v{details.get('inputs', {}).get(n, '?')}"
                                      for n in act.receives) or "nothing"),
            f"produces: {act.expects or 'nothing'}",
            f"prompt: {act.prompt_path}",
            "budget: " + ", ".join(f"{k} {v}" for k, v in act.budget.items() if v is not None),
            "moves: " + (", ".join(act.moves) or "none"),
        ]
        if details.get("writes") is not None:
            lines.append("writes: " + ", ".join(details["writes"]))
        if act.feedback:
            lines.append("feedback:")
            lines += [f"  - {f}" for f in act.feedback]
    if act.journal:
        lines.append("journal:")
        lines += [f"  - {j.kind}" + (f" ({j.by})" if j.by else "") + f": {j.text}"
                  for j in act.journal]
    return "\n".join(lines)
