"""`diff_profiles(a, b)`: two routing profiles (SPEC D7–D9) compared cell by cell.

Each side is a profile file (`profile.yaml`, resolved over the preset of its family,
as `crewbook routing show` would with that file alone), a preset file, a family name
(``claude``), a `Preset` or an `ActiveProfile` (`provider_profile_show()`).

Sections of the result:

* ``cell``: each tier × effort whose model or native effort differs;
* ``role``: each crew or delivery role whose default tier, effort, model or native
  effort differs;
* ``task_default``: what complexity alone implies (`unclassified`, `simple`, `complex`);
* ``task``: with ``change=``, every task of that change that would be routed
  differently (its stored class resolved through both profiles).

`matrix()` is the side-by-side matrix with the differing cells framed; the drawing
links each cell to its model, both versions overlaid.
"""

from __future__ import annotations

import html
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..artifacts.change import Change
from ..artifacts.project import ProjectLike, as_project
from ..draw.model import Edge, GraphModel, Node
from ..errors import PresetNotFoundError, RoutingError
from ..routing.active import ActiveProfile
from ..routing.axes import EFFORTS, TIERS
from ..routing.model import Capability
from ..routing.presets import Preset, get_preset, load_preset
from ..routing.profiles import ProfileLayer, load_profile
from ..sources import read_yaml
from .core import DiffEntry, diff_records
from .graph import overlay
from .result import Diff

if TYPE_CHECKING:

    from ..routing.graph import RoutingMatrix

ProfileLike = ActiveProfile | Preset | str | Path


def _cap_record(cap: Capability | None) -> dict[str, Any]:
    return {"model": cap.model if cap else None, "native": cap.native_text if cap else None}


def as_profile(item: ProfileLike) -> tuple[str, ActiveProfile]:
    """(a label, the profile) for a profile file, a preset file or family, or a profile."""
    if isinstance(item, ActiveProfile):
        return "profile" + (f" ({item.family})" if item.family else ""), item
    if isinstance(item, Preset):
        return item.family, ActiveProfile(item.family, (), item, None, (item.display_path,))
    path = Path(item)
    if (not path.exists() and isinstance(item, str) and os.sep not in item
            and path.suffix not in (".yaml", ".yml")):
        return as_profile(get_preset(item))
    if is_preset_file(path):
        return as_profile(load_preset(path, display_path=str(path)))
    file = load_profile(path, str(path))
    layer = ProfileLayer("project", path, str(path), file)
    preset, problem = None, None
    if file.family is not None:
        try:
            preset = get_preset(file.family)
        except (PresetNotFoundError, RoutingError) as exc:  # compare what the file sets
            problem = f"{exc}; cells the profile leaves out have no model"
    return str(path), ActiveProfile(file.family, (layer,), preset, None, (str(path),), problem)


def is_preset_file(path: Path) -> bool:
    """Whether a YAML file is a preset (it names its native `setting`) rather than a profile."""
    doc = read_yaml(path, error_cls=RoutingError, display_path=str(path))
    return isinstance(doc.data, dict) and "setting" in doc.data


def cell_records(profile: ActiveProfile) -> dict[str, dict[str, Any]]:
    """``tier/effort`` → the model and native effort it resolves to."""
    return {f"{t}/{e}": _cap_record(profile.cell(t, e).capability) for t in TIERS for e in EFFORTS}


def role_records(profile: ActiveProfile) -> dict[str, dict[str, Any]]:
    """``loop.role`` → its default tier, effort, model and native effort."""
    return {f"{r.loop}.{r.role}": {"tier": r.tier, "effort": r.effort,
                                   **_cap_record(r.capability)} for r in profile.roles()}


def default_records(profile: ActiveProfile) -> dict[str, dict[str, Any]]:
    """`unclassified` / `simple` / `complex` → the tier and effort it implies."""
    out = {}
    for kind in ("unclassified", "simple", "complex"):
        pair = profile.task_default(kind).pair
        out[kind] = {"tier": pair.tier, "effort": pair.effort}
    return out


def task_records(profile: ActiveProfile, change: Change | str | Path,
                 project: ProjectLike) -> dict[str, dict[str, Any]]:
    """Task id → its route (tier, effort, model, native) through `profile`."""
    from ..artifacts.change import open_change
    from ..routing.routes import route_for
    from ..routing.task_classes import TaskRef, load_task_classes, stored_class

    proj = as_project(project)
    ch = open_change(change, proj)
    classes = load_task_classes(proj)
    out = {}
    for item in ch.status().tasks:
        ref = TaskRef(item.id, ch.name, item)
        route = route_for(ref, stored_class(classes, ref), profile)
        out[item.id] = {"tier": route.tier, "effort": route.effort,
                        **_cap_record(route.capability)}
    return out


def profile_graph(name: str, profile: ActiveProfile) -> GraphModel:
    """Each tier × effort cell linked to the model it routes to."""
    model = GraphModel(name, title=f"routing {name}")
    for rank, tier in enumerate(TIERS):
        for effort in EFFORTS:
            cap = profile.cell(tier, effort).capability
            cell = f"cell:{tier}/{effort}"
            model.add_node(Node(cell, label=f"{tier}/{effort}", kind="stage", rank=rank,
                                detail=cap.native_text if cap else "no model"))
            if cap is not None:
                target = f"model:{cap.model}"
                if target not in model.nodes:
                    model.add_node(Node(target, label=cap.model, kind="role", rank=len(TIERS)))
                model.add_edge(Edge(cell, target, "flow"))
    return model


@dataclass(frozen=True, eq=False, repr=False)
class ProfileDiff(Diff):
    """Two routing profiles compared (`diff_profiles`)."""

    kind: ClassVar[str] = "profile"

    profile_a: ActiveProfile | None = None
    profile_b: ActiveProfile | None = None
    change: str | None = None

    @property
    def rerouted_tasks(self) -> list[str]:
        """Ids of the tasks that would be routed differently."""
        return list(dict.fromkeys(e.item for e in self.entries if e.section == "task"))

    def matrix(self) -> RoutingMatrix:
        """Tier × effort, one column per side, the differing cells framed."""
        from ..routing.graph import ProfileComparison

        sides = [p for p in (self.profile_a, self.profile_b) if p is not None]
        names = (self.a, self.b if self.b != self.a else f"{self.b} (b)")
        cells = tuple({(t, e): p.cell(t, e).capability for t in TIERS for e in EFFORTS}
                      for p in sides)
        return ProfileComparison(names, cells).matrix()

    def extra_dict(self) -> dict[str, Any]:
        return {"change": self.change, "rerouted_tasks": self.rerouted_tasks}

    def extra_html(self) -> str:
        try:
            return self.matrix()._repr_html_()
        except Exception as exc:  # the display must never raise
            return (f"<p>(no matrix: {html.escape(type(exc).__name__)}: "
                    f"{html.escape(str(exc))})</p>")


def diff_profiles(
    a: ProfileLike,
    b: ProfileLike,
    *,
    change: Change | str | Path | None = None,
    project: ProjectLike = None,
    labels: tuple[str, str] | None = None,
) -> ProfileDiff:
    """Compare routing profile `a` (before) with `b` (after): a `ProfileDiff`.

    With `change` (a name or folder in `project`), the tasks of that change whose route
    differs are listed too (section ``task``), each resolved from its stored class.
    """
    name_a, pa = as_profile(a)
    name_b, pb = as_profile(b)
    label_a, label_b = labels or (name_a, name_b)
    if labels is None and label_a == label_b:
        label_a, label_b = f"{name_a} (a)", f"{name_b} (b)"
    cells = diff_records(cell_records(pa), cell_records(pb))
    entries: list[DiffEntry] = cells.entries("cell")
    entries += diff_records(role_records(pa), role_records(pb)).entries("role")
    entries += diff_records(default_records(pa), default_records(pb)).entries("task_default")
    change_name = None
    if change is not None:
        tasks = diff_records(task_records(pa, change, project), task_records(pb, change, project))
        entries += tasks.entries("task")
        change_name = change.name if isinstance(change, Change) else Path(change).name
    changed = {f"cell:{k}": list(v) for k, v in cells.changed.items() if "native" in v}
    drawing = overlay(profile_graph(label_a, pa), profile_graph(label_b, pb), changed=changed,
                      name="profile-diff", title=f"routing {label_a} → {label_b}")
    return ProfileDiff(label_a, label_b, tuple(entries), drawing, pa, pb, change_name)
