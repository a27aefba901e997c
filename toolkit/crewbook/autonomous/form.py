"""The autonomous family's form spec for the Stepper: one `LoopStep` per phase (summary
and details); at the recette the test run is measured when the step is built, as
`AutonomousLoop.step()` does, unless the draft carries one in ``hidden``."""

from __future__ import annotations

from typing import Any

from ..core.bar import run_command
from ..core.form import Draft, FormBase, as_mapping
from ..core.loop import Act, Snapshot
from ..errors import InvalidInputError
from .engine import LoopStep

__all__ = ["AutonomousForm"]


class AutonomousForm(FormBase):
    """The autonomous loop: one `LoopStep` per phase (summary and details; the recette's
    test run is measured by `crewbook.loop_step`, or passed through ``hidden``)."""

    def verdicts(self, loop: Any, act: Act) -> tuple[str, ...]:
        """None: the phases decide, not a verdict."""
        return ()

    def to_draft(self, loop: Any, act: Act, report: Any) -> Draft:
        """A `LoopStep` or its JSON data as a draft."""
        data = as_mapping(report)
        hidden = {"test": data["test"]} if data.get("test") is not None else {}
        return Draft(move="step", role=act.role, moves=act.moves,
                     fields={"summary": data.get("summary") or "",
                             "details": dict(data.get("details") or {})}, hidden=hidden)

    def build(self, loop: Any, act: Act, draft: Draft) -> Any:
        """The `LoopStep`."""
        details = draft.fields.get("details") or {}
        if not isinstance(details, dict):
            raise InvalidInputError("field 'details' is a JSON object")
        test = draft.hidden.get("test")
        if test is None and act.stage == "recette":  # measured now, as loop.step() does
            command, cwd = loop.test_command(None)
            test = run_command(command, root=loop.project.root, cwd=cwd, name="test",
                               timeout=loop.view.test_timeout)
        return LoopStep(test=test,
                        summary=str(draft.fields.get("summary") or ""), details=details)

    def propose(self, loop: Any, act: Act) -> Draft:
        """A step with a summary of the phase."""
        return Draft(move="step", role=act.role, moves=act.moves,
                     fields={"summary": f"{act.stage or 'phase'} done", "details": {}})

    def apply(self, loop: Any, act: Act, report: Any) -> Act:
        """Apply `report` as ``crewbook loop step`` does: under the state file's lock,
        refused as stale when another caller moved the loop since it was opened; the
        act and the new state are committed together, and the next phase's prompt is
        written to ``act.prompt_path``."""
        with loop.turn():
            following: Act = loop.report(report)
        _write_prompt(loop, following)
        return following

    def restore(self, loop: Any, snapshot: Snapshot[Any]) -> Act:
        """Rewind to `snapshot` and save the restored state in the state file (under its
        lock), so ``crewbook loop status`` and the next ``loop step`` see the rewind."""
        act: Act = loop.restore_kept(snapshot)
        _write_prompt(loop, act)
        return act


def _write_prompt(loop: Any, act: Act) -> None:
    if getattr(loop, "project", None) is not None:
        from .prompt import write_loop_prompt

        write_loop_prompt(loop.project.root, act)
