"""Routes (SPEC D8–D9): classify a task, and resolve tier/effort → model + native effort.

A task's tier and effort come, axis by axis, from its class: an explicit
`capability_tier` / `effort_level` first, else what its `complexity` implies
(`task_defaults.simple` / `.complex`), else `task_defaults.unclassified`. The pair then
resolves through the active profile (project → global → preset). A route is a
suggestion: crewbook never applies it by itself.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..artifacts.change import Change, open_change
from ..artifacts.project import ProjectLike, as_project
from ..errors import RoutingError
from .active import ActiveProfile, provider_profile_show
from .axes import Effort, Tier
from .checks import check_axes
from .model import Capability, TaskClass
from .resolutions import CellResolution, RoleRoute, Source
from .task_classes import (
    TASKS_FILE,
    TaskRef,
    classify,
    load_task_classes,
    resolve_task,
    stored_class,
)

if TYPE_CHECKING:
    import pandas as pd

    from .graph import RoutingMatrix


@dataclass(frozen=True)
class ResolutionStep:
    """One step of a route's resolution path."""

    step: str
    value: str
    source: str
    where: str | None
    used: bool = True

    def to_dict(self) -> dict[str, Any]:
        """`{"step", "value", "source", "where", "used"}`."""
        return {
            "step": self.step,
            "value": self.value,
            "source": self.source,
            "where": self.where,
            "used": self.used,
        }

    def __str__(self) -> str:
        where = f" ({self.where})" if self.where else ""
        mark = "" if self.used else "  [not used]"
        return f"{self.step:<6} {self.value}  ← {self.source}{where}{mark}"


@dataclass(frozen=True, eq=False)
class TaskRoute:
    """The routing suggestion of one task: tier, effort, model and native effort, and how
    each was found. Nothing is applied."""

    task: TaskRef
    task_class: TaskClass | None
    tier: Tier
    tier_source: str
    tier_where: str
    effort: Effort
    effort_source: str
    effort_where: str
    cell: CellResolution
    family: str | None
    hint: str | None = None

    @property
    def task_id(self) -> str:
        """The task's canonical id."""
        return self.task.id

    @property
    def capability(self) -> Capability | None:
        """Model and native effort, or None when no profile gives one."""
        return self.cell.capability

    @property
    def model(self) -> str | None:
        """The suggested model."""
        return self.capability.model if self.capability else None

    @property
    def source(self) -> Source:
        """Which layer gave the model: project, global, preset or none."""
        return self.cell.source

    @property
    def source_path(self) -> str | None:
        """The file that gave the model."""
        return self.cell.where

    def steps(self) -> list[ResolutionStep]:
        """The resolution path: class, tier, effort, then every profile layer consulted."""
        cls = str(self.task_class) if self.task_class else "not classified"
        out = [
            ResolutionStep("class", cls, "task classes", TASKS_FILE),
            ResolutionStep("tier", self.tier, self.tier_source, self.tier_where),
            ResolutionStep("effort", self.effort, self.effort_source, self.effort_where),
        ]
        for c in self.cell.candidates:
            out.append(
                ResolutionStep(
                    "model",
                    c.value or "(not set)",
                    f"{c.source} profile" if c.source in ("project", "global") else c.source,
                    c.where,
                    c.used,
                )
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        """The shape of `crewbook routing route --json`."""
        cap = self.capability
        return {
            "task": self.task.id,
            "change": self.task.change,
            "text": self.task.text if self.task.item else None,
            "class": self.task_class.to_dict() if self.task_class else {},
            "tier": self.tier,
            "effort": self.effort,
            "family": self.family,
            "model": cap.model if cap else None,
            "setting": cap.setting if cap else None,
            "native": cap.native if cap else None,
            "native_text": cap.native_text if cap else None,
            "note": cap.note if cap else None,
            "source": self.source,
            "source_path": self.source_path,
            "path": [s.to_dict() for s in self.steps()],
            "suggestion": True,
            "hint": self.hint,
        }

    def __str__(self) -> str:
        cap = self.capability
        text = f": {self.task.text}" if self.task.item else ""
        head = f"Task {self.task.label}{text}"
        if cap:
            route = f"→ {cap.model} · {cap.native_text}  ({self.source} {self.source_path})"
        else:
            route = f"→ no model: {self.hint}"
        lines = [head, f"  {self.tier}/{self.effort} {route}"]
        if cap and cap.note:
            lines.append(f"  {cap.note}")
        lines.append("  Resolution path:")
        lines += [f"    {s}" for s in self.steps()]
        lines.append("  (a suggestion: nothing is applied)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"<TaskRoute {self.task.label}: {self.tier}/{self.effort} → {self.model} "
            f"({self.source})>"
        )

    def _repr_html_(self) -> str:
        cap = self.capability
        rows = "".join(
            f"<tr style='{'' if s.used else 'color:#9e9e9e'}'><td>{html.escape(s.step)}</td>"
            f"<td><b>{html.escape(s.value)}</b></td><td>{html.escape(s.source)}</td>"
            f"<td><code>{html.escape(s.where or '')}</code></td>"
            f"<td>{'✔' if s.used else 'overridden'}</td></tr>"
            for s in self.steps()
        )
        text = f": {html.escape(self.task.text or '')}" if self.task.item else ""
        if cap:
            route = (
                f"<b>{html.escape(cap.model)}</b> · {html.escape(cap.native_text)} "
                f"<small>({self.source} <code>{html.escape(self.source_path or '')}</code>)"
                f"</small><br><small>{html.escape(cap.note or '')}</small>"
            )
        else:
            route = f"<i>no model</i>: {html.escape(self.hint or '')}"
        return (
            f"<div class='crewbook-route'><p>Task <b>{html.escape(self.task.label)}</b>{text}"
            f"<br>{self.tier}/{self.effort} → {route}</p><table><thead><tr><th>step</th>"
            "<th>value</th><th>source</th><th>where</th><th></th></tr></thead>"
            f"<tbody>{rows}</tbody></table><p><small>A suggestion: nothing is applied."
            "</small></p></div>"
        )


def route_for(ref: TaskRef, task_class: TaskClass | None, profile: ActiveProfile) -> TaskRoute:
    """Resolve `ref` with class `task_class` through `profile`."""
    tasks_where = TASKS_FILE

    def axis(explicit: str | None, attr: str, name: str) -> tuple[str, str, str]:
        if explicit is not None:
            return explicit, f"task class ({name})", tasks_where
        if task_class is not None and task_class.complexity is not None:
            d = profile.task_default(task_class.complexity)
            return (
                getattr(d.pair, attr),
                f"complexity {task_class.complexity} via task_defaults.{task_class.complexity}",
                d.where,
            )
        d = profile.task_default("unclassified")
        return getattr(d.pair, attr), "not classified: task_defaults.unclassified", d.where

    tier, tier_src, tier_where = axis(
        task_class.capability_tier if task_class else None, "tier", "capability_tier"
    )
    effort, eff_src, eff_where = axis(
        task_class.effort_level if task_class else None, "effort", "effort_level"
    )
    cell = profile.cell(tier, effort)
    hint = None
    if cell.capability is None:
        hint = (
            profile.hint
            if not profile.exists
            else (profile.preset_problem or f"no profile layer sets {tier}/{effort}")
        )
    return TaskRoute(
        task=ref,
        task_class=task_class,
        tier=tier,  # type: ignore[arg-type]  # values come from validated models
        tier_source=tier_src,
        tier_where=tier_where,
        effort=effort,  # type: ignore[arg-type]
        effort_source=eff_src,
        effort_where=eff_where,
        cell=cell,
        family=profile.family,
        hint=hint,
    )


def task_classify(
    task_id: str,
    complexity: str | None = None,
    capability_tier: str | None = None,
    effort_level: str | None = None,
    *,
    change: str | Path | Change | None = None,
    project: ProjectLike = None,
) -> TaskRoute:
    """Classify a task on one or more axes (absent ones unchanged) and return its route.

    `complexity`: simple|complex; `capability_tier`: deep|standard|light;
    `effort_level`: low|medium|high. With `change`, `task_id` is one of its tasks (its
    number or position); without, any id. Nothing is stored unless every value is valid.
    """
    values = {
        "complexity": complexity,
        "capability_tier": capability_tier,
        "effort_level": effort_level,
    }
    problems = check_axes(values)
    if problems:
        raise RoutingError(f"cannot classify task {task_id!r}", problems)
    proj = as_project(project)
    ref = resolve_task(task_id, change, proj)
    new = classify(proj, ref, values)
    return route_for(ref, new, provider_profile_show(proj))


def task_route_show(
    task_id: str,
    *,
    change: str | Path | Change | None = None,
    project: ProjectLike = None,
) -> TaskRoute:
    """The routing suggestion of a task: tier/effort → model + native effort, through the
    profile (project before global), with the resolution path. Read-only."""
    proj = as_project(project)
    ref = resolve_task(task_id, change, proj)
    cls = stored_class(load_task_classes(proj), ref)
    return route_for(ref, cls, provider_profile_show(proj))


def role_route(role: str, loop: str | None = None, project: ProjectLike = None) -> RoleRoute:
    """The default route of `role` in routing loop `loop` (None: the registry's default
    routing loop, the crew loop's: `analyst`, `developer`, `qa`)."""
    return provider_profile_show(project).role(role, loop)


@dataclass(frozen=True, eq=False)
class TaskRoutingTable:
    """The routes of every task of a change."""

    change: str
    routes: tuple[TaskRoute, ...]
    family: str | None

    def frame(self) -> pd.DataFrame:
        """One row per task: task, text, done, complexity, capability_tier, effort_level,
        tier, tier_source, effort, effort_source, model, native_text, source, source_path."""
        from .frames import routes_frame

        return routes_frame(self.routes)

    def matrix(self) -> RoutingMatrix:
        """The table, model column coloured by model, project-sourced models framed."""
        from .graph import task_table

        return task_table(self.routes, title=f"Task routing of {self.change}")

    def __getitem__(self, task_id: str) -> TaskRoute:
        for route in self.routes:
            if route.task.id == task_id:
                return route
        raise RoutingError(f"no task {task_id!r} in the table of {self.change!r}")

    def __len__(self) -> int:
        return len(self.routes)

    def to_dict(self) -> dict[str, Any]:
        """`{"change", "family", "tasks": [route...]}`."""
        return {
            "change": self.change,
            "family": self.family,
            "tasks": [r.to_dict() for r in self.routes],
        }

    def __str__(self) -> str:
        return self.matrix().to_markdown()

    def __repr__(self) -> str:
        return f"<TaskRoutingTable {self.change!r}: {len(self.routes)} tasks>"

    def _repr_html_(self) -> str:
        return self.matrix()._repr_html_()


def task_routes(change: str | Path | Change, project: ProjectLike = None) -> TaskRoutingTable:
    """The routing table of every task of `change` (classified or not)."""
    proj = as_project(project)
    ch = open_change(change, proj)
    classes = load_task_classes(proj)
    profile = provider_profile_show(proj)
    routes = []
    for item in ch.status().tasks:
        ref = TaskRef(item.id, ch.name, item)
        routes.append(route_for(ref, stored_class(classes, ref), profile))
    return TaskRoutingTable(ch.name, tuple(routes), profile.family)
