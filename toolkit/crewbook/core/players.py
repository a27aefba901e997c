"""What simulate needs from a family to play its loops: a `Player` per run (a report per
contract, told what became of it) and `Draws`, the measures and chances a random player
draws from a random policy (`crewbook.simulate.RandomPolicyFile`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import LoopRefused
from .loop import Act

if TYPE_CHECKING:
    import numpy as np

    from ..simulate.model import Distribution, RandomPolicyFile, RoleBehaviour

__all__ = ["Draws", "Player", "default_rounds"]


class Player:
    """Plays one run: gives a report per contract and hears what became of it."""

    def act(self, contract: Act) -> Any:
        """The report for `contract`, or None to give up (the run ends ``unfinished``)."""
        raise NotImplementedError

    def accepted(self, contract: Act, report: Any) -> None:
        """`report` was accepted."""

    def refused(self, contract: Act, report: Any, error: LoopRefused) -> None:
        """`report` was refused (the engine counted it)."""


class Draws:
    """The measures of one act, drawn from a random policy's distributions."""

    def __init__(self, spec: RandomPolicyFile, rng: np.random.Generator) -> None:
        self.spec, self.rng = spec, rng
        self.random = rng.random
        self.default = spec.default_behaviour()

    def behaviour(self, role: str | None) -> RoleBehaviour:
        """The behaviour of `role` (the defaults when the policy does not name it)."""
        return self.spec.roles.get(role or "") or self.default

    def value(self, dist: Distribution) -> float:
        """One draw from `dist`."""
        if isinstance(dist, int | float):
            return float(dist)
        kind = dist.dist
        rng = self.rng
        if kind == "fixed":
            return float(dist.value)  # type: ignore[union-attr]
        if kind == "uniform":
            return float(rng.uniform(dist.low, dist.high))  # type: ignore[union-attr]
        if kind == "lognormal":
            import math

            return float(rng.lognormal(math.log(dist.median), dist.sigma))  # type: ignore[union-attr]
        if kind == "normal":
            return max(0.0, float(rng.normal(dist.mean, dist.sd)))  # type: ignore[union-attr]
        return float(rng.exponential(dist.mean))  # type: ignore[union-attr]

    def measures(self, role: str | None) -> dict[str, Any]:
        """``duration_ms``, ``tokens_in``, ``tokens_out``, ``cost`` of one act."""
        b = self.behaviour(role)
        spec = self.spec
        duration = round(self.value(b.duration_ms if b.duration_ms is not None
                                    else spec.duration_ms))
        tokens = round(self.value(b.tokens if b.tokens is not None else spec.tokens))
        tokens_in = round(tokens * spec.tokens_in_share)
        price = b.price_per_mtok if b.price_per_mtok is not None else spec.price_per_mtok
        return {"duration_ms": duration, "tokens_in": tokens_in,
                "tokens_out": tokens - tokens_in, "cost": round(tokens * price / 1e6, 6)}

    def chance(self, p: float) -> bool:
        """True with probability `p` (no draw when `p` is 0 or 1)."""
        if p <= 0:
            return False
        if p >= 1:
            return True
        return bool(self.random() < p)

    def choice(self, weights: Mapping[str, float]) -> str:
        """One key of `weights`, drawn by weight."""
        total = sum(weights.values())
        pick = self.random() * total
        for key, weight in weights.items():
            pick -= weight
            if pick < 0:
                return key
        return next(reversed(list(weights)))


def default_rounds(loop: Any) -> int:
    """How many times work went back in a run: the ``sent_back`` counter of its status,
    else the ``rounds back to …`` caps used."""
    status = loop.status()
    if "sent_back" in status.counters:
        return int(status.counters["sent_back"])
    return sum(c.used for c in status.caps if c.name.startswith("rounds back to"))
