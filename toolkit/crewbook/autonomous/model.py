"""The autonomous loop's files, state and phases (SPEC D6): `LoopState`, kept in
``_codev/crew/loop.json`` (its ledger ``loop.jsonl``), and the four phases with the
routing role acting in each."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, Field, field_validator

from ..core.bar import DEFAULT_TIMEOUT, BarRun
from ..core.loopfiles import LOOPS_DIR
from ..models import FROZEN, safe_name

__all__ = ["DEFAULT_MAX_RECETTES", "LOOP_LEDGER", "LOOP_STATE_FILE", "PHASES", "PHASE_ROLES",
           "LoopState", "Phase", "format_models"]

#: The autonomous loop's state file and ledger, relative to the project root (in the
#: folder and under the lock of every persisted loop, `crewbook.core.loopfiles`).
LOOP_STATE_FILE: Final = f"{LOOPS_DIR}/loop.json"
LOOP_LEDGER: Final = f"{LOOPS_DIR}/loop.jsonl"

Phase = Literal["plan", "implementation", "recette", "delivery"]
PHASES: Final[tuple[Phase, ...]] = ("plan", "implementation", "recette", "delivery")
#: The crew role whose route an autonomous-loop phase gets.
PHASE_ROLES: Final[dict[str, str]] = {
    "plan": "analyst", "implementation": "developer", "recette": "qa", "delivery": "developer"}
DEFAULT_MAX_RECETTES: Final = 3


class LoopState(BaseModel):
    """The autonomous loop's persisted state (`_codev/crew/loop.json`, D6)."""

    model_config = FROZEN

    format: Literal[1] = 1
    run: str
    goal: str = Field(min_length=1)
    phase: Phase = "plan"
    previous: Phase | None = None
    steps: int = 0
    recettes: int = 0
    max_recettes: int = Field(DEFAULT_MAX_RECETTES, ge=0)
    test_timeout: float = Field(DEFAULT_TIMEOUT, gt=0)
    last_test: BarRun | None = None
    finished_reason: Literal["delivered", "recette_exhausted"] | None = None

    @field_validator("run")
    @classmethod
    def _run_is_a_name(cls, value: str) -> str:
        return safe_name(value, "run") or value


def format_models() -> dict[str, type[BaseModel]]:
    """File name in `schemas/` → the model it describes (for `crewbook.formats`)."""
    return {"crew-loop-state.json": LoopState}
