"""`Router`: the route every loop contract carries (`Act.route`).

A loop asks its router for the route of the role that acts next: the tier and effort
of that role (role defaults of the loop family, project profile before global, then
crewbook's defaults), and the concrete capability of that cell (model and native
effort) when a profile exists. A role routing does not know (a pipeline stage) gets the
route of an unclassified task. Routes are a suggestion, never imposed (D9), and each
role is resolved once per router, so stepping a loop stays fast.
"""

from __future__ import annotations

from typing import Any

from ..artifacts.project import ProjectLike
from ..errors import plural
from .active import ActiveProfile, provider_profile_show
from .axes import LOOP_ROLES

__all__ = ["Router"]


class Router:
    """Role → route for the loops of one family (``crew``, ``delivery``, ``pipeline``...).

    ``Router("delivery")`` reads the profiles of the project found from the current
    folder (or `project`) on first use; `profile` pins an `ActiveProfile` instead.
    Calling it returns ``{"role", "tier", "effort", "model", "native", "native_text",
    "source"}`` (``model`` None without a profile), or None for no role.
    """

    def __init__(self, family: str, project: ProjectLike = None, *,
                 profile: ActiveProfile | None = None) -> None:
        self.family = family
        self._project = project
        self._profile = profile
        self._routes: dict[str, dict[str, Any]] = {}

    @property
    def profile(self) -> ActiveProfile:
        """The active profile (read once)."""
        if self._profile is None:
            self._profile = provider_profile_show(self._project)
        return self._profile

    def __call__(self, role: str | None) -> dict[str, Any] | None:
        if role is None:
            return None
        route = self._routes.get(role)
        if route is None:
            route = self._routes[role] = self._resolve(role)
        return route

    def _resolve(self, role: str) -> dict[str, Any]:
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

    def __repr__(self) -> str:
        return f"<Router {self.family}: {plural(len(self._routes), 'role')} resolved>"
