"""The routing axes of SPEC D7–D8 and the roles that get a default route.

A task is classified on up to three axes: `complexity` (`simple`, `complex`),
`capability_tier` (`deep`, `standard`, `light`) and `effort_level` (`low`,
`medium`, `high`). A profile maps each tier × effort pair to a concrete model.
"""

from __future__ import annotations

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

#: Roles of the crew loop (SPEC D1) and of the delivery loops (SPEC C1), by loop.
LOOP_ROLES: dict[str, tuple[str, ...]] = {
    "crew": ("analyst", "developer", "qa"),
    "delivery": (
        "architect",
        "developer",
        "qa",
        "reviewer",
        "web-tester",
        "explorer",
        "dependency-analyser",
    ),
}


#: Friendlier axis names used by `ActiveProfile.cell` and the CLI.
AXIS_ALIASES = {"tier": "capability_tier", "effort": "effort_level"}
