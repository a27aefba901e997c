"""The file models of SPEC D7–D8: presets, profiles and task classes.

* a **preset** (`routing/presets/<family>.yaml`, or `$CREWBOOK_HOME/presets/<family>.yaml`)
  gives, for every tier × effort, the concrete model and its native effort setting;
* a **profile** (`$CREWBOOK_HOME/profile.yaml`, `_codev/routing/profile.yaml`) is
  generated from a preset and edited by hand; any part may be left out, and is then
  taken from the next layer (project → global → preset → built-in defaults);
* **task classes** (`_codev/routing/tasks.yaml`) hold the axes each task was given.

`schemas/routing-*.json` are generated from these classes (`format_models`).
"""

from __future__ import annotations

import re
from functools import cache
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from ..families import routing_roles
from ..models import FileModel, KebabId, Text
from .axes import (
    EFFORTS,
    TIERS,
    Complexity,
    Effort,
    NativeSetting,
    ReasoningEffort,
    Tier,
)

TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_MODEL_NAME = r"^\S+$"
F = TypeVar("F", bound=FileModel)


def _task_id(value: str) -> str:
    if not TASK_ID.match(value):
        raise PydanticCustomError(
            "invalid_id",
            "task id {value!r} must start with a letter or digit and hold only letters, "
            "digits, '.', '_' and '-' (at most 64), such as 'TSK-03' or '1.2'",
            {"value": value},
        )
    return value


TaskId = Annotated[
    str,
    Field(strict=True, json_schema_extra={"pattern": TASK_ID.pattern}),
    AfterValidator(_task_id),
]


def _model_name(value: str) -> str:
    if not re.match(_MODEL_NAME, value):
        raise PydanticCustomError(
            "invalid_value",
            "model name {value!r} holds spaces; write it exactly as the provider's API "
            "expects it, such as 'claude-sonnet-4-5'",
            {"value": value},
        )
    return value


ModelName = Annotated[
    str,
    Field(
        strict=True,
        min_length=1,
        json_schema_extra={"pattern": _MODEL_NAME},
        description="The model name exactly as the provider's API expects it",
    ),
    AfterValidator(_model_name),
]
Note = Annotated[str, Field(strict=True, min_length=1)]


class Capability(FileModel):
    """A concrete capability: a model and its native effort setting (at most one knob)."""

    model: ModelName
    reasoning_effort: ReasoningEffort | None = Field(
        default=None,
        description="A named reasoning effort (OpenAI `reasoning_effort`)",
    )
    thinking_budget: Annotated[int, Field(strict=True, ge=-1, le=100_000_000)] | None = Field(
        default=None,
        description="Most tokens the model may spend thinking; 0 = thinking off, "
        "-1 = the model decides (Gemini)",
    )
    note: Note | None = Field(
        default=None, description="One line: what this native setting means here"
    )

    @model_validator(mode="after")
    def _one_knob(self) -> Capability:
        if self.reasoning_effort is not None and self.thinking_budget is not None:
            raise PydanticCustomError(
                "conflicting_keys",
                "give either reasoning_effort or thinking_budget, not both: a family has "
                "one native effort setting",
            )
        return self

    @property
    def setting(self) -> NativeSetting:
        """Which native knob the cell uses."""
        if self.reasoning_effort is not None:
            return "reasoning_effort"
        if self.thinking_budget is not None:
            return "thinking_budget"
        return "none"

    @property
    def native(self) -> str | int | None:
        """The native value: an effort name, a budget in tokens, or None."""
        return self.reasoning_effort if self.reasoning_effort is not None else self.thinking_budget

    @property
    def native_text(self) -> str:
        """The native setting in a few words (`reasoning high`, `thinking 16,000 tok`)."""
        if self.reasoning_effort is not None:
            return f"reasoning {self.reasoning_effort}"
        if self.thinking_budget is None:
            return "no effort knob"
        if self.thinking_budget == 0:
            return "thinking off"
        if self.thinking_budget < 0:
            return "thinking: model decides"
        return f"thinking {self.thinking_budget:,} tok"

    @property
    def route_key(self) -> tuple[str, str | None, int | None]:
        """What a route depends on (model and native setting, not the note)."""
        return (self.model, self.reasoning_effort, self.thinking_budget)

    @property
    def label(self) -> str:
        """`model · native` as matrix cells show it."""
        return f"{self.model} · {self.native_text}"

    def to_dict(self) -> dict[str, Any]:
        """`{"model", "setting", "native", "native_text", "note"}`."""
        return {
            "model": self.model,
            "setting": self.setting,
            "native": self.native,
            "native_text": self.native_text,
            "note": self.note,
        }


class PresetCell(Capability):
    """A preset cell: like a profile cell, but its one-line note is required."""

    note: Note = Field(description="One line: what this native setting means here")


class PresetTier(FileModel):
    """The three efforts of one tier, in a preset (all required)."""

    low: PresetCell
    medium: PresetCell
    high: PresetCell


class PresetMatrix(FileModel):
    """Tier × effort → capability, complete."""

    deep: PresetTier = Field(description="The most capable models, for hard reasoning")
    standard: PresetTier = Field(description="The everyday workhorse")
    light: PresetTier = Field(description="Fast and cheap, for simple work")

    def cell(self, tier: Tier, effort: Effort) -> PresetCell:
        """The cell at `tier` × `effort`."""
        cell: PresetCell = getattr(getattr(self, tier), effort)
        return cell


class PresetFile(FileModel):
    """A provider preset (D7): one family's tier × effort matrix."""

    family: KebabId | None = Field(
        default=None, description="The family name; defaults to (and must match) the file name"
    )
    description: Text = Field(default="", description="One line on the family")
    setting: NativeSetting = Field(
        description="The family's native effort knob: reasoning_effort, thinking_budget, or none"
    )
    setting_note: Note = Field(description="One line: what the native setting means")
    matrix: PresetMatrix


class ProfileTier(FileModel):
    """The efforts of one tier, in a profile (each optional)."""

    low: Capability | None = None
    medium: Capability | None = None
    high: Capability | None = None


class ProfileMatrix(FileModel):
    """Tier × effort → capability; a missing cell comes from the next layer."""

    deep: ProfileTier = Field(default_factory=ProfileTier)
    standard: ProfileTier = Field(default_factory=ProfileTier)
    light: ProfileTier = Field(default_factory=ProfileTier)

    def cell(self, tier: Tier, effort: Effort) -> Capability | None:
        """The cell at `tier` × `effort`, or None when this file leaves it out."""
        cell: Capability | None = getattr(getattr(self, tier), effort)
        return cell

    def cells(self) -> dict[tuple[Tier, Effort], Capability]:
        """The cells this file sets."""
        out = {}
        for tier in TIERS:
            for effort in EFFORTS:
                cell = self.cell(tier, effort)
                if cell is not None:
                    out[(tier, effort)] = cell
        return out


class AxisPair(FileModel):
    """A tier and an effort."""

    tier: Tier
    effort: Effort

    def __str__(self) -> str:
        return f"{self.tier}/{self.effort}"


class RoleDefaults(FileModel):
    """The tier and effort each role gets by default, by routing loop: one optional
    mapping per family routed by role, of its roles (`role_defaults_model` makes the
    fields from the registry; this base has none)."""

    def get(self, loop: str, role: str) -> AxisPair | None:
        """The entry for `role` of `loop` (loop and role ids as written in files), or
        None (also for a loop these defaults have no group for)."""
        group = _keyed(self, loop)
        value = None if group is None else _keyed(group, role)
        return value if isinstance(value, AxisPair) else None

    @classmethod
    def group_model(cls, loop: str) -> type[BaseModel] | None:
        """The model of `loop`'s group of roles (as written in files), or None."""
        name = _names_of(cls).get(loop)
        kind = None if name is None else cls.model_fields[name].annotation
        return kind if isinstance(kind, type) and issubclass(kind, BaseModel) else None


def _keyed(model: BaseModel, key: str) -> Any:
    """The value of `model`'s field written `key` in files (its alias, else its name)."""
    name = _names_of(type(model)).get(key)
    return None if name is None else getattr(model, name)


@cache
def _names_of(model: type[BaseModel]) -> dict[str, str]:
    """File key (alias, else name) → field name, once per class (routing asks often)."""
    return {info.alias or name: name for name, info in model.model_fields.items()}


def _field(key: str, kind: Any, **default: Any) -> tuple[Any, Any]:
    """A field for file key `key` (an alias when it is no Python name, as 'web-tester')."""
    alias = None if key.isidentifier() else key
    return (kind, Field(alias=alias, **default))


def _name(key: str) -> str:
    return key if key.isidentifier() else re.sub(r"\W", "_", key)


@cache
def _role_defaults_of(loops: tuple[tuple[str, tuple[str, ...]], ...]) -> type[RoleDefaults]:
    from pydantic import create_model

    groups: dict[str, Any] = {}
    for loop, roles in loops:
        title = "".join(part.title() for part in re.split(r"\W|_", loop))
        group = create_model(  # type: ignore[call-overload]
            f"{title}Roles",
            __base__=FileModel, __module__=__name__,
            __doc__=f"Default tier/effort of the {loop} loop's roles.",
            **{_name(r): _field(r, AxisPair | None, default=None) for r in roles})
        groups[_name(loop)] = _field(loop, group, default_factory=group)
    made: type[RoleDefaults] = create_model("RoleDefaults", __base__=RoleDefaults,
                                            __module__=__name__, **groups)
    made.__doc__ = "The tier and effort each role gets by default, by loop."
    return made


def role_defaults_model() -> type[RoleDefaults]:
    """`RoleDefaults` with a group per routing loop of the registry
    (`crewbook.families.routing_roles`: each family's registry line names its roles), so
    a family registered later has its section in profiles too (made once per set of
    routing roles)."""
    return _role_defaults_of(tuple(routing_roles().items()))


class TaskDefaults(FileModel):
    """Tier/effort a task gets from its complexity alone, or with no class at all."""

    unclassified: AxisPair | None = Field(default=None, description="A task with no axis set")
    simple: AxisPair | None = Field(default=None, description="Implied by complexity simple")
    complex: AxisPair | None = Field(default=None, description="Implied by complexity complex")


class ProfileFile(FileModel):
    """A provider profile (D7): global or project; every part optional."""

    family: KebabId | None = Field(
        default=None, description="The preset family the matrix comes from"
    )
    matrix: ProfileMatrix = Field(default_factory=ProfileMatrix)
    roles: RoleDefaults = Field(default_factory=RoleDefaults)
    task_defaults: TaskDefaults = Field(default_factory=TaskDefaults)


class DefaultsFile(FileModel):
    """crewbook's own role and task defaults: `routing/defaults.yaml` (the task
    defaults) with each routed family's ``roles.yaml`` (its roles')."""

    roles: RoleDefaults = Field(default_factory=RoleDefaults)
    task_defaults: TaskDefaults


@cache
def _with_roles(base: type[F], roles: type[RoleDefaults]) -> type[F]:
    from pydantic import create_model

    field = Field(default_factory=roles)
    made: type[F] = create_model(base.__name__, __base__=base, __module__=__name__,
                                 roles=(roles, field))
    made.__doc__ = base.__doc__
    return made


def profile_model() -> type[ProfileFile]:
    """`ProfileFile` with the role groups of the families registered now."""
    return _with_roles(ProfileFile, role_defaults_model())


def defaults_model() -> type[DefaultsFile]:
    """`DefaultsFile` with the role groups of the families registered now."""
    return _with_roles(DefaultsFile, role_defaults_model())


class TaskClass(FileModel):
    """The routing axes of one task (D8); at least one is set."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    complexity: Complexity | None = None
    capability_tier: Tier | None = None
    effort_level: Effort | None = None

    @model_validator(mode="after")
    def _not_empty(self) -> TaskClass:
        if self.complexity is None and self.capability_tier is None and self.effort_level is None:
            raise PydanticCustomError(
                "empty_class",
                "a task class needs at least one of complexity, capability_tier, effort_level",
            )
        return self

    def to_dict(self) -> dict[str, str]:
        """The axes that are set."""
        return {k: v for k, v in self.model_dump().items() if v is not None}

    def __str__(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.to_dict().items())


class TaskClassesFile(FileModel):
    """`_codev/routing/tasks.yaml`: task classes by change and task id, and free ids."""

    changes: dict[KebabId, dict[TaskId, TaskClass]] = Field(
        default_factory=dict, description="Change name → task id → its class"
    )
    tasks: dict[TaskId, TaskClass] = Field(
        default_factory=dict, description="Task ids not tied to a change → class"
    )


def format_models() -> dict[str, type[BaseModel]]:
    """File name in `schemas/` → the model it describes (for `crewbook.formats`)."""
    return {
        "routing-preset.json": PresetFile,
        "routing-profile.json": profile_model(),
        "routing-tasks.json": TaskClassesFile,
    }
