"""`compare_profiles`: two or more profiles or families side by side (a
`ProfileComparison`, drawn by `crewbook.routing.graph`)."""

from __future__ import annotations

from typing import Any

from ..errors import UsageError
from .active import ActiveProfile
from .axes import EFFORTS, TIERS, Effort, Tier
from .graph import ProfileComparison
from .model import Capability
from .presets import Preset, get_preset

__all__ = ["compare_profiles"]

Comparable = Any  # Preset | ActiveProfile | str (a family name)


def _cells_of(item: Comparable) -> tuple[str, dict[tuple[Tier, Effort], Capability | None]]:
    if isinstance(item, str):
        item = get_preset(item)
    if isinstance(item, Preset):
        return item.family, {(t, e): item.cell(t, e) for t in TIERS for e in EFFORTS}
    if isinstance(item, ActiveProfile):
        name = "profile" + (f" ({item.family})" if item.family else "")
        if item.project is not None and any(x.scope == "project" for x in item.layers):
            name = "project " + name
        return name, {k: r.capability for k, r in item.cells().items()}
    raise UsageError(
        f"cannot compare a {type(item).__name__}: give a family name, a Preset or an "
        "ActiveProfile (provider_profile_show())"
    )


def compare_profiles(*items: Preset | ActiveProfile | str) -> ProfileComparison:
    """Two or more profiles or families side by side (`compare_profiles("claude", "codex")`,
    `compare_profiles(provider_profile_show(), "claude")`); differences from the first
    are framed."""
    if len(items) < 2:
        raise UsageError("compare_profiles needs at least two profiles or families")
    names: list[str] = []
    cells = []
    for item in items:
        name, c = _cells_of(item)
        base, n = name, 2
        while name in names:
            name, n = f"{base} ({n})", n + 1
        names.append(name)
        cells.append(c)
    return ProfileComparison(tuple(names), tuple(cells))
