"""The active profile (SPEC D7, D9): every value with the layer it came from.

Matrix cells resolve project profile → global profile → the preset of the active
family (the first family a profile names; a profile of another family is skipped for
cells). Role and task defaults resolve project → global → `routing/defaults.yaml`.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..artifacts.project import Project, ProjectLike, project_or_none
from ..errors import PresetNotFoundError, Problem, RoutingError, did_you_mean
from .axes import EFFORTS, LOOP_ROLES, TIERS, Effort, Tier
from .checks import check_axis
from .home import display_home_path, global_profile_path
from .model import Capability
from .presets import Preset, get_preset
from .profiles import (
    DEFAULTS_DISPLAY,
    ProfileLayer,
    builtin_defaults,
    family_roles_file,
    profile_layers,
    project_profile_path,
)
from .resolutions import AxisResolution, Candidate, CellResolution, RoleRoute, Source

if TYPE_CHECKING:
    import pandas as pd

    from .graph import RoutingMatrix

TaskDefaultKind = Literal["unclassified", "simple", "complex"]


@dataclass(frozen=True, eq=False)
class ActiveProfile:
    """The profile in force: project over global over preset over crewbook defaults."""

    family: str | None
    layers: tuple[ProfileLayer, ...]
    preset: Preset | None
    project: Project | None
    searched: tuple[str, ...]
    preset_problem: str | None = None

    @property
    def exists(self) -> bool:
        """Whether any profile file exists."""
        return bool(self.layers)

    @property
    def hint(self) -> str:
        """What to do when there is no profile."""
        return (
            "no routing profile: run `crewbook routing init FAMILY` (families: "
            "`crewbook routing presets`); looked in " + ", ".join(self.searched)
        )

    def _layer_skip(self, layer: ProfileLayer) -> str:
        fam = layer.file.family
        if fam and self.family and fam != self.family:
            return f"skipped: family {fam}, not {self.family}"
        return ""

    def cell(self, tier: Tier | str, effort: Effort | str) -> CellResolution:
        """The capability at `tier` × `effort`, with every layer consulted."""
        _check_pair(tier, effort)
        t: Tier = tier  # type: ignore[assignment]
        e: Effort = effort  # type: ignore[assignment]
        candidates: list[Candidate] = []
        chosen: tuple[Capability, Source, str] | None = None
        for layer in self.layers:
            cap = layer.file.matrix.cell(t, e)
            if cap is None:
                continue
            skip = self._layer_skip(layer)
            used = chosen is None and not skip
            candidates.append(Candidate(layer.scope, layer.display_path, cap.label, used, skip))
            if used:
                chosen = (cap, layer.scope, layer.display_path)
        if self.preset is not None and self.family is not None:
            cap = self.preset.cell(t, e)
            used = chosen is None
            candidates.append(Candidate("preset", self.preset.display_path, cap.label, used))
            if used:
                chosen = (cap, "preset", self.preset.display_path)
        if chosen is None:
            return CellResolution(t, e, None, "none", None, tuple(candidates))
        return CellResolution(t, e, chosen[0], chosen[1], chosen[2], tuple(candidates))

    def cells(self) -> dict[tuple[Tier, Effort], CellResolution]:
        """Every cell, deep to light, low to high."""
        return {(t, e): self.cell(t, e) for t in TIERS for e in EFFORTS}

    def _pair(self, getter: Any, what: str | None,
              builtin: str = DEFAULTS_DISPLAY) -> AxisResolution | None:
        """The first layer's pair `getter` finds, then the built-in defaults' (shown as
        `builtin`); None when none has one (`what`: the key always in the defaults,
        checked when given)."""
        for layer in self.layers:
            pair = getter(layer.file)
            if pair is not None:
                return AxisResolution(pair, layer.scope, layer.display_path)
        pair = getter(builtin_defaults())
        assert pair is not None or what is None, what
        return None if pair is None else AxisResolution(pair, "built-in", builtin)

    def task_default(self, kind: TaskDefaultKind) -> AxisResolution:
        """The tier/effort implied by complexity `simple`/`complex`, or for `unclassified`."""
        found = self._pair(lambda f: getattr(f.task_defaults, kind), kind)
        assert found is not None, kind
        return found

    def role(self, role: str, loop: str | None = None) -> RoleRoute:
        """The default route of `role` in `loop` (a loop of `LOOP_ROLES`; None: the
        registry's default routing loop, the crew loop's). A role no profile nor
        crewbook's defaults name (a family registered outside crewbook) gets the tier
        and effort of an unclassified task."""
        from ..families import default_routing_loop

        loop = loop or default_routing_loop()
        if loop not in LOOP_ROLES:
            raise RoutingError(
                f"no loop {loop!r}"
                + (did_you_mean(loop, LOOP_ROLES) or f"; loops: {', '.join(LOOP_ROLES)}")
            )
        if role not in LOOP_ROLES[loop]:
            raise RoutingError(
                f"no role {role!r} in the {loop} loop"
                + (
                    did_you_mean(role, LOOP_ROLES[loop])
                    or f"; roles: {', '.join(LOOP_ROLES[loop])}"
                )
            )
        shipped = family_roles_file(loop)
        found = self._pair(lambda f: f.roles.get(loop, role), None,
                           DEFAULTS_DISPLAY if shipped is None else shipped[1]) \
            or self.task_default("unclassified")
        return RoleRoute(
            loop,
            role,
            found.pair.tier,
            found.pair.effort,
            found.source,
            found.where,
            self.cell(found.pair.tier, found.pair.effort),
        )

    def roles(self) -> list[RoleRoute]:
        """Every role of every loop routed by role, the default routing loop first."""
        return [self.role(r, loop) for loop, roles in LOOP_ROLES.items() for r in roles]

    # -- data and display ------------------------------------------------------------------

    def frame(self) -> pd.DataFrame:
        """One row per cell: tier, effort, model, setting, native, native_text, note,
        source, source_path."""
        from .frames import resolutions_frame

        return resolutions_frame(list(self.cells().values()), family=self.family)

    def roles_frame(self) -> pd.DataFrame:
        """One row per role: loop, role, tier, effort, source, source_path, model,
        native_text, cell_source."""
        from .frames import roles_frame

        return roles_frame(self.roles())

    def matrix(self) -> RoutingMatrix:
        """Tier × effort → `model · native`, coloured by model; framed cells come from the
        project profile."""
        from .graph import capability_matrix

        cells = self.cells()
        return capability_matrix(
            {k: r.capability for k, r in cells.items()},
            title=f"Routing profile ({self.family or 'no family'})",
            marked={k for k, r in cells.items() if r.source == "project"},
            note="framed: from the project profile",
        )

    def role_matrix(self) -> RoutingMatrix:
        """Role × tier/effort → model, for the crew and delivery roles."""
        from .graph import role_matrix

        return role_matrix(self.roles(), title=f"Role routing ({self.family or 'no family'})")

    def to_dict(self) -> dict[str, Any]:
        """The shape of `crewbook routing show --json`."""
        return {
            "family": self.family,
            "exists": self.exists,
            "layers": [
                {"scope": x.scope, "path": x.display_path, "family": x.file.family}
                for x in self.layers
            ],
            "preset": self.preset.display_path if self.preset else None,
            "matrix": {t: {e: self.cell(t, e).to_dict() for e in EFFORTS} for t in TIERS},
            "roles": [r.to_dict() for r in self.roles()],
            "task_defaults": {
                k: {
                    "tier": d.pair.tier,
                    "effort": d.pair.effort,
                    "source": d.source,
                    "source_path": d.where,
                }
                for k in ("unclassified", "simple", "complex")
                for d in [self.task_default(k)]
            },
            "hint": None if self.exists else self.hint,
        }

    def _sources_lines(self) -> list[str]:
        by_source: dict[str, list[str]] = {}
        for (t, e), res in self.cells().items():
            key = f"{res.source} {res.where}" if res.where else res.source
            by_source.setdefault(key, []).append(f"{t}/{e}")
        return [
            f"  {key}: " + ("all 9 cells" if len(cells) == 9 else ", ".join(cells))
            for key, cells in by_source.items()
        ]

    def __str__(self) -> str:
        if not self.exists:
            return f"Routing profile: none.\n{self.hint}"
        lines = [f"Routing profile: family {self.family or '(none named)'}"]
        lines += [f"  {x.scope}: {x.display_path}" for x in self.layers]
        if self.preset_problem:
            lines.append(f"  preset: {self.preset_problem}")
        lines += ["", self.matrix().to_markdown().rstrip(), "", "Cells from:"]
        lines += self._sources_lines()
        lines += ["", "Roles (tier/effort from [source]):"]
        for r in self.roles():
            cap = r.capability.label if r.capability else "(no model)"
            lines.append(
                f"  {r.loop:<8} {r.role:<19} {f'{r.tier}/{r.effort}':<15} [{r.source}]  {cap}"
            )
        lines += ["", "Task defaults (what complexity alone implies):"]
        for kind in ("unclassified", "simple", "complex"):
            d = self.task_default(kind)
            lines.append(f"  {kind:<12} {d.pair!s:<15} [{d.source}]")
        return "\n".join(lines)

    def __repr__(self) -> str:
        scopes = ", ".join(x.scope for x in self.layers) or "no profile"
        return f"<ActiveProfile family={self.family!r} ({scopes})>"

    def _repr_html_(self) -> str:
        if not self.exists:
            return f"<div><b>Routing profile: none.</b> {html.escape(self.hint)}</div>"
        layers = "".join(
            f"<li>{x.scope}: <code>{html.escape(x.display_path)}</code></li>" for x in self.layers
        )
        sources = "".join(f"<li>{html.escape(s.strip())}</li>" for s in self._sources_lines())
        return (
            f"<div class='crewbook-profile'><p><b>Routing profile</b>: family "
            f"<code>{html.escape(self.family or '(none named)')}</code></p><ul>{layers}</ul>"
            f"{self.matrix()._repr_html_()}<p>Cells from:</p><ul>{sources}</ul>"
            f"{self.role_matrix()._repr_html_()}</div>"
        )


def _check_pair(tier: object, effort: object) -> None:
    problems = [
        Problem("invalid_value", msg, key=key)
        for key, msg in (
            ("tier", check_axis("capability_tier", tier)),
            ("effort", check_axis("effort_level", effort)),
        )
        if msg
    ]
    if problems:
        raise RoutingError("invalid tier or effort", problems)


def provider_profile_show(project: ProjectLike = None) -> ActiveProfile:
    """The active profile, with where each value comes from (project > global > preset).

    `project` defaults to the project around the current folder, if any. Read-only.
    """
    proj = project_or_none(project)
    layers = profile_layers(proj)
    searched = []
    if proj is not None:
        searched.append(proj.relative(project_profile_path(proj)))
    searched.append(display_home_path(global_profile_path()))
    family = next((x.file.family for x in layers if x.file.family), None)
    preset: Preset | None = None
    problem = None
    if family is not None:
        try:
            preset = get_preset(family)
        except PresetNotFoundError as exc:
            problem = f"{exc}; cells the profiles leave out have no model"
    return ActiveProfile(family, tuple(layers), preset, proj, tuple(searched), problem)
