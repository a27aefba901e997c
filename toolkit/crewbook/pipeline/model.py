"""The strict models of a pipeline file (SPEC B1–B3) and of its artifact-kinds config (B4).

A pipeline file (the "correx" TOML format)::

    id = "role_pipeline"
    start = "analyst"

    [[stages]]
    id = "analyst"
    prompt = "prompts/analyst.md"          # relative to the pipeline file
    needs = []                             # artifact names it consumes
    produces = [{ name = "analysis", kind = "analysis" }]
    allowed_tools = ["file_read"]
    ground_references = true
    token_budget = 16384
    max_retries = 2
    writes = ["core/**"]                   # optional: where it may write

    [[transitions]]
    id = "analyst-to-architect"
    from = "analyst"
    to = "architect"                       # a stage id, or "done"
    condition_type = "artifact_validated"  # or "artifact_field_equals"
    condition_artifact_id = "analysis"

Unknown keys are rejected (a typo must never change the workflow silently). The
kinds config (``config.toml``) keeps its other tables: only ``[[artifacts]]`` is read.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
)
from pydantic_core import PydanticCustomError

from ..models import FileModel, RelativeFile, RelativePath, Text

#: Ids of pipelines, stages, transitions, artifacts and kinds: letters, digits, ``_ . -``.
ID_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
#: The target that ends a run well; `escalated` is where a run ends when it gives up.
DONE = "done"
ESCALATED = "escalated"
#: Stage ids a pipeline may not use (they are the terminals).
RESERVED_IDS = frozenset({DONE, ESCALATED})
#: Tools that let a stage change files (`can_write`).
WRITE_TOOLS = frozenset({"file_write", "file_edit", "FileWrite", "FileEdit", "write", "edit"})

ConditionType = Literal["artifact_validated", "artifact_field_equals"]
Operator = Literal["eq", "neq"]


def _id(value: str) -> str:
    if not ID_PATTERN.match(value):
        raise PydanticCustomError(
            "invalid_id",
            "{value!r} is not a valid id: use letters, digits, '_', '-' and '.', "
            "such as 'impl_plan' or 'analyst-to-architect'",
            {"value": value},
        )
    return value


Id = Annotated[str, Field(strict=True, min_length=1,
                          json_schema_extra={"pattern": ID_PATTERN.pattern}),
               AfterValidator(_id)]
Scalar = StrictBool | StrictInt | StrictFloat | Text


#: Sane upper bounds: a value beyond them is a typo (``10**44`` tokens), not a plan.
MAX_TOKENS = 100_000_000
MAX_COUNT = 10_000


class Produce(FileModel):
    """An artifact a stage produces: its `name` (what later stages `need`) and its `kind`."""

    name: Id = Field(description="The artifact's name; later stages list it in `needs`.")
    kind: Id = Field(description="Its artifact kind: an `[[artifacts]]` id of the kinds "
                     "config, or the built-in `file_written`.")


class StageSpec(FileModel):
    """One `[[stages]]` table (B2)."""

    id: Id = Field(description="The stage id; it is also the role that acts in it.")
    prompt: RelativeFile = Field(description="Prompt file, relative to the pipeline file.")
    needs: tuple[Id, ...] = Field((), description="Artifact names the stage consumes.")
    produces: tuple[Produce, ...] = Field((), description="The artifacts it produces.")
    allowed_tools: tuple[Text, ...] = Field(
        (), description="Tools the stage may use; file_write/file_edit let it write.")
    ground_references: StrictBool = Field(
        False, description="Every workspace-relative path named in its artifacts must exist.")
    token_budget: Annotated[StrictInt, Field(ge=1, le=MAX_TOKENS)] | None = Field(
        None, description="Tokens the stage may spend on one attempt (at most 100 million).")
    max_retries: Annotated[StrictInt, Field(ge=0, le=MAX_COUNT)] | None = Field(
        None, description="Retries after a failed attempt; on a loop target, the number "
        "of rounds the loop may send work back.")
    writes: tuple[RelativePath, ...] | None = Field(
        None, description="Workspace-relative globs the stage may write (others are "
        "refused as scope creep); absent means anywhere in the workspace.")


class TransitionSpec(FileModel):
    """One `[[transitions]]` table (B3)."""

    model_config = ConfigDict(populate_by_name=True)

    id: Id
    from_: Id = Field(alias="from", description="The stage it leaves.")
    to: Id = Field(description="The stage it enters, or `done`.")
    condition_type: ConditionType = Field(description="When it is taken.")
    condition_artifact_id: Id = Field(description="The artifact the condition reads.")
    condition_field: Annotated[str, Field(strict=True, min_length=1)] | None = Field(
        None, description="For artifact_field_equals: the field (dots for nested fields).")
    condition_value: Scalar | None = Field(
        None, description="For artifact_field_equals: the value compared.")
    condition_operator: Operator = Field(
        "eq", description="For artifact_field_equals: `eq` or `neq`.")

    def describe(self) -> str:
        """The condition as text: ``analysis ✓`` or ``verdict != approved``."""
        if self.condition_type == "artifact_validated":
            return f"{self.condition_artifact_id} ✓"
        op = "==" if self.condition_operator == "eq" else "!="
        return f"{self.condition_field} {op} {self.condition_value}"


class PipelineFile(FileModel):
    """A pipeline file (B1)."""

    model_config = ConfigDict(title="crewbook pipeline (correx role pipeline TOML)")

    id: Id = Field(description="The pipeline's id.")
    start: Id = Field(description="The stage a run starts in.")
    stages: Annotated[tuple[StageSpec, ...], Field(min_length=1)]
    transitions: tuple[TransitionSpec, ...] = ()


class KindSpec(FileModel):
    """One `[[artifacts]]` entry of the kinds config (B4)."""

    id: Id = Field(description="The kind id that stages name in `produces`.")
    schema_path: RelativeFile = Field(description="Its JSON Schema, relative to the config.")
    llm_emitted: StrictBool = Field(True, description="Whether a model writes it as JSON.")


class KindsConfig(FileModel):
    """The artifact kinds of a config file; its other tables are left alone."""

    model_config = ConfigDict(extra="ignore", title="crewbook pipeline artifact kinds")

    artifacts: tuple[KindSpec, ...] = ()


def format_models() -> dict[str, type[BaseModel]]:
    """File name in ``schemas/`` → the model it is generated from (`crewbook.formats`)."""
    return {"pipeline.json": PipelineFile, "pipeline-kinds.json": KindsConfig}
