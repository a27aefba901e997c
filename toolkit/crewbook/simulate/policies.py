"""Policies: who plays the roles of a simulated loop.

A policy only ever *reports*: the loop's own rules accept or refuse each report, and
the simulation counts every refusal (`crewbook.simulate.engine`). For each run the
engine asks the policy for a `Player` (``policy.start(loop, rng, clock)``), then
hands the player each contract (``player.act(contract) -> report``, ``None`` to give
up) and tells it what became of the report (``accepted``/``refused``).

- `ScriptedPolicy`: a list of reports (objects, or JSON data read with the loop's
  ``parse_report``), played in order; a refused report is counted and skipped.
- `RandomPolicy`: reports drawn from a ``policy.yaml`` (`crewbook.simulate.model`):
  chances per role and verdict, durations and tokens from distributions, seeded.
- `ReplayPolicy`: the reports of recorded runs (a ledger, or reports lists) played
  again, e.g. under other caps; run *i* plays recording ``i % len(recordings)``.
- `CallablePolicy` (or any callable given to `as_policy`): ``fn(contract)`` or
  ``fn(contract, rng)`` returns the report.

Policies are plain data, so they travel to worker processes; a callable must be a
module-level function to travel to another process.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.clock import EPOCH as CLOCK_EPOCH
from ..core.clock import ManualClock
from ..core.loop import Act, Loop
from ..core.players import Player
from ..errors import LoopRefused, SimulationError, did_you_mean
from .lookup import codec_of, players_of
from .model import (
    RandomPolicyFile,
    ScriptedPolicyFile,
    parse_policy,
    policy_model,
    read_policy_file,
)

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from ..sources import SourceDoc

#: When every simulated run starts: 2025-03-01 09:00 UTC (the one clock's `EPOCH`).
#: A simulated run's clock is the one clock, `ManualClock`, moved by the accepted
#: reports' durations (the engine advances it) or when a player catches it up (a timer).
EPOCH = CLOCK_EPOCH


class Policy:
    """Base of every policy: a `Player` per run (see the module docstring)."""

    name = "policy"

    def start(self, loop: Loop[Any, Any], rng: np.random.Generator, clock: ManualClock,
              index: int = 0) -> Player:
        """The player of run `index` of `loop`, drawing from `rng` (that run's own)."""
        raise NotImplementedError

    def check(self, loop: Loop[Any, Any]) -> None:
        """Raise `SimulationError` when this policy cannot play `loop` (checked once)."""

    def with_setting(self, key: str, value: Any) -> Policy:
        """A copy with one setting changed (``policy.<key>`` in a sweep's grid)."""
        raise SimulationError(f"a {self.name} policy has no settings to sweep; "
                              f"{key!r} cannot be set (random policies have them)")

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


# ------------------------------------------------------------------ scripted and replay
def parse_for(loop: Loop[Any, Any], data: Mapping[str, Any]) -> Any:
    """A report for `loop` from JSON data, with the loop's own ``parse_report``."""
    return codec_of(loop).parse(data)


class _ListPlayer(Player):
    def __init__(self, reports: Sequence[Any], loop: Loop[Any, Any],
                 clock: ManualClock | None = None, times: Sequence[datetime | None] = ()) -> None:
        self.reports = [parse_for(loop, r) if isinstance(r, Mapping) else r for r in reports]
        self.times = list(times)
        self.clock = clock
        self.next = 0

    def act(self, contract: Act) -> Any:
        if self.next >= len(self.reports):
            return None
        if self.clock is not None and self.next < len(self.times):
            when = self.times[self.next]
            if when is not None:
                self.clock.catch_up(when)
        return self.reports[self.next]

    def accepted(self, contract: Act, report: Any) -> None:
        self.next += 1

    def refused(self, contract: Act, report: Any, error: LoopRefused) -> None:
        self.next += 1  # counted by the engine; the script goes on with its next report


class ScriptedPolicy(Policy):
    """Play `reports` in order (objects, or JSON data for the loop's ``parse_report``);
    a refused report is counted and skipped; when none is left the run ends."""

    name = "scripted"

    def __init__(self, reports: Sequence[Any]) -> None:
        if not reports:
            raise SimulationError("a scripted policy needs at least one report")
        self.reports = list(reports)

    def start(self, loop: Loop[Any, Any], rng: np.random.Generator, clock: ManualClock,
              index: int = 0) -> Player:
        return _ListPlayer(self.reports, loop)

    def check(self, loop: Loop[Any, Any]) -> None:
        for i, item in enumerate(self.reports):
            if isinstance(item, Mapping):
                try:
                    parse_for(loop, item)
                except LoopRefused as exc:
                    raise SimulationError(f"scripted report {i + 1} cannot be read by a "
                                          f"{loop.kind} loop: {exc}") from None

    def __repr__(self) -> str:
        return f"<ScriptedPolicy {len(self.reports)} reports>"


class ReplayPolicy(Policy):
    """Replay recorded runs: run *i* plays recording ``i % len(recordings)``.

    A recording is a list of reports, or the events of one run of a ledger (dicts as
    in the ledger file), turned into the loop's reports when the run starts. Build one
    from a ledger with `ReplayPolicy.from_ledger`; timing is replayed too (each
    report at its recorded time). Under other caps a recorded report may be refused:
    it is counted and skipped.
    """

    name = "replay"

    def __init__(self, recordings: Sequence[Sequence[Any]], *,
                 events: bool = False, names: Sequence[str] = ()) -> None:
        if not recordings:
            raise SimulationError("a replay policy needs at least one recorded run")
        self.recordings = [list(r) for r in recordings]
        self.events = events
        self.names = list(names)
        #: A recording may hold ``(report, time)`` pairs (`run_reports(..., times=True)`).

    @classmethod
    def from_ledger(cls, source: pd.DataFrame | str | os.PathLike[str],
                    runs: Sequence[str] | None = None) -> ReplayPolicy:
        """The runs of a ledger (a file or folder for `read_ledger`, or its frame)."""
        import pandas as pd

        from ..ledger import read_ledger

        frame = source if isinstance(source, pd.DataFrame) else read_ledger(Path(source))
        if frame.empty:
            raise SimulationError("the ledger holds no events to replay")
        names = [str(r) for r in frame["run"].astype(str).unique()]
        if runs is not None:
            missing = [r for r in runs if r not in names]
            if missing:
                raise SimulationError(f"the ledger has no run {missing[0]!r}"
                                      f"{did_you_mean(missing[0], names)}")
            names = list(runs)
        recordings: list[list[dict[str, Any]]] = []
        columns = [c for c in ("ts", "loop", "kind", "role", "stage", "verdict", "attempt",
                               "version", "summary", "tokens_in", "tokens_out", "cost",
                               "duration_ms", "payload") if c in frame.columns]
        runs_col = frame["run"].astype(str)
        for name in names:
            rows = frame.loc[runs_col == name].sort_values("seq", kind="stable")
            events: list[dict[str, Any]] = []
            for record in rows[columns].to_dict("records"):
                events.append({str(k): (None if _missing(v) else _plain(v))
                               for k, v in record.items()})
            recordings.append(events)
        return cls(recordings, events=True, names=names)

    def start(self, loop: Loop[Any, Any], rng: np.random.Generator, clock: ManualClock,
              index: int = 0) -> Player:
        recording = self.recordings[index % len(self.recordings)]
        if not self.events:
            if recording and all(isinstance(r, tuple) and len(r) == 2 and
                                 isinstance(r[1], datetime) for r in recording):
                return _ListPlayer([r for r, _ in recording], loop, clock,
                                   [t for _, t in recording])
            return _ListPlayer(recording, loop)
        reports, times = codec_of(loop).from_events(recording, loop)
        return _ListPlayer(reports, loop, clock, times)

    def __repr__(self) -> str:
        what = "ledger runs" if self.events else "recorded runs"
        return f"<ReplayPolicy {len(self.recordings)} {what}>"


def _missing(value: Any) -> bool:
    try:
        import pandas as pd

        return value is None or (not isinstance(value, dict | list) and bool(pd.isna(value)))
    except (TypeError, ValueError):
        return False


def _plain(value: Any) -> Any:
    if hasattr(value, "to_pydatetime"):
        return value.to_pydatetime()
    if hasattr(value, "item") and not isinstance(value, dict | list):
        return value.item()
    return value


# ----------------------------------------------------------------------- callable
class _CallPlayer(Player):
    def __init__(self, fn: Callable[..., Any], rng: np.random.Generator, with_rng: bool) -> None:
        self.fn, self.rng, self.with_rng = fn, rng, with_rng

    def act(self, contract: Act) -> Any:
        return self.fn(contract, self.rng) if self.with_rng else self.fn(contract)


class CallablePolicy(Policy):
    """Any callable: ``fn(contract) -> report`` or ``fn(contract, rng) -> report`` (the
    run's seeded `numpy.random.Generator`); None gives up. A refused report is
    counted and the callable is asked again with the same contract."""

    name = "callable"

    def __init__(self, fn: Callable[..., Any]) -> None:
        if not callable(fn):
            raise SimulationError(f"a callable policy needs a function, not {type(fn).__name__}")
        self.fn = fn
        try:
            params = [p for p in inspect.signature(fn).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        except (TypeError, ValueError):
            params = []
        self.with_rng = len(params) >= 2

    def start(self, loop: Loop[Any, Any], rng: np.random.Generator, clock: ManualClock,
              index: int = 0) -> Player:
        return _CallPlayer(self.fn, rng, self.with_rng)

    def __repr__(self) -> str:
        return f"<CallablePolicy {getattr(self.fn, '__name__', repr(self.fn))}>"


# ------------------------------------------------------------------------- random
class RandomPolicy(Policy):
    """Reports drawn at random, as a ``policy.yaml`` says (`crewbook.simulate.model`).

    ``RandomPolicy(roles={"qa": {"fail": 0.3}})`` or ``RandomPolicy(spec)`` with a
    `RandomPolicyFile`; `load_policy` reads one from a file. Sweeps change it with
    ``policy.<key>`` settings: ``policy.roles.qa.fail``, ``policy.price_per_mtok``…
    """

    name = "random"

    def __init__(self, spec: RandomPolicyFile | Mapping[str, Any] | None = None, *,
                 source: SourceDoc | None = None, **fields: Any) -> None:
        if isinstance(spec, RandomPolicyFile):
            if fields:
                spec = policy_model().model_validate({**spec.model_dump(), **fields})
            self.spec = spec
        else:
            data = {**dict(spec or {}), **fields}
            self.spec = _validated(data)
        self.source = source

    def start(self, loop: Loop[Any, Any], rng: np.random.Generator, clock: ManualClock,
              index: int = 0) -> Player:
        return players_of(loop).random_player(self.spec, loop, rng, clock)

    def check(self, loop: Loop[Any, Any]) -> None:
        adapter = players_of(loop)
        known = adapter.roles(loop)
        problems = []
        for role in self.spec.roles:
            if role not in known:
                message = (f"role {role!r} names nothing in this {loop.kind} loop"
                           f"{did_you_mean(role, known)}; its roles: {', '.join(known)}")
                if self.source is not None:
                    problems.append(self.source.problem("unknown_role", message,
                                                        ("roles", role)))
                else:
                    raise SimulationError(message)
        if problems:
            name = self.source.name if self.source is not None else "the policy"
            raise SimulationError(f"the policy {name} does not fit the loop", problems)
        adapter.check_random(self.spec, loop)

    def with_setting(self, key: str, value: Any) -> RandomPolicy:
        data = self.spec.model_dump()
        parts = key.split(".")
        target: Any = data
        for i, part in enumerate(parts[:-1]):
            if not isinstance(target, dict):
                raise SimulationError(f"policy setting {key!r}: {'.'.join(parts[:i])} is not "
                                      "a mapping")
            if part not in target or target[part] is None:
                if i == 0 and part not in data:
                    raise SimulationError(f"the random policy has no setting {part!r}"
                                          f"{did_you_mean(part, data)}; settings: "
                                          f"{', '.join(data)}")
                target[part] = {}
            target = target[part]
        if not isinstance(target, dict):
            raise SimulationError(f"policy setting {key!r} does not name a value")
        if len(parts) == 1 and parts[0] not in data:
            raise SimulationError(f"the random policy has no setting {key!r}"
                                  f"{did_you_mean(key, data)}; settings: {', '.join(data)}")
        target[parts[-1]] = value
        return RandomPolicy(_validated(data, f"policy setting {key}={value!r}"),
                            source=self.source)

    def __reduce__(self) -> tuple[Any, ...]:
        return (RandomPolicy, (self.spec,))

    def __repr__(self) -> str:
        roles = ", ".join(f"{r}: fail {b.fail:g}" for r, b in self.spec.roles.items())
        return f"<RandomPolicy {roles or 'no role settings'}>"


def _validated(data: Mapping[str, Any], what: str = "the random policy") -> RandomPolicyFile:
    from pydantic import ValidationError

    try:
        return policy_model().model_validate(dict(data))
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        raise SimulationError(f"{what} is not valid: {where}: {first['msg']}") from None


def load_policy(path: str | os.PathLike[str]) -> Policy:
    """The policy a ``policy.yaml`` describes (`SimulationError` with located problems)."""
    spec, doc = read_policy_file(Path(path))
    if isinstance(spec, ScriptedPolicyFile):
        return ScriptedPolicy(spec.reports)
    return RandomPolicy(spec, source=doc)


def policy_from_data(data: Mapping[str, Any]) -> Policy:
    """A policy from plain data in the ``policy.yaml`` shape."""
    from ..sources import SourceDoc

    spec = parse_policy(SourceDoc(Path("<policy>"), dict(data)))
    if isinstance(spec, ScriptedPolicyFile):
        return ScriptedPolicy(spec.reports)
    return RandomPolicy(spec)


def as_policy(policy: Policy | Callable[..., Any] | Mapping[str, Any] | str | os.PathLike[str]
              ) -> Policy:
    """A `Policy` from a policy, a callable, policy data, or a ``policy.yaml`` path."""
    if isinstance(policy, Policy):
        return policy
    if isinstance(policy, Mapping):
        return policy_from_data(policy)
    if isinstance(policy, str | os.PathLike):
        return load_policy(policy)
    if callable(policy):
        return CallablePolicy(policy)
    raise SimulationError(f"a policy is a Policy, a callable, policy data or a policy.yaml "
                          f"path, not {type(policy).__name__}")
