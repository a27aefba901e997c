"""Provider profiles (SPEC D7): the profile files, and generating one from a preset.

Two files, both optional and both in the profile format (`schemas/routing-profile.json`):

* global: `$CREWBOOK_HOME/profile.yaml` (see `home.py` for the default folder);
* project: `_codev/routing/profile.yaml` in the project.

This module reads and writes them; `active.py` resolves the profile in force. Every
value resolves from the first layer that sets it: project, then global, then the
preset of the profile's family (matrix cells only), then crewbook's defaults
(`routing/defaults.yaml`: role and task defaults). The family is the first one a
profile names (project before global); a profile naming another family is skipped for
matrix cells, so models of two vendors never mix by accident.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..artifacts.project import Project, ProjectLike, as_project
from ..core.atomic import write_atomic
from ..errors import AlreadyExistsError, Problem, RoutingError, did_you_mean
from .axes import (
    EFFORTS,
    LOOP_ROLES,
    SCOPES,
    TIERS,
    Scope,
)
from .files import dump_yaml, load_model
from .home import display_home_path, global_profile_path
from .model import DefaultsFile, ProfileFile, RoleDefaults, defaults_model, profile_model
from .presets import Preset, get_preset

PROJECT_PROFILE = "_codev/routing/profile.yaml"
DEFAULTS_DISPLAY = "<built-in>/routing/defaults.yaml"


def builtin_defaults() -> DefaultsFile:
    """crewbook's role and task defaults, every entry set (read again when the
    registry's routing roles change): the task defaults from `routing/defaults.yaml`,
    each routed family's role defaults from the ``roles.yaml`` of its folder."""
    return _builtin_defaults(defaults_model())


def family_roles_file(loop: str) -> tuple[Path, str] | None:
    """The ``roles.yaml`` of routing loop `loop`'s family folder and how messages show
    it, or None when the family ships none (its roles then route as an unclassified
    task). Found from the family's registry line without importing the family."""
    from ..families import FAMILIES

    entry = FAMILIES.get(loop)
    return None if entry is None else _roles_file_of(entry.family)


@cache
def _roles_file_of(dotted: str) -> tuple[Path, str] | None:
    """`family_roles_file` of the family at ``"module:attribute"`` `dotted` (once:
    routing asks on every route)."""
    from importlib.util import find_spec

    package = dotted.partition(":")[0].rpartition(".")[0]
    spec = find_spec(package) if package else None
    folders = list(spec.submodule_search_locations or ()) if spec is not None else []
    for folder in folders:
        path = Path(folder) / "roles.yaml"
        if path.is_file():
            return path, f"<built-in>/{package.rpartition('.')[2]}/roles.yaml"
    return None


@cache
def _builtin_defaults(model: type[DefaultsFile]) -> DefaultsFile:
    path = Path(str(resources.files(__package__).joinpath("defaults.yaml")))
    defaults = load_model(path, model, DEFAULTS_DISPLAY, "routing defaults")
    roles_model = model.model_fields["roles"].annotation
    assert isinstance(roles_model, type)
    assert issubclass(roles_model, RoleDefaults)
    groups: dict[str, Any] = {}
    for loop in LOOP_ROLES:
        found = family_roles_file(loop)
        group = roles_model.group_model(loop)
        if found is None or group is None:
            continue  # a family that ships no defaults: routed as an unclassified task
        groups[loop] = load_model(found[0], group, found[1], f"{loop} role defaults")
    roles = roles_model.model_validate(groups)
    for loop in groups:
        for role in LOOP_ROLES[loop]:
            if roles.get(loop, role) is None:  # pragma: no cover - data guard
                raise AssertionError(f"{loop} role defaults: no default for {role}")
    return defaults.model_copy(update={"roles": roles})


def project_profile_path(project: Project) -> Path:
    """Where the project profile lives: `_codev/routing/profile.yaml`."""
    return project.codev / "routing" / "profile.yaml"


@dataclass(frozen=True, eq=False)
class ProfileLayer:
    """One profile file that exists, with its scope."""

    scope: Scope
    path: Path
    display_path: str
    file: ProfileFile

    def __repr__(self) -> str:
        return f"<ProfileLayer {self.scope} {self.display_path} (family {self.file.family})>"


def load_profile(path: Path | str, display_path: str | None = None) -> ProfileFile:
    """One profile file, strictly (every problem, with file:line)."""
    path = Path(path)
    return load_model(path, profile_model(), display_path or str(path), "profile")


def profile_layers(project: Project | None) -> list[ProfileLayer]:
    """The profile files that exist, project first."""
    layers = []
    if project is not None:
        path = project_profile_path(project)
        if path.exists():
            shown = project.relative(path)
            layers.append(ProfileLayer("project", path, shown, load_profile(path, shown)))
    path = global_profile_path()
    if path.exists():
        shown = display_home_path(path)
        layers.append(ProfileLayer("global", path, shown, load_profile(path, shown)))
    return layers


# -- init ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProfileInit:
    """What `provider_profile_init` wrote, and a short best-practice advice."""

    family: str
    scope: Scope
    path: Path
    display_path: str
    preset: str
    overwritten: bool
    advice: str

    def to_dict(self) -> dict[str, Any]:
        """`{"family", "scope", "path", "preset", "overwritten", "advice"}`."""
        return {
            "family": self.family,
            "scope": self.scope,
            "path": self.display_path,
            "preset": self.preset,
            "overwritten": self.overwritten,
            "advice": self.advice,
        }

    def __str__(self) -> str:
        verb = "Rewrote" if self.overwritten else "Wrote"
        return (
            f"{verb} the {self.scope} profile {self.display_path} from {self.preset}.\n"
            f"{self.advice}"
        )

    def __repr__(self) -> str:
        return f"<ProfileInit {self.scope} {self.family!r} at {self.display_path}>"

    def _repr_html_(self) -> str:
        verb = "Rewrote" if self.overwritten else "Wrote"
        return (
            f"<div class='crewbook-profile-init'><p>{verb} the <b>{self.scope}</b> profile "
            f"<code>{html.escape(self.display_path)}</code> from {html.escape(self.preset)}."
            f"</p><p><small>{html.escape(self.advice)}</small></p></div>"
        )


def _advice(scope: Scope, family: str) -> str:
    first = (
        "Keep this global profile as your everyday defaults; for one project, put only the "
        f"cells and roles you change in {PROJECT_PROFILE} — the rest is inherited."
        if scope == "global"
        else "This project profile wins over your global one, key by key: delete what you "
        "do not mean to override so that it keeps following your global profile."
    )
    return (
        f"{first} Classify tasks by complexity first and set a tier or an effort only to "
        "correct it; change a model in the profile, never in the task. A route is a "
        "suggestion: check it with `crewbook routing route TASK` before a long run, and "
        f"regenerate with `crewbook routing init {family} --force` after a preset update."
    )


def profile_data(preset: Preset) -> dict[str, Any]:
    """The full profile generated from `preset`: its matrix plus crewbook's defaults."""
    defaults = builtin_defaults()
    return {
        "family": preset.family,
        "matrix": {
            t: {e: preset.cell(t, e).model_dump(exclude_none=True) for e in EFFORTS} for t in TIERS
        },
        "roles": {loop: roles for loop, roles  # a loop with no built-in default: left out
                  in defaults.roles.model_dump(by_alias=True, exclude_none=True).items()
                  if roles},
        "task_defaults": defaults.task_defaults.model_dump(exclude_none=True),
    }


def provider_profile_init(
    family: str,
    scope: Scope | str = "global",
    force: bool = False,
    project: ProjectLike = None,
) -> ProfileInit:
    """Write the `scope` profile (tier × effort matrix and role defaults) from `family`'s preset.

    Refuses to overwrite an existing profile without `force` (the file is left as it
    was, and the error names it). Returns where it wrote and a short best-practice advice.
    """
    if scope not in SCOPES:
        raise RoutingError(
            "invalid scope",
            [
                Problem(
                    "invalid_value",
                    f"scope {scope!r} is not one of {', '.join(SCOPES)}"
                    + did_you_mean(str(scope), SCOPES),
                    key="scope",
                )
            ],
        )
    preset = get_preset(family)
    if scope == "project":
        proj = as_project(project)
        path = project_profile_path(proj)
        shown = proj.relative(path)
    else:
        path = global_profile_path()
        shown = display_home_path(path)
    existed = path.exists()
    if existed and not force:
        raise AlreadyExistsError(
            f"a {scope} profile already exists at {shown}; it was left unchanged. Pass "
            f"force=True to regenerate it from preset {preset.family!r}, or edit it",
            path,
        ).naming("force")
    source = f"the {preset.source} preset {preset.family!r}"
    header = (
        f"crewbook routing profile ({scope}), generated from {source}.\n"
        "Edit freely. matrix: tier x effort -> model and native effort; roles: the tier and\n"
        "effort each role gets; task_defaults: what a task's complexity alone implies.\n"
        "Leave a key out to inherit it: project profile -> global profile -> preset ->\n"
        "crewbook defaults. Format: schemas/routing-profile.json (crewbook docs/routing.md)."
    )
    write_atomic(path, dump_yaml(profile_data(preset), header))
    return ProfileInit(
        family=preset.family,
        scope=scope,
        path=path,
        display_path=shown,
        preset=source,
        overwritten=existed,
        advice=_advice(scope, preset.family),
    )
