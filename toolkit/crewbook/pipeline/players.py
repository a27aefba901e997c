"""The pipeline family's players: the happy path (what the Stepper proposes) and the
random player simulate uses (failed tries, verdicts and measures drawn from a policy)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.examples import plain_copy as _copy
from ..core.loop import Act, Loop
from ..core.paths import path_in
from ..core.players import Draws, Player, default_rounds
from ..errors import SimulationError
from .codec import _set_field, _typed, judged_fields, templates
from .form import PipelineForm
from .state import StageReport

if TYPE_CHECKING:
    import numpy as np

    from ..simulate.model import RandomPolicyFile

__all__ = ["PipelinePlayers"]


class PipelinePlayers:
    """Stages are the roles; artifacts are made from their kinds' schemas."""

    def happy(self, loop: Loop[Any, Any], act: Act) -> Any:
        """The report the Stepper proposes: valid artifacts, the forward verdict."""
        form = PipelineForm()
        return form.build(loop, act, form.propose(loop, act))

    def roles(self, loop: Loop[Any, Any]) -> list[str]:
        """The stages, in topological order."""
        return list(loop.pipeline.topology.order)  # type: ignore[attr-defined]

    def check_random(self, spec: RandomPolicyFile, loop: Loop[Any, Any]) -> None:
        """Every stage can get valid artifacts; every verdict names a field read."""
        templates(loop.pipeline)  # type: ignore[attr-defined]  # raises when unsynthesisable
        judged = judged_fields(loop.pipeline)  # type: ignore[attr-defined]
        for role, b in spec.roles.items():
            for key in b.verdicts:
                if key not in judged.get(role, {}):
                    known = ", ".join(judged.get(role, {})) or "none"
                    raise SimulationError(f"stage {role!r} has no transition reading {key!r}; "
                                          f"the fields its transitions read: {known}")

    def random_player(self, spec: RandomPolicyFile, loop: Loop[Any, Any],
                      rng: np.random.Generator, clock: Any) -> Player:
        """Stages draw failures, verdicts and measures from `spec`."""
        return _PipelinePlayer(spec, loop, rng)

    def rounds(self, loop: Loop[Any, Any]) -> int:
        """The rounds back, from the status's caps."""
        return default_rounds(loop)


class _PipelinePlayer(Player):
    def __init__(self, spec: RandomPolicyFile, loop: Loop[Any, Any],
                 rng: np.random.Generator) -> None:
        pipeline = loop.pipeline  # type: ignore[attr-defined]
        self.draws = Draws(spec, rng)
        self.made = templates(pipeline)
        self.plans = pipeline.plans
        self.pipeline = pipeline
        self.verdicts = {role: {key: (dict(w), ) for key, w in b.verdicts.items()}
                         for role, b in spec.roles.items()}

    def act(self, contract: Act) -> Any:
        stage = str(contract.stage)
        draws = self.draws
        b = draws.behaviour(stage)
        measures = draws.measures(stage)
        if draws.chance(b.fail):
            return StageReport(stage, {}, summary=f"{stage}: simulated failed try", **measures)
        made = self.made.get(stage, {})
        artifacts = {n: _copy(v) for n, v in made.items()}
        for key, (weights,) in self.verdicts.get(stage, {}).items():
            name, field = key.split(".", 1)
            if name in artifacts:
                _set_field(artifacts[name], field,
                           _typed(draws.choice(weights), self.pipeline, stage, name, field))
        plan = self.plans[stage]
        writes: tuple[str, ...] = ()
        if plan.written and plan.writer:
            writes = (path_in(plan.stage.writes, stem="sim", default="src/simulated.py"),)
        return StageReport(stage, artifacts, writes, None, **measures)
