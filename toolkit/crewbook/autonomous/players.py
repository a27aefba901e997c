"""The autonomous family's players: the happy path (each phase done, the recette's test
run passing) and the random player simulate uses (a recette fails with the qa role's
``fail`` chance; durations drawn from the policy). Neither runs a command: the test run
is made up, as a simulation's reports are."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.bar import BarRun
from ..core.loop import Act, Loop
from ..core.players import Draws, Player, default_rounds
from .engine import LoopStep
from .model import PHASE_ROLES

if TYPE_CHECKING:
    import numpy as np

    from ..simulate.model import RandomPolicyFile

__all__ = ["AutonomousPlayers", "made_up_run"]


def made_up_run(passed: bool, duration_ms: int = 1_000) -> BarRun:
    """A test run nobody ran: exit 0 or 1, for the happy path and simulations."""
    return BarRun(name="test", command="(simulated)", cwd=".", exit_code=0 if passed else 1,
                  timed_out=False, duration_ms=duration_ms, output_bytes=0, truncated=False,
                  tail="")


class AutonomousPlayers:
    """The four phases; qa's recette passes or fails."""

    def happy(self, loop: Loop[Any, Any], act: Act) -> Any:
        """Each phase done; the recette's made-up test run passes."""
        if act.finished:
            return None
        test = made_up_run(True) if act.stage == "recette" else None
        return LoopStep(test=test, summary=f"{act.stage or 'phase'} done")

    def roles(self, loop: Loop[Any, Any]) -> list[str]:
        """The crew roles the phases use (analyst, developer, qa)."""
        return sorted(set(PHASE_ROLES.values()))

    def check_random(self, spec: RandomPolicyFile, loop: Loop[Any, Any]) -> None:
        """Any random policy drives the autonomous loop."""

    def random_player(self, spec: RandomPolicyFile, loop: Loop[Any, Any],
                      rng: np.random.Generator, clock: Any) -> Player:
        """Recettes fail with qa's ``fail`` chance."""
        return _AutonomousPlayer(Draws(spec, rng))

    def rounds(self, loop: Loop[Any, Any]) -> int:
        """How many recettes went back to implementation."""
        return default_rounds(loop)


class _AutonomousPlayer(Player):
    def __init__(self, draws: Draws) -> None:
        self.draws = draws

    def act(self, contract: Act) -> Any:
        role = contract.role
        measures = self.draws.measures(role)
        if contract.stage == "recette":
            passed = not self.draws.chance(self.draws.behaviour(role).fail)
            return LoopStep(test=made_up_run(passed, int(measures["duration_ms"])))
        return LoopStep(summary=f"{contract.stage}: simulated")
