"""What a crew contract carries besides who acts: the prompt text (`crew_prompt`, written
by `crewbook.core.loopfiles.write_prompt`), with the route's one-line form
(`crewbook.core.acts.route_line`).

Routes (D4, D9) come from the one router, `crewbook.routing.router.Router("crew",
project, by_task=True)`: a role's default tier and effort, or the current task's class
when the task was classified.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.acts import route_line
from ..core.loopfiles import write_prompt

if TYPE_CHECKING:
    from ..core.loop import Act


def crew_prompt(act: Act, goal: str) -> str:
    """The prompt of a crew contract: the goal (in every prompt), the role, the pointer,
    what it receives and what is expected, the bar facts (qa), the feedback (developer)."""
    d = act.details
    lines = [
        f"# Crew loop · act {act.act} · {act.role}",
        "",
        f"Goal: {goal}",
        f"Scope: {d.get('scope')} · epic {d.get('epic')} · story {d.get('story')}",
        f"Your role: {act.role} ({act.stage}), attempt {act.attempt}.",
        f"Route (a suggestion): {route_line(dict(act.route) if act.route else None)}",
    ]
    if d.get("axis"):
        lines.append(f"This epic comes from the workshop axis: {d['axis']}")
    if d.get("document"):
        lines.append(f"Document in focus: {d['document']}")
    tasks = d.get("tasks") or []
    if tasks:
        lines += ["", f"Tasks of the story ({d.get('tracks')}):"]
        lines += [f"- [{'x' if t['done'] else ' '}] {t['id']} {t['text']}" for t in tasks]
    else:
        lines += ["", f"The epic has no tasks yet: frame it in {d.get('tracks')} (a heading per "
                      "story, a checkbox per task)."]
    if d.get("task"):
        lines.append(f"Current task: {d['task']['id']} {d['task']['text']}")
    if act.receives:
        lines += ["", "You receive: " + ", ".join(act.receives)]
    if act.feedback:
        lines += ["", "Feedback to address:"] + [f"- {f}" for f in act.feedback]
    bar = d.get("bar")
    if bar:
        lines += ["", f"Bar on version {bar['version']} ({'pass' if bar['passed'] else 'fail'}):"]
        lines += [f"- {line}" for line in bar["lines"]]
        for name, tail in (bar.get("tails") or {}).items():
            lines += ["", f"End of the failing {name} output:", "```", tail.rstrip(), "```"]
    lines += ["", f"Expected: {act.expects}",
              f"Report with crew_report(role={act.role!r}, verdict one of "
              f"{' | '.join(act.moves)}, summary=...)."]
    return "\n".join(lines) + "\n"


__all__ = ["crew_prompt", "route_line", "write_prompt"]
