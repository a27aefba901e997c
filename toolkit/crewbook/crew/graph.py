"""Graph model of the crew loop's state (imported by the method that draws).

Crew loop: the pointer (epic, story, task) as a note, the three roles in their cycle
(analyst → developer → qa, qa's ``no-go`` back to the developer, dashed), and qa's
``go`` to the next story, epic or workshop axis. The expected role is bold and marked
``ready``; the roles that already acted on the current story are ``done``; once the
loop has finished, its finished reason is the bold node.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..draw.model import Edge, GraphModel, Node, attrs
from .model import ROLES, STAGES

if TYPE_CHECKING:
    from .engine import CrewLoop

CREW_LEGEND: tuple[tuple[str, str], ...] = (
    ("ready", "expected to report now"), ("done", "acted on this story"),
    ("complete", "finished"),
)
_BACK = attrs(color="#c62828", fontcolor="#c62828")
_END = attrs(shape="box", peripheries="2", fillcolor="#c8e6c9", color="#2e7d32")
_CAPPED = attrs(shape="octagon", fillcolor="#ffe0b2", color="#e65100")


def _short(text: str | None, width: int = 48) -> str:
    text = text or ""
    return text if len(text) <= width else text[: width - 1] + "…"


def crew_graph(loop: CrewLoop) -> GraphModel:
    """The crew loop's state (see the module docstring)."""
    from .backlog import task_text

    s = loop.view
    finished = s.finished_reason is not None
    title = f"crew loop {s.run} · act {s.acts} · scope {s.config.scope}"
    model = GraphModel(f"crew-{s.run}", title=title, legend=CREW_LEGEND)
    story = loop.current_story() if s.epic else None
    task = story.next_task if story else None
    badge = f"task {task.id}: {_short(task_text(task), 40)}" if task else "no task yet"
    model.add_node(Node("pointer", label=f"epic {s.epic}", kind="note", rank=0,
                        detail=f"story: {_short(s.story)}", badge=badge,
                        tooltip=f"goal: {s.config.goal}"))
    acted = {r.role for r in s.trail if r.epic == s.epic and r.story == s.story}
    for rank, role in enumerate(ROLES, start=1):
        expected = not finished and role == s.expected
        status = "ready" if expected else ("done" if role in acted else None)
        badge_role = f"attempt {s.attempt}" if expected and s.attempt > 1 else None
        if role == "qa" and s.bar is not None and s.bar.act == s.dev_act:
            badge_role = f"bar {'green' if s.bar.passed else 'red'} on v{s.bar.version}"
        model.add_node(Node(role, label=role, kind="role", status=status, rank=rank,
                            detail=STAGES[role], badge=badge_role, emphasis=expected))
    model.add_edge(Edge("pointer", "analyst", "flow", "frame"))
    model.add_edge(Edge("analyst", "developer", "flow", "done"))
    model.add_edge(Edge("developer", "qa", "flow", f"done → bar (v{s.version})"))
    model.add_edge(Edge("qa", "developer", "flow", f"no-go ({s.no_go})", "dashed", attrs=_BACK))
    covered = len(s.stories_covered)
    model.add_node(Node("next", label="next story / epic", kind="gate", rank=4,
                        detail=f"{covered} stories, {len(s.epics_covered)} epics covered",
                        badge=f"epics {s.epics_started}/{s.config.max_epics or '∞'}"))
    model.add_edge(Edge("qa", "next", "flow", "go"))
    model.add_edge(Edge("next", "analyst", "flow", "next story", "dotted"))
    if finished:
        reason = str(s.finished_reason)
        model.add_node(Node("end", label=reason.replace("_", " "), kind="gate", rank=5,
                            status="complete", emphasis=True,
                            detail=f"after {s.acts} acts (max {s.config.max_rounds or '∞'})",
                            attrs=_CAPPED if reason.endswith("exhausted") else _END))
        model.add_edge(Edge("next", "end", "flow", "finish"))
    return model
