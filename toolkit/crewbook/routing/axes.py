"""The routing axes of SPEC D7–D8 and the roles that get a default route.

A task is classified on up to three axes: `complexity` (`simple`, `complex`),
`capability_tier` (`deep`, `standard`, `light`) and `effort_level` (`low`,
`medium`, `high`). A profile maps each tier × effort pair to a concrete model.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Literal, get_args

Tier = Literal["deep", "standard", "light"]
Effort = Literal["low", "medium", "high"]
Complexity = Literal["simple", "complex"]
Scope = Literal["global", "project"]
#: The native knob a family offers: a named reasoning effort, a thinking budget in
#: tokens, or nothing (effort is then expressed by the choice of model).
NativeSetting = Literal["reasoning_effort", "thinking_budget", "none"]
ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh"]

TIERS: tuple[Tier, ...] = get_args(Tier)
EFFORTS: tuple[Effort, ...] = get_args(Effort)
COMPLEXITIES: tuple[Complexity, ...] = get_args(Complexity)
SCOPES: tuple[Scope, ...] = get_args(Scope)

#: Task-class axis name → allowed values (the names `task_classify` takes).
AXES: dict[str, tuple[str, ...]] = {
    "complexity": COMPLEXITIES,
    "capability_tier": TIERS,
    "effort_level": EFFORTS,
}



class _LoopRoles(Mapping[str, tuple[str, ...]]):
    """Routing loop → its roles, read live from the registry (`crewbook.families`): each
    family routed by role declares its roles on its registry line, so a family
    registered later (a plug-in, a test's toy) is routed like crewbook's own."""

    def _roles(self) -> dict[str, tuple[str, ...]]:
        from ..families import routing_roles

        return routing_roles()

    def __getitem__(self, loop: str) -> tuple[str, ...]:
        return self._roles()[loop]

    def __iter__(self) -> Iterator[str]:
        return iter(self._roles())

    def __len__(self) -> int:
        return len(self._roles())

    def __repr__(self) -> str:
        return f"LOOP_ROLES({self._roles()!r})"


#: Roles of every loop routed by role (the crew loop's, SPEC D1; the delivery loops',
#: SPEC C1; a registered family's), by loop, in registry order.
LOOP_ROLES: Mapping[str, tuple[str, ...]] = _LoopRoles()


#: Friendlier axis names used by `ActiveProfile.cell` and the CLI.
AXIS_ALIASES = {"tier": "capability_tier", "effort": "effort_level"}
