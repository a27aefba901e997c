"""The autonomous loop's operations as MCP tools (seed 003, D6): ``loop_init`` and
``loop_step`` (`crewbook.core.tools.Tool`), gathered with every family's tools by
`crewbook.core.toolbox` through this family's registry line."""

from __future__ import annotations

from functools import partial

from ..artifacts.crew_file import autonomy
from ..artifacts.project import ProjectLike
from ..core.loopfiles import MAX_SUMMARY_CHARS
from ..core.tools import ACT_ID, JSON, Tool, loop_schema, obj


def _loop_init(a: JSON, project: ProjectLike) -> JSON:
    from .api import loop_init

    return loop_init(a["goal"], bool(a.get("force", False)), project=project).to_dict()


def _loop_step(a: JSON, project: ProjectLike) -> JSON:
    from .api import loop_step

    return loop_step(a.get("test_command"), project=project, summary=a.get("summary", ""),
                     act=a.get("act")).to_dict()


def _has_loop(a: JSON, project: ProjectLike) -> None:
    """Raise when there is no autonomous loop to step."""
    from .api import open_autonomous

    open_autonomous(project)


TOOLS: tuple[Tool, ...] = (
    Tool("loop_init", "Start the autonomous build loop (Plan → Implementation → Recette → "
         "Delivery) with a global goal.",
         obj({"goal": {"type": "string", "minLength": 1},
              "force": {"type": "boolean", "default": False}}, ("goal",)), _loop_init,
         partial(loop_schema, "Status"), title="Start the autonomous loop",
         gate="disabled", cli="crewbook loop init", autonomy=autonomy),
    Tool("loop_step", "Advance the autonomous loop one phase; the recette runs test_command "
         "(default: the test cycle of the first stack declared in _codev/crew.yaml).",
         obj({"test_command": {"type": "string", "minLength": 1}, "act": ACT_ID,
              "summary": {"type": "string", "maxLength": MAX_SUMMARY_CHARS,
                          "description": "what was done in the phase (logged)"}}),
         _loop_step, partial(loop_schema, "Act"), title="Advance the autonomous loop",
         gate="gated", cli="crewbook loop step", autonomy=autonomy, precheck=_has_loop),
)

__all__ = ["TOOLS"]
