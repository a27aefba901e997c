"""`Router`: the one route resolver every loop uses (`Act.route`), returning a `Route`.

A loop asks its router for the route of the role that acts next: the tier and effort
of that role (role defaults of the loop family, project profile before global, then
crewbook's defaults), and the concrete capability of that cell (model and native
effort) when a profile exists. A role routing does not know (a pipeline stage) gets the
route of an unclassified task. A router built ``by_task`` (the crew and autonomous
loops' own) gives `TaskRoute`s, which may follow the class of the current task
(`route(role, change, task)`, as routing's own `task_route_show` says). Routes are a
suggestion, never imposed (D9).

Each route is resolved once and remembered until one of the routing files changes: the
global profile, and for a project its profile and task classes (their size and
modification time are checked, a few `stat` calls per route read), so stepping a loop
stays fast and a profile edited in another cell or process is seen at the next act.
"""

from __future__ import annotations

import os
from typing import Any, TypedDict

from ..artifacts.checklist import TaskItem
from ..artifacts.project import Project, ProjectLike
from ..errors import plural
from .active import ActiveProfile, provider_profile_show
from .axes import LOOP_ROLES
from .home import global_profile_path
from .profiles import project_profile_path
from .task_classes import tasks_path

__all__ = ["Route", "Router", "TaskRoute"]


class Route(TypedDict, total=False):
    """What a contract's route says: ``role``, ``tier``, ``effort``, ``model`` (None
    without a profile), ``native`` and ``native_text`` (the model's own effort setting),
    ``source`` (where the tier and effort came from)."""

    role: str
    tier: str
    effort: str
    model: str | None
    native: Any
    native_text: str | None
    source: str | None


class TaskRoute(Route, total=False):
    """A route of a router built ``by_task``: also ``via`` (``role default`` or ``task
    class``), ``task``, ``setting``, ``source_path``, ``family`` (the provider family),
    ``hint`` (why there is no model) and ``suggestion`` (always True: D9)."""

    via: str
    task: str | None
    setting: Any
    source_path: str | None
    family: str | None
    hint: str | None
    suggestion: bool


class Router:
    """Role → `Route` for the loops of one routing loop (``LOOP_ROLES``: whose role
    defaults apply; any other name routes every role as an unclassified task).

    ``Router(name)`` reads the profiles of the project found from the current folder (or
    `project`) on first use; `profile` pins an `ActiveProfile` instead (then nothing is
    re-read). Calling it returns the role's route, or None for no role. `by_task`: every
    route is a `TaskRoute` (`route`), which may follow the class of the current task.
    """

    def __init__(self, family: str, project: ProjectLike = None, *,
                 profile: ActiveProfile | None = None, by_task: bool = False) -> None:
        self.family = family
        self.by_task = by_task
        self._project = project
        self._pinned = profile is not None
        self._profile = profile
        self._routes: dict[str, Route] = {}
        self._memo: dict[tuple[Any, ...], TaskRoute] = {}
        self._classes: Any = None
        self._key: tuple[Any, ...] | None = None
        self._paths: tuple[str, ...] | None = None  # found on first use: building is free

    @property
    def project(self) -> Project | None:
        """The project this router reads, when it was given one."""
        return self._project if isinstance(self._project, Project) else None

    @property
    def profile(self) -> ActiveProfile:
        """The active profile (read once, and again after its files change)."""
        self._fresh()
        if self._profile is None:
            self._profile = provider_profile_show(self._project)
        return self._profile

    def _fresh(self) -> None:
        """Forget every route when a routing file changed since the last look."""
        if self._pinned:
            return
        if self._paths is None:
            paths = [global_profile_path()]
            if isinstance(self._project, Project):
                paths += [project_profile_path(self._project), tasks_path(self._project)]
            self._paths = tuple(str(p) for p in paths)
        key: list[tuple[int, int, int] | None] = []
        for path in self._paths:
            try:
                st = os.stat(path)
            except OSError:
                key.append(None)
            else:  # a file replaced whole (a rename) shows a new inode at the same size
                key.append((st.st_mtime_ns, st.st_size, st.st_ino))
        files = tuple(key)
        if files != self._key:
            self._routes.clear()
            self._memo.clear()
            self._profile = self._classes = None
            self._key = files

    def __call__(self, role: str | None) -> Route | None:
        if role is None:
            return None
        if self.by_task:
            return self.route(role)
        self._fresh()
        route = self._routes.get(role)
        if route is None:
            route = self._routes[role] = self._resolve_family(role)
        return route

    def route(self, role: str, change: str | None = None, task: TaskItem | None = None,
              *, classified: bool = True) -> TaskRoute:
        """The route of `role` on `task` of `change`: the task's class when it was
        classified (and `classified`), else the role's default."""
        self._fresh()
        use_class = classified and task is not None and change is not None \
            and self.project is not None
        memo_key = (role, change, task.id if task else None, use_class)
        found = self._memo.get(memo_key)
        if found is None:
            found = self._memo[memo_key] = self._resolve(role, change, task, use_class)
        return found

    def _resolve_family(self, role: str) -> Route:
        profile = self.profile
        source: str
        if role in LOOP_ROLES.get(self.family, ()):
            found = profile.role(role, self.family)
            tier, effort, cell = found.tier, found.effort, found.cell
            source = f"{found.source}: {self.family}.{role}"
        else:
            axes = profile.task_default("unclassified")
            tier, effort, source = axes.pair.tier, axes.pair.effort, "task_defaults.unclassified"
            cell = profile.cell(tier, effort)
        capability = cell.capability
        return {
            "role": role, "tier": tier, "effort": effort,
            "model": capability.model if capability else None,
            "native": capability.native if capability else None,
            "native_text": capability.native_text if capability else None,
            "source": source,
        }

    def _resolve(self, role: str, change: str | None, task: TaskItem | None,
                 use_class: bool) -> TaskRoute:
        profile = self.profile
        if use_class and task is not None and change is not None and self.project is not None:
            from .routes import route_for
            from .task_classes import TaskRef, load_task_classes, stored_class

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
        cached = self._memo.get((role, None, None, False))
        if cached is not None:
            return {**cached, "task": task.id if task else None}
        rr = profile.role(role, self.family)
        cap = rr.capability
        default: TaskRoute = {
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

    def __repr__(self) -> str:
        count = len(self._routes) + len(self._memo)
        return f"<Router {self.family}: {plural(count, 'route')} resolved>"
