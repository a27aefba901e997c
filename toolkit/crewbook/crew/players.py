"""The crew family's players: the happy path (each role's positive verdict, the one the
Stepper proposes) and the random player simulate uses (qa answers ``no-go`` with its
``fail`` chance; measures drawn from the policy)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.loop import Act, Loop
from ..core.players import Draws, Player, default_rounds
from .engine import CrewReport
from .model import ROLES, VERDICTS

if TYPE_CHECKING:
    import numpy as np

    from ..simulate.model import RandomPolicyFile

__all__ = ["CrewPlayers"]


class CrewPlayers:
    """The three crew roles (analyst, developer, qa)."""

    def happy(self, loop: Loop[Any, Any], act: Act) -> Any:
        """The expected role's positive verdict (``done``, ``go``) with a summary."""
        if act.finished or act.role is None:
            return None
        verdicts = VERDICTS.get(act.role, ())
        return CrewReport(act.role, verdicts[0] if verdicts else "done",
                          f"{act.stage or act.role} done")

    def roles(self, loop: Loop[Any, Any]) -> list[str]:
        """analyst, developer, qa."""
        return list(ROLES)

    def check_random(self, spec: RandomPolicyFile, loop: Loop[Any, Any]) -> None:
        """Any random policy drives a crew loop."""

    def random_player(self, spec: RandomPolicyFile, loop: Loop[Any, Any],
                      rng: np.random.Generator, clock: Any) -> Player:
        """qa's ``no-go`` drawn with its ``fail`` chance."""
        return _CrewPlayer(Draws(spec, rng))

    def rounds(self, loop: Loop[Any, Any]) -> int:
        """How many times work went back (from the status)."""
        return default_rounds(loop)

class _CrewPlayer(Player):
    def __init__(self, draws: Draws) -> None:
        self.draws = draws

    def act(self, contract: Act) -> Any:
        role = str(contract.role)
        measures = self.draws.measures(role)
        if role == "qa":
            verdict = "no-go" if self.draws.chance(self.draws.behaviour(role).fail) else "go"
            return CrewReport("qa", verdict, f"qa: simulated {verdict}", **measures)
        return CrewReport(role, "done", f"{role}: simulated", **measures)
