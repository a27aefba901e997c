"""The delivery role catalogue (SPEC C1): seven roles, their step and their tools, as data.

The built-in catalogue is ``builtin/roles.yaml``. A project may change the tools of
any role in ``_codev/delivery.yaml``::

    tools:                       # the project's own tools (new names only)
      tickets: {description: open follow-up tickets}
    roles:
      qa: {add: [browser]}       # add / remove tools ...
      explorer: {tools: [read, search]}   # ... or replace the whole set

and never give a writing tool to a role other than the developer (C1: only the
developer may write to the repository), nor the `verdict` tool to a role other than
QA and the reviewer (C4.1): `load_catalogue` refuses such a file with every problem
and the rule it breaks. Views: `RoleCatalogue.frame()` (one row per role),
`tools_frame()` and `permissions()` (a tool × role `Matrix`).
"""

from __future__ import annotations

import functools
import html
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DeliveryError, NotFoundError, did_you_mean
from ..models import parse_model
from ..sources import SourceDoc, parse_yaml, read_yaml
from .checks import catalogue_problems, rule_problems
from .model import (
    PROJECT_FILE,
    CatalogueFile,
    OverridesFile,
    ToolSpec,
)

if TYPE_CHECKING:
    import pandas as pd

    from ..draw.matrix import Matrix

@dataclass(frozen=True)
class Role:
    """A delivery role as the engines use it; `tools_origin` says who set its tools."""

    id: str
    name: str
    names: Mapping[str, str]
    step: str
    stage: str
    writes: bool
    delivery: bool
    coordinator: bool
    anytime: bool
    verdicts: tuple[str, ...]
    mission: str
    tools: tuple[str, ...]
    tools_origin: str = "built-in"

    def display_name(self, lang: str = "en") -> str:
        """The name in `lang`, or in English."""
        return self.names.get(lang, self.name)

    def __repr__(self) -> str:
        return f"<Role {self.id}: {self.step}, {'writes' if self.writes else 'read-only'}>"


@dataclass(frozen=True)
class RoleCatalogue:
    """The delivery roles and tools in force (built-in, or with a project's overrides)."""

    roles: tuple[Role, ...]
    tools: Mapping[str, ToolSpec]
    source: str = "built-in"

    # ------------------------------------------------------------------ lookups
    def __iter__(self) -> Iterator[Role]:
        return iter(self.roles)

    def __len__(self) -> int:
        return len(self.roles)

    def __contains__(self, role_id: object) -> bool:
        try:
            return role_id in self._by_id
        except TypeError:  # not hashable: not a role id
            return False

    @functools.cached_property
    def stages(self) -> dict[str, str]:
        """Each role's stage, by role id (the ledger's ``stage`` of its events; worked out
        once: the catalogue is frozen)."""
        return {r.id: r.stage for r in self.roles}

    @functools.cached_property
    def _by_id(self) -> dict[str, Role]:
        """The roles by id (worked out once: the catalogue is frozen)."""
        return {r.id: r for r in self.roles}

    @property
    def ids(self) -> tuple[str, ...]:
        """Role ids in catalogue order."""
        return tuple(r.id for r in self.roles)

    def role(self, role_id: str) -> Role:
        """The role named `role_id` (`NotFoundError` with the nearest id otherwise)."""
        found = self._by_id.get(role_id)
        if found is not None:
            return found
        raise NotFoundError(f"no delivery role {role_id!r}{did_you_mean(role_id, self.ids)}; "
                            f"roles: {', '.join(self.ids)}")

    __getitem__ = role

    def writers(self) -> tuple[str, ...]:
        """Roles that may change the code (the developer)."""
        return tuple(r.id for r in self.roles if r.writes)

    def judges(self) -> tuple[str, ...]:
        """Roles that give verdicts (QA and the reviewer)."""
        return tuple(r.id for r in self.roles if r.verdicts)

    def can_write(self, role_id: str) -> bool:
        """Whether `role_id` holds a tool that writes to the repository."""
        return any(self.tools[t].writes for t in self.role(role_id).tools)

    def with_overrides(self, overrides: Mapping[str, Any] | OverridesFile,
                       source: str = "<overrides>") -> RoleCatalogue:
        """This catalogue with a project's tool changes (`InvalidInputError` when refused)."""
        if isinstance(overrides, OverridesFile):
            doc = SourceDoc(Path(source), overrides.model_dump(exclude_defaults=True),
                            display_path=source)
        else:
            doc = SourceDoc(Path(source), dict(overrides), display_path=source)
        return _apply(self, doc)

    # -------------------------------------------------------------------- views
    def frame(self) -> pd.DataFrame:
        """One row per role: ``id`` (category), ``name``, ``step``, ``stage``, ``writes``,
        ``delivery``, ``coordinator``, ``anytime`` (bool), ``verdicts``, ``tools`` (text,
        comma separated), ``n_tools`` (Int64), ``tools_origin``, ``mission``."""
        import pandas as pd

        rows = [{
            "id": r.id, "name": r.name, "step": r.step, "stage": r.stage, "writes": r.writes,
            "delivery": r.delivery, "coordinator": r.coordinator, "anytime": r.anytime,
            "verdicts": ", ".join(r.verdicts), "tools": ", ".join(r.tools),
            "n_tools": len(r.tools), "tools_origin": r.tools_origin, "mission": r.mission,
        } for r in self.roles]
        frame = pd.DataFrame(rows)
        frame["id"] = pd.Categorical(frame["id"], categories=list(self.ids))
        for col in ("writes", "delivery", "coordinator", "anytime"):
            frame[col] = frame[col].astype(bool)
        frame["n_tools"] = frame["n_tools"].astype("Int64")
        return frame

    def tools_frame(self) -> pd.DataFrame:
        """One row per tool: ``tool``, ``description``, ``writes``, ``judges`` (bool),
        ``roles`` (text: the roles holding it), ``n_roles`` (Int64)."""
        import pandas as pd

        rows = [{
            "tool": name, "description": spec.description, "writes": spec.writes,
            "judges": spec.judges,
            "roles": ", ".join(r.id for r in self.roles if name in r.tools),
            "n_roles": sum(name in r.tools for r in self.roles),
        } for name, spec in self.tools.items()]
        frame = pd.DataFrame(rows)
        frame["n_roles"] = frame["n_roles"].astype("Int64")
        return frame

    def permission_frame(self) -> pd.DataFrame:
        """Role × tool: 2 the role holds a tool that writes, 1 it holds the tool, 0 not."""
        import pandas as pd

        data = [[(2 if self.tools[t].writes else 1) if t in r.tools else 0 for t in self.tools]
                for r in self.roles]
        frame = pd.DataFrame(data, index=pd.Index(list(self.ids), name="role"),
                             columns=pd.Index(list(self.tools), name="tool"), dtype="int64")
        return frame

    def permissions(self) -> Matrix:
        """The tool × role permission matrix (a heatmap in notebooks, Markdown in text):
        a tool a row, so the roles' seven columns fit a notebook's cell (sixteen tool
        columns did not)."""
        from ..draw.matrix import Matrix

        return Matrix(self.permission_frame().T, title=f"tool × role permissions ({self.source})",
                      labels={2: "writes", 1: "✓", 0: ""}, vmin=0, vmax=2)

    def __repr__(self) -> str:
        return (f"<RoleCatalogue {self.source}: {len(self.roles)} roles, {len(self.tools)} "
                f"tools; writers: {', '.join(self.writers())}>")

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td><b>{html.escape(r.id)}</b></td><td>{html.escape(r.name)}</td>"
            f"<td>{html.escape(r.step)}</td><td>{'yes' if r.writes else 'no'}</td>"
            f"<td>{html.escape(', '.join(r.tools))}</td></tr>" for r in self.roles)
        return ("<table class='crewbook-roles'><caption>delivery roles "
                f"({html.escape(self.source)})</caption><tr><th>role</th><th>name</th>"
                "<th>step</th><th>may change the code</th><th>tools</th></tr>"
                f"{rows}</table>")


# ------------------------------------------------------------------------- loading
@cache
def builtin_catalogue() -> RoleCatalogue:
    """The built-in catalogue (``builtin/roles.yaml``), checked like any other."""
    text = resources.files(__package__).joinpath("builtin/roles.yaml").read_text("utf-8")
    doc = parse_yaml(text, "builtin/roles.yaml",
                     display_path="crewbook/delivery/builtin/roles.yaml")
    return catalogue_from(doc)


def catalogue_from(doc: SourceDoc) -> RoleCatalogue:
    """A catalogue from a parsed catalogue file (`InvalidInputError` listing every problem)."""
    model, problems = parse_model(CatalogueFile, doc)
    if model is None:
        raise DeliveryError(f"the role catalogue {doc.name} is not valid", problems)
    assert isinstance(model, CatalogueFile)
    problems = catalogue_problems(model, doc)
    if problems:
        raise DeliveryError(f"the role catalogue {doc.name} breaks the rules", problems)
    roles = tuple(
        Role(r.id, r.name["en"], dict(r.name), r.step, r.stage, r.writes, r.delivery,
             r.coordinator, r.anytime, r.verdicts, r.mission, r.tools)
        for r in model.roles)
    source = "built-in" if "builtin" in doc.name else doc.name
    return RoleCatalogue(roles, dict(model.tools), source)


def _apply(base: RoleCatalogue, doc: SourceDoc) -> RoleCatalogue:
    model, problems = parse_model(OverridesFile, doc)
    if model is None:
        raise DeliveryError(f"the delivery overrides {doc.name} are not valid", problems)
    assert isinstance(model, OverridesFile)
    tools: dict[str, ToolSpec] = dict(base.tools)
    for name, spec in model.tools.items():
        if name in base.tools:
            problems.append(doc.problem(
                "tool_redefined", f"tool {name!r} is built in; a project may add tools, not "
                "redefine one (its `writes` and `judges` flags are what keep roles safe)",
                ("tools", name)))
        else:
            tools[name] = spec
    roles = {r.id: r for r in base.roles}
    for role_id, change in model.roles.items():
        where: tuple[str | int, ...] = ("roles", role_id)
        if role_id not in roles:
            problems.append(doc.problem(
                "unknown_role", f"no delivery role {role_id!r}{did_you_mean(role_id, roles)}; "
                f"roles: {', '.join(roles)}", where))
            continue
        if change.tools is not None and (change.add or change.remove):
            problems.append(doc.problem(
                "conflicting_keys", "give `tools` (the whole set) or `add`/`remove`, not both",
                where))
            continue
        role = roles[role_id]
        for key, names in (("tools", change.tools or ()), ("add", change.add),
                           ("remove", change.remove)):
            for j, tool in enumerate(names):
                if tool not in tools:
                    problems.append(doc.problem(
                        "unknown_tool", f"unknown tool {tool!r}{did_you_mean(tool, tools)}; "
                        "declare a project tool under `tools:` first", (*where, key, j)))
        if change.tools is not None:
            new = tuple(dict.fromkeys(change.tools))
        else:
            new = tuple(t for t in dict.fromkeys((*role.tools, *change.add))
                        if t not in change.remove)
        problems += rule_problems(role_id, role.writes, bool(role.verdicts), new, tools, doc,
                                   where)
        roles[role_id] = Role(**{**role.__dict__, "tools": new, "tools_origin": doc.name})
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise DeliveryError(f"the delivery overrides {doc.name} are refused", problems)
    return RoleCatalogue(tuple(roles.values()), tools, f"{base.source} + {doc.name}")


def load_catalogue(project: Path | str | None = None,
                   overrides: Mapping[str, Any] | Path | str | None = None) -> RoleCatalogue:
    """The catalogue in force: built in, then ``<project>/_codev/delivery.yaml`` when it
    exists, then `overrides` (a mapping or a YAML file). Refusals raise `InvalidInputError`."""
    catalogue = builtin_catalogue()
    if project is not None:
        path = Path(project) / PROJECT_FILE
        if path.is_file():
            catalogue = _apply(catalogue, read_yaml(path, display_path=PROJECT_FILE))
    if isinstance(overrides, (str, Path)):
        catalogue = _apply(catalogue, read_yaml(Path(overrides)))
    elif overrides is not None:
        catalogue = catalogue.with_overrides(overrides)
    return catalogue
