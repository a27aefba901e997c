"""Model routing (SPEC D7–D9): provider presets, profiles, task classes and routes.

* `provider_presets_list()` — the built-in families (claude, codex, gemini, mistral) and
  the custom presets in `$CREWBOOK_HOME/presets/`;
* `provider_profile_init(family, scope="global"|"project", force=False)` — write a
  profile (tier × effort → model + native effort, role defaults) from a preset;
* `provider_profile_show()` — the active profile, each value with its source;
* `task_classify(task_id, complexity=, capability_tier=, effort_level=)` and
  `task_route_show(task_id)` — classify a task, and see its suggested route;
* `task_routes(change)`, `compare_profiles(a, b)`, `.matrix()` / `.role_matrix()` — tables.

See `docs/routing.md` for the file formats and the resolution order. Importing this
package is light: each name loads its module on first use, and pandas is imported by
the functions that build DataFrames.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_names
from ..errors import PresetNotFoundError, RoutingError, TaskNotFoundError

#: The public names by module, loaded on first use: `crewbook.routing.axes` (the
#: command line's choices) and `crewbook.routing.home` load without the profile models.
_LAZY: dict[str, tuple[str, ...]] = {
    "active": ("ActiveProfile", "provider_profile_show"),
    "axes": ("COMPLEXITIES", "EFFORTS", "LOOP_ROLES", "TIERS"),
    "comparison": ("compare_profiles",),
    "graph": ("ProfileComparison", "RoutingMatrix"),
    "home": ("crewbook_home",),
    "presets": ("Preset", "PresetListing", "get_preset", "provider_presets_list"),
    "profiles": ("ProfileInit", "provider_profile_init"),
    "resolutions": ("RoleRoute",),
    "routes": ("TaskRoute", "TaskRoutingTable", "role_route", "task_classify",
               "task_route_show", "task_routes"),
}
__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())

if TYPE_CHECKING:
    from .active import ActiveProfile, provider_profile_show
    from .axes import COMPLEXITIES, EFFORTS, LOOP_ROLES, TIERS
    from .comparison import compare_profiles
    from .graph import ProfileComparison, RoutingMatrix
    from .home import crewbook_home
    from .presets import Preset, PresetListing, get_preset, provider_presets_list
    from .profiles import ProfileInit, provider_profile_init
    from .resolutions import RoleRoute
    from .routes import (
        TaskRoute,
        TaskRoutingTable,
        role_route,
        task_classify,
        task_route_show,
        task_routes,
    )

__all__ = [
    "COMPLEXITIES",
    "EFFORTS",
    "LOOP_ROLES",
    "TIERS",
    "ActiveProfile",
    "Preset",
    "PresetListing",
    "PresetNotFoundError",
    "ProfileComparison",
    "ProfileInit",
    "RoleRoute",
    "RoutingError",
    "RoutingMatrix",
    "TaskNotFoundError",
    "TaskRoute",
    "TaskRoutingTable",
    "compare_profiles",
    "crewbook_home",
    "get_preset",
    "provider_presets_list",
    "provider_profile_init",
    "provider_profile_show",
    "role_route",
    "task_classify",
    "task_route_show",
    "task_routes",
]
