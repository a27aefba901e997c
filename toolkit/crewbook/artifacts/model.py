"""The file models of SPEC A: `schema.yaml`, `_codev/config.yaml` and `change.yaml`.

These describe what a file may say (A3, A7, A8); rules that need the whole file or
the disk (unique ids, dependencies, cycles, templates) live in `validate.py`.
`schemas/codev-*.json` are generated from these classes (`python -m crewbook.formats`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from ..models import FileModel, KebabId, RelativeFile, RelativePath, Text


class RoleName(FileModel):
    """Display names by language code; `en` is required and used as the fallback."""

    model_config = ConfigDict(extra="allow", frozen=True)
    __pydantic_extra__: dict[str, str] = Field(init=False)

    en: Text = Field(min_length=1, description="English name, used for languages without one")

    def for_language(self, code: str) -> str:
        """The name in language `code`, or the English one."""
        extra = self.__pydantic_extra__ or {}
        return extra.get(code, self.en) if code != "en" else self.en

    @property
    def languages(self) -> dict[str, str]:
        """Every name by language code, English first."""
        return {"en": self.en, **(self.__pydantic_extra__ or {})}


class ArtifactRole(FileModel):
    """The role in charge of an artifact (A7)."""

    id: KebabId = Field(
        description="Role id: kebab-case, unique in the schema, not a built-in step role"
    )
    name: RoleName = Field(description="Display names by language code; `en` is required")
    question: Text = Field(min_length=1, description="The question the role answers")
    done_when: tuple[Text, ...] = Field(
        default=(), description="Criteria checked before moving on (origin `schema:<name>`)"
    )


class ArtifactSpec(FileModel):
    """One artifact of a change (A3)."""

    id: KebabId = Field(description="Artifact id, kebab-case, unique in the schema")
    generates: RelativePath = Field(
        description="Output path relative to the change folder, or a glob such as `specs/**/*.md`"
    )
    description: Text | None = Field(
        default=None, description="Short description shown to the agent"
    )
    template: RelativeFile | None = Field(
        default=None, description="Template file name, looked up in the schema's `templates/`"
    )
    instruction: Text | None = Field(default=None, description="Guidance for the agent writing it")
    requires: tuple[KebabId, ...] = Field(
        default=(), description="Ids of the artifacts that must exist first"
    )
    role: ArtifactRole | None = Field(default=None, description="The role in charge (A7)")


class ApplySpec(FileModel):
    """When implementation may start, and which file tracks it (A3, A6)."""

    requires: tuple[KebabId, ...] = Field(
        description="Artifacts that must exist before implementation starts"
    )
    tracks: RelativeFile = Field(
        description="File whose checkboxes (`- [ ]`, `- [x]`) track implementation"
    )
    instruction: Text | None = Field(default=None, description="Guidance for the implementation")


class SchemaFile(FileModel):
    """`_codev/schemas/<name>/schema.yaml`: how a change is planned (A3)."""

    model_config = ConfigDict(
        title="crewbook artifact schema (schema.yaml)",
    )

    name: KebabId = Field(description="Schema name, kebab-case; must equal its folder name")
    version: Annotated[int, Field(strict=True, gt=0, le=1_000_000)] = Field(
        default=1, description="Version of the schema format, 1 by default (at most 1,000,000)"
    )
    description: Text | None = Field(default=None, description="One-line description")
    artifacts: tuple[ArtifactSpec, ...] = Field(
        min_length=1, description="The artifacts of a change, at least one"
    )
    apply: ApplySpec = Field(description="The implementation gate")


class RoleSettings(FileModel):
    """Project settings for one role, under `roles:` in the config (A7)."""

    done_when: tuple[Text, ...] = Field(default=(), description="Criteria added by the project")
    enabled: bool = Field(
        default=True, description="Built-in step roles may be disabled; artifact roles may not"
    )


class Decision(FileModel):
    """A decision in force, injected into the `design` artifact's instructions (A9)."""

    decision: Text = Field(min_length=1, description="What was decided")
    reason: Text | None = Field(default=None, description="Why")
    id: Text | None = Field(default=None, description="Optional reference, such as `D-12`")


class ProjectConfig(FileModel):
    """`_codev/config.yaml`: project defaults (A8, A9, A7)."""

    model_config = ConfigDict(title="crewbook project config (_codev/config.yaml)")

    schema_: KebabId | None = Field(
        default=None, alias="schema", description="Default schema for new changes"
    )
    context: Text | None = Field(
        default=None, description="Project context shown in every instruction"
    )
    rules: dict[KebabId, tuple[Text, ...]] = Field(
        default_factory=dict, description="Extra rules per artifact id"
    )
    roles: dict[KebabId, RoleSettings] = Field(
        default_factory=dict, description="Extra criteria (and switches) per role id"
    )
    decisions: tuple[Decision, ...] = Field(
        default=(), description="Decisions in force, given to the `design` artifact"
    )


class ChangeFile(FileModel):
    """`change.yaml`: what a change records about itself (A8)."""

    model_config = ConfigDict(title="crewbook change (change.yaml)")

    schema_: KebabId = Field(
        alias="schema", description="The schema's folder name, fixed at creation"
    )
    created: Text | None = Field(default=None, description="Creation date, ISO 8601")
    description: Text | None = Field(default=None, description="One line on the change")
    skip_specs: bool = Field(
        default=False, description="Skip every artifact whose `generates` starts with `specs/`"
    )


#: What one artifact of a change is: made, makeable now, waiting, or skipped.
ArtifactStatus = Literal["done", "ready", "blocked", "skipped"]
#: The artifact statuses in display order (`ChangeStatus.counts`, the status frame).
STATUS_ORDER: tuple[ArtifactStatus, ...] = ("done", "ready", "blocked", "skipped")
