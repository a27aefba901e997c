"""What a crew or autonomous contract carries besides who acts: the resolved route and the
prompt text.

Routes (D4, D9) come from `crewbook.routing`: a role's default tier and effort (project
profile, global profile, then crewbook's defaults), resolved to a model and its native
effort through the profile (project before global, then the family's preset). The
developer's route follows the current task's class when the task was classified
(`task_classify`), as routing's own `task_route_show` would say. A route is a
suggestion; `model` is None (with a `hint`) when no profile exists.

Resolutions are remembered per role and task until one of the routing files changes
(their size and modification time are checked), so a contract costs a few `stat` calls.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..artifacts.checklist import TaskItem
from ..artifacts.project import Project
from ..core.atomic import write_atomic

if TYPE_CHECKING:
    from ..core.loop import Act


class RouteResolver:
    """Resolve and remember the route of a (loop role, change, task) in one project."""

    def __init__(self, project: Project | None) -> None:
        from ..routing.home import global_profile_path
        from ..routing.profiles import project_profile_path
        from ..routing.task_classes import tasks_path

        self.project = project
        self._memo: dict[tuple[Any, ...], dict[str, Any]] = {}
        self._key: tuple[Any, ...] | None = None
        self._profile: Any = None
        self._classes: Any = None
        paths = [global_profile_path()]
        if project is not None:
            paths += [project_profile_path(project), tasks_path(project)]
        self._paths = tuple(str(p) for p in paths)

    def _files_key(self) -> tuple[Any, ...]:
        key: list[tuple[int, int] | None] = []
        for path in self._paths:
            try:
                st = os.stat(path)
            except OSError:
                key.append(None)
            else:
                key.append((st.st_mtime_ns, st.st_size))
        return tuple(key)

    def __call__(self, role: str | None) -> Mapping[str, Any] | None:
        """The role's default route (the `crewbook.loop.Router` protocol)."""
        return None if role is None else self.route(role)

    def route(self, role: str, change: str | None = None, task: TaskItem | None = None,
              *, classified: bool = True) -> dict[str, Any]:
        """`{"role", "tier", "effort", "model", "native", "setting", "source", "via", ...}`."""
        files = self._files_key()
        if files != self._key:
            self._memo.clear()
            self._profile = self._classes = None
            self._key = files
        use_class = classified and task is not None and change is not None \
            and self.project is not None
        memo_key = (role, change, task.id if task else None, use_class)
        found = self._memo.get(memo_key)
        if found is None:
            found = self._resolve(role, change, task, use_class)
            self._memo[memo_key] = found
        return found

    def _resolve(self, role: str, change: str | None, task: TaskItem | None,
                 use_class: bool) -> dict[str, Any]:
        from ..routing.active import provider_profile_show

        if self._profile is None:
            self._profile = provider_profile_show(self.project)
        profile = self._profile
        if use_class and task is not None and change is not None and self.project is not None:
            from ..routing.routes import route_for
            from ..routing.task_classes import TaskRef, load_task_classes, stored_class

            if self._classes is None:
                self._classes = load_task_classes(self.project)
            ref = TaskRef(task.id, change, task)
            cls = stored_class(self._classes, ref)
            if cls is not None:
                r = route_for(ref, cls, profile)
                cap = r.capability
                return {
                    "role": role, "via": "task class", "task": task.id, "tier": r.tier,
                    "effort": r.effort, "model": cap.model if cap else None,
                    "setting": cap.setting if cap else None,
                    "native": cap.native if cap else None,
                    "native_text": cap.native_text if cap else None,
                    "source": r.source, "source_path": r.source_path,
                    "family": profile.family, "hint": r.hint, "suggestion": True,
                }
        default = self._memo.get((role, None, None, False))
        if default is not None:
            return {**default, "task": task.id if task else None}
        rr = profile.role(role, "crew")
        cap = rr.capability
        default = {
            "role": role, "via": "role default", "task": None,
            "tier": rr.tier, "effort": rr.effort, "model": cap.model if cap else None,
            "setting": cap.setting if cap else None, "native": cap.native if cap else None,
            "native_text": cap.native_text if cap else None,
            "source": rr.cell.source, "source_path": rr.cell.where,
            "family": profile.family, "hint": None if cap else profile.hint,
            "suggestion": True,
        }
        self._memo[(role, None, None, False)] = default
        return {**default, "task": task.id if task else None}


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
    lines += ["", f"Expected: {act.expects}",
              f"Report with crew_report(role={act.role!r}, verdict one of "
              f"{' | '.join(act.moves)}, summary=...)."]
    return "\n".join(lines) + "\n"


def write_prompt(root: Path, rel: str, text: str) -> bool:
    """Write `{"prompt": text}` at `root/rel` unless it already holds exactly that.

    Returns True when the file was written (False: it was already there, untouched).
    """
    path = root / rel
    data = json.dumps({"prompt": text}, ensure_ascii=False, indent=2) + "\n"
    if path.is_file() and path.read_text("utf-8", errors="replace") == data:
        return False
    write_atomic(path, data)
    return True


__all__ = ["RouteResolver", "crew_prompt", "route_line", "write_prompt"]
