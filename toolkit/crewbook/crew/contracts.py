"""What a crew or autonomous contract carries besides who acts: the prompt text, and the
route's one-line form (`route_line`).

Routes (D4, D9) come from the one router, `crewbook.routing.router.Router("crew",
project, by_task=True)`: a role's default tier and effort, or the current task's class
when the task was classified.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.atomic import write_atomic
from ..core.paths import inside

if TYPE_CHECKING:
    from ..core.loop import Act


def route_line(route: dict[str, Any] | None) -> str:
    """`claude-sonnet-4 · reasoning effort medium (standard/medium, role default)`."""
    if not route:
        return "no route"
    if route.get("model") is None:
        return f"no model ({route.get('tier')}/{route.get('effort')}): {route.get('hint')}"
    return (f"{route['model']} · {route.get('native_text')} ({route['tier']}/{route['effort']}, "
            f"{route['via']})")


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


def loop_prompt(act: Act) -> str:
    """The prompt of an autonomous-loop phase: the goal, the phase, what it expects, the
    route, and the last recette (when there was one)."""
    d = act.details
    lines = [f"# Autonomous loop · step {act.act} · {act.stage}", "", f"Goal: {d.get('goal')}",
             f"Phase: {act.stage} (acting as {act.role}), recette attempt {act.attempt}.",
             f"Route (a suggestion): {route_line(dict(act.route) if act.route else None)}",
             "", f"Expected: {act.expects}"]
    last = d.get("last_test")
    if last:
        lines += ["", f"Last recette: {'pass' if last.get('exit_code') == 0 else 'fail'} "
                      f"(exit {last.get('exit_code')})", "```",
                  str(last.get("tail") or "").rstrip(), "```"]
    if act.stage == "recette" and d.get("default_test_command"):
        lines.append(f"The recette runs: {d['default_test_command']}")
    lines += ["", "Then call loop_step(summary=...) with one sentence on what you did."]
    return "\n".join(lines) + "\n"


def write_prompt(root: Path, rel: str, text: str) -> bool:
    """Write `{"prompt": text}` at `root/rel` unless it already holds exactly that.

    Returns True when the file was written (False: it was already there, untouched).
    """
    path = inside(root, rel, "prompt path")  # never a file outside the project
    data = json.dumps({"prompt": text}, ensure_ascii=False, indent=2) + "\n"
    if path.is_file() and path.read_text("utf-8", errors="replace") == data:
        return False
    write_atomic(path, data)
    return True


__all__ = ["crew_prompt", "loop_prompt", "route_line", "write_prompt"]
