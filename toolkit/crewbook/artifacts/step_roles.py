"""Built-in step roles and the steps of a change (SPEC A7), loaded from package data."""

from __future__ import annotations

from functools import cache
from importlib import resources

import yaml
from pydantic import Field

from ..models import FileModel, KebabId, Text
from .model import RoleName

#: The step at which artifact roles (declared in schemas) act.
ARTIFACT_STEP = "plan.write"


class StepRole(FileModel):
    """A role crewbook defines itself, acting at one step of every change."""

    id: KebabId
    step: Text
    name: RoleName
    question: Text
    done_when: tuple[Text, ...] = ()


class StepCatalogue(FileModel):
    """The steps of a change and the built-in roles (`builtin/step_roles.yaml`)."""

    steps: dict[str, str] = Field(min_length=1)
    roles: tuple[StepRole, ...]


@cache
def step_catalogue() -> StepCatalogue:
    """The built-in steps and step roles."""
    text = resources.files(__package__).joinpath("builtin/step_roles.yaml").read_text("utf-8")
    return StepCatalogue.model_validate(yaml.safe_load(text))


def builtin_role_ids() -> frozenset[str]:
    """Ids an artifact role may not take."""
    return frozenset(role.id for role in step_catalogue().roles)


def steps() -> dict[str, str]:
    """Step id → what happens at it, in order."""
    return dict(step_catalogue().steps)
