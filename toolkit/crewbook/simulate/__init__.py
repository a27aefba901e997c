"""What-if: Monte Carlo simulation of any loop, and parameter sweeps (docs/simulate.md).

``simulate(loop_factory, policy, n=10_000, seed=1)`` plays `n` runs of a loop
(pipeline, standard, coordinator, or any `crewbook.core.loop.Loop`) with a policy that
plays its roles, offline, and returns one row per run; ``sweep(..., grid={...})`` does
it for every combination of settings; ``simulate_to(folder, ...)`` streams either to
Parquet files in bounded memory. Policies: `RandomPolicy` (a ``policy.yaml``),
`ScriptedPolicy`, `ReplayPolicy`, `CallablePolicy`. ``executor=`` takes any
`concurrent.futures.Executor`, a Dask client's included; results depend only on the
seed.

Importing this package is light: numpy, pandas and matplotlib load when used.
"""

from ..core.players import Player
from .engine import (
    STUCK,
    UNFINISHED,
    Simulated,
    replay_run,
    run_reports,
    simulate,
    simulate_to,
    sweep,
)
from .executors import InlineExecutor
from .factories import __getattr__ as __getattr__  # PipelineFactory, TaskFactory (families)
from .frames import outcome_mix, summarise
from .model import RandomPolicyFile, RoleBehaviour, ScriptedPolicyFile
from .plots import plot_cost, plot_outcome_mix, plot_simulated_rounds
from .policies import (
    CallablePolicy,
    Policy,
    RandomPolicy,
    ReplayPolicy,
    ScriptedPolicy,
    as_policy,
    load_policy,
)

__all__ = [
    "STUCK",
    "UNFINISHED",
    "CallablePolicy",
    "InlineExecutor",
    "PipelineFactory",
    "Player",
    "Policy",
    "RandomPolicy",
    "RandomPolicyFile",
    "ReplayPolicy",
    "RoleBehaviour",
    "ScriptedPolicy",
    "ScriptedPolicyFile",
    "Simulated",
    "TaskFactory",
    "as_policy",
    "load_policy",
    "outcome_mix",
    "plot_cost",
    "plot_outcome_mix",
    "plot_simulated_rounds",
    "replay_run",
    "run_reports",
    "simulate",
    "simulate_to",
    "summarise",
    "sweep",
]
