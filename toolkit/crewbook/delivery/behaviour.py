"""The delivery family's section of a random ``policy.yaml``: how the simulated
coordinator decides (``coordinator:``). Its registry line declares it
(`crewbook.families.Entry.policy`), so the shared policy model holds no family's keys."""

from __future__ import annotations

from pydantic import Field

from ..models import FileModel
from ..simulate.model import Probability

#: Its key in the policy file (the family's registry line says the same).
SECTION = "coordinator"


class CoordinatorBehaviour(FileModel):
    """How the simulated coordinator decides (coordinator mode)."""

    finalise_early: Probability = Field(0.0, description="Chance of trying to finalise "
                                        "before the gates are met (the engine refuses it; "
                                        "the refusal is counted).")
    fail_at_cap: bool = Field(True, description="Fail the task when the role it needs "
                              "next cannot be launched any more.")
