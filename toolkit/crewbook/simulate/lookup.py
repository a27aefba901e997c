"""What the simulation knows about a loop, asked of its family (`crewbook.families`):
its codec (reports from JSON data, recorded events back into reports) and its players
(roles, the random player, rounds). A loop no family describes gets `Fallback`: report
objects and scripted, replay-from-reports or callable policies still work."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core.family import Declined
from ..core.loop import Loop
from ..core.players import Player, default_rounds
from ..errors import LoopRefused, SimulationError
from ..families import family_of

if TYPE_CHECKING:
    import numpy as np

    from ..core.family import Codec, Players

__all__ = ["Fallback", "codec_of", "duration_of", "players_of"]


class Fallback:
    """Codec and players of a loop no family describes (see the module docstring)."""

    def parse(self, data: Mapping[str, Any]) -> Any:
        """Refused: no JSON report format is known."""
        raise LoopRefused("this loop has no JSON report format known to the simulation: give "
                          "report objects", code="bad_report")

    def serialize(self, report: Any) -> dict[str, Any]:
        """Refused: no JSON report format is known."""
        raise SimulationError("this loop has no JSON report format: keep report objects")

    def from_events(self, events: Sequence[Mapping[str, Any]], loop: Loop[Any, Any]
                    ) -> tuple[list[Any], list[datetime | None]]:
        """Refused: recorded events cannot be turned back into reports."""
        raise SimulationError(f"replaying a {loop.kind} ledger is not supported: replay "
                              "report lists instead")

    def happy(self, loop: Loop[Any, Any], act: Any) -> Any:
        """None: no happy path is known."""
        return None

    @staticmethod
    def duration(report: Any) -> int | None:
        """The report's ``duration_ms`` when it has one (nothing is declared)."""
        ms = getattr(report, "duration_ms", None)
        return ms if isinstance(ms, int) else None

    def roles(self, loop: Loop[Any, Any]) -> list[str]:
        """None known."""
        return []

    def check_random(self, spec: Any, loop: Loop[Any, Any]) -> None:
        """Nothing to check (`random_player` refuses)."""

    def random_player(self, spec: Any, loop: Loop[Any, Any], rng: np.random.Generator,
                      clock: Any) -> Player:
        """Refused: no random player."""
        raise SimulationError(f"no random player for {loop.kind} loops yet: use a scripted, "
                              "replay or callable policy")

    def rounds(self, loop: Loop[Any, Any]) -> int:
        """From the status (`default_rounds`)."""
        return default_rounds(loop)


_FALLBACK = Fallback()


def codec_of(loop: Loop[Any, Any]) -> Codec[Any, Any]:
    """The codec of `loop`'s family (`Fallback` when it has none)."""
    family = family_of(loop)
    if family is None or isinstance(family.codec, Declined):
        return _FALLBACK
    return family.codec


def players_of(loop: Loop[Any, Any]) -> Players[Any, Any]:
    """The players of `loop`'s family (`Fallback` when it has none)."""
    family = family_of(loop)
    if family is None or isinstance(family.players, Declined):
        return _FALLBACK
    return family.players


def duration_of(loop: Loop[Any, Any]) -> Callable[[Any], int | None]:
    """How long a report of `loop` says its act took (ms): as its family declares it
    (`LoopFamily.duration_of`; none declared: no time), `Fallback.duration` for a loop no
    family describes."""
    family = family_of(loop)
    if family is None:
        return Fallback.duration
    return family.duration_of or _no_time


def _no_time(report: Any) -> None:
    return None
