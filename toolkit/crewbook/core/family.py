"""`LoopFamily`: what one family of loops says about itself, once, for every front end.

A family (``pipeline``, ``delivery``, ``crew``, ``autonomous``) is a folder whose
``family.py`` exports ``FAMILY``, a `LoopFamily`. Each part is given, or explicitly
`Declined` with the reason (a `Declined` is falsy, so ``if family.players:`` reads well):

- ``kinds``: the ledger ``loop`` values its engines write (a loop's ``kind``);
- ``engine``: ``factory_for(source)`` → a loop factory for a source this family
  understands (a file path or a model), or None;
- ``codec``: reports to and from plain mappings, and back from ledger events;
- ``players``: the happy path and the random player simulate uses;
- ``form``: the Stepper's `FormSpec`;
- ``rules``: its ledger conformance rules (`crewbook.ledger.LoopRules`);
- ``store``: load and save a loop's state between processes (`crewbook step FAMILY`);
- ``formats`` (optional): the file formats it reads, for `crewbook.formats`;
- ``fast_simulator`` (optional): runs on plain data, for `crewbook.simulate`.

`LoopFamily[State, Report]` is generic over its loops' state and report, so mypy checks
that the parts agree (the codec parses what the engine takes). A loop draws itself
(`Loop.graph_model`) and gives its acts frame (`Loop.trail_frame`): the family has no
part for those.

`crewbook.families` maps family names to dotted paths (``"crewbook.crew.family:FAMILY"``)
and `resolve` imports one when it is asked for: nothing registers at import.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from ..errors import UsageError

if TYPE_CHECKING:
    import numpy as np
    from pydantic import BaseModel

    from ..ledger.conformance import LoopRules
    from ..simulate.model import RandomPolicyFile
    from .clock import ManualClock
    from .form import FormSpec
    from .loop import Act, Loop
    from .players import Player

State = TypeVar("State")
Report = TypeVar("Report")

__all__ = ["Codec", "CodecBase", "Declined", "Engine", "FastSimulator", "LoopFamily",
           "Players", "Replay", "Store", "StoreBase", "render_act", "resolve"]


@dataclass(frozen=True)
class Declined:
    """A part a family does not give, and why (falsy)."""

    reason: str

    def __bool__(self) -> bool:
        return False

    def __str__(self) -> str:
        return self.reason


class Engine(Protocol[State, Report]):
    """How a family builds loops."""

    #: The sources `factory_for` understands, for messages ("a task (.yaml) or a Task").
    sources: str

    def factory_for(self, source: object) -> Callable[..., Loop[State, Report]] | None:
        """A loop factory (``factory(**settings) -> Loop``) for `source`, or None when
        `source` is not one of this family's (a file path, a model)."""


class Codec(Protocol[State, Report]):
    """A family's reports as plain mappings, and back from its ledger events."""

    def parse(self, data: Mapping[str, object]) -> Report:
        """The report object of `data` (refusals name the bad key)."""

    def serialize(self, report: Report) -> dict[str, object]:
        """`report` as a plain mapping `parse` reads back to an equal report."""

    def from_events(self, events: Sequence[Mapping[str, object]], loop: Loop[State, Report]
                    ) -> tuple[list[Report], list[datetime | None]]:
        """The reports (and their times) that produced these recorded events."""


class Replay(Generic[State, Report]):
    """What `CodecBase.report_of` sees besides the event: the loop being replayed, the
    run's events and where the replay is (`after`: the events that follow), and
    `carried`, what one event leaves for a later one (a test run waiting for its verdict).
    """

    def __init__(self, events: Sequence[Mapping[str, Any]], loop: Loop[State, Report]) -> None:
        self.events = events
        self.loop = loop
        self.index = 0
        self.carried: dict[str, Any] = {}

    def after(self) -> Sequence[Mapping[str, Any]]:
        """The events after the current one."""
        return self.events[self.index + 1:]


class CodecBase(Generic[State, Report]):
    """`from_events` written once (see `Codec`): each event of the run, in order, goes to
    the family's `report_of`, and every report it gives is kept with its `time_of`. A
    family's codec subclasses it and gives `parse`, `serialize` and `report_of`."""

    def report_of(self, event: Mapping[str, Any], replay: Replay[State, Report]
                  ) -> Report | None:
        """The report that wrote `event`, or None when it wrote none (a family says)."""
        raise NotImplementedError(f"{type(self).__name__} gives no report_of")

    def time_of(self, event: Mapping[str, Any], report: Report) -> datetime | None:
        """When `report` was given: the event's ``ts`` when it is a time, else None."""
        when = event.get("ts")
        return when if isinstance(when, datetime) else None

    def from_events(self, events: Sequence[Mapping[str, Any]], loop: Loop[State, Report]
                    ) -> tuple[list[Report], list[datetime | None]]:
        """The reports (and their times) that produced these recorded events."""
        replay = Replay(events, loop)
        reports: list[Report] = []
        times: list[datetime | None] = []
        for index, event in enumerate(events):
            replay.index = index
            report = self.report_of(event, replay)
            if report is not None:
                reports.append(report)
                times.append(self.time_of(event, report))
        return reports, times


class Players(Protocol[State, Report]):
    """The players simulate and the Stepper use."""

    def happy(self, loop: Loop[State, Report], act: Act) -> Report | None:
        """The report that moves `act` forward (None: nothing to report)."""

    def roles(self, loop: Loop[State, Report]) -> list[str]:
        """The roles (or stages) a policy may name."""

    def check_random(self, spec: RandomPolicyFile, loop: Loop[State, Report]) -> None:
        """Raise `SimulationError` when the random policy `spec` cannot drive `loop`."""

    def random_player(self, spec: RandomPolicyFile, loop: Loop[State, Report],
                      rng: np.random.Generator, clock: ManualClock) -> Player:
        """A player drawing reports as the random policy `spec` says."""

    def rounds(self, loop: Loop[State, Report]) -> int:
        """How many times work went back in this run."""


class FastSimulator(Protocol[State, Report]):
    """Runs of a loop on plain data, with the outcomes its random player gives on the
    engine (an optional part: simulate plays act by act without it)."""

    def runner(self, spec: RandomPolicyFile, loop: Loop[State, Report], max_acts: int,
               max_refusals: int) -> Callable[[np.random.Generator], tuple[object, ...]] | None:
        """A function playing one run of `loop` from a run's generator (its outcome's
        fields after the run index), or None when `loop` is not one it plays."""


class Store(Protocol[State, Report]):
    """A loop's state between processes, in a folder (``crewbook step FAMILY``).

    `StoreBase` gives the parts most stores share (no settings, no sample source, the
    contract shown as `render_act` prints it)."""

    #: The names of the settings `load` takes (``crewbook step --workspace`` ...).
    settings: tuple[str, ...]

    def load(self, folder: Path, source: object = None,
             settings: Mapping[str, str] | None = None) -> Loop[State, Report]:
        """The loop saved in `folder` (a new one of `source` when there is none yet);
        `LoopRefused` (with its code) when it cannot be loaded."""

    def save(self, loop: Loop[State, Report], folder: Path) -> None:
        """Keep `loop`'s state in `folder`."""

    def sample_source(self, folder: Path, kind: str) -> object:
        """What `load(folder, source)` starts a small fresh run of `kind` from (the
        protocol suite keeps one between loads), or `Declined` with the reason when a
        run is only set up by the family's own commands."""

    def shown(self, loop: Loop[State, Report], accepted: bool | None
              ) -> tuple[dict[str, object], str]:
        """The current contract of `loop` as ``crewbook step`` prints it: the JSON document
        and the text (`accepted`: None when no report was given)."""


class StoreBase(Generic[State, Report]):
    """What most stores share (see `Store`); a family's store subclasses it."""

    settings: tuple[str, ...] = ()

    def sample_source(self, folder: Path, kind: str) -> object:
        """Declined unless the store says how to start a sample run."""
        return Declined(f"{type(self).__name__} gives no sample source")

    def shown(self, loop: Loop[State, Report], accepted: bool | None
              ) -> tuple[dict[str, object], str]:
        """The contract and the status as JSON data; the text `render_act` gives."""
        act = loop.contract()
        return ({"accepted": accepted, "run": loop.run, "contract": act.to_dict(),
                 "status": loop.status().to_dict()}, render_act(act, accepted))


def render_act(act: Act, accepted: bool | None = None) -> str:
    """A contract of any loop as ``crewbook step FAMILY`` prints it."""
    lines = [f"accepted; next is act {act.act}"] if accepted else []
    if act.finished:
        lines.append(f"{act.loop} loop finished: {act.finished_reason}")
    else:
        lines += [f"{act.loop} · act {act.act} · {act.stage or act.role} "
                  f"(role {act.role}, attempt {act.attempt})",
                  f"expects: {act.expects or 'a report'}",
                  "moves: " + (", ".join(act.moves) or "none")]
        lines += [f"feedback: {f}" for f in act.feedback]
    return "\n".join(lines)


@dataclass(frozen=True)
class LoopFamily(Generic[State, Report]):
    """One family of loops, described once (see the module docstring): typed by the
    state and the report of its loops, so mypy checks that its codec parses what its
    engine takes and its players give it."""

    name: str
    kinds: tuple[str, ...]
    summary: str
    engine: Engine[State, Report] | Declined
    codec: Codec[State, Report] | Declined
    players: Players[State, Report] | Declined
    form: FormSpec | Declined
    rules: Callable[[], Sequence[LoopRules]] | Declined
    store: Store[State, Report] | Declined
    #: ``sample(folder, kind)``: a picklable factory of a small fresh loop of `kind`,
    #: set up in `folder` (the protocol suite runs every family through it; simulate
    #: may send it to a worker; a notebook can try a family with it).
    sample: Callable[[Path, str], Callable[[], Loop[State, Report]]]
    #: Optional: the file formats it reads, file name in ``schemas/`` → the pydantic
    #: model they are generated from (`crewbook.formats`).
    formats: Callable[[], Mapping[str, type[BaseModel]]] | Declined = Declined(
        "it reads no file format of its own")
    #: Optional: runs on plain data for `crewbook.simulate` (`FastSimulator`).
    fast_simulator: FastSimulator[State, Report] | Declined = Declined(
        "simulate plays it act by act")
    #: Optional: how long a report says its act took (milliseconds, None: not said);
    #: `crewbook.simulate.replay_run` moves a replayed loop's clock by it. None: its
    #: reports carry no duration.
    duration_of: Callable[[Report], int | None] | None = None

    def parts(self) -> dict[str, object]:
        """Each part by name, in the order docs list them (given or `Declined`)."""
        return {"engine": self.engine, "codec": self.codec, "players": self.players,
                "form": self.form, "rules": self.rules, "store": self.store,
                "formats": self.formats, "fast_simulator": self.fast_simulator}

    def declined(self) -> dict[str, str]:
        """Part → the reason it is declined (empty when the family gives every part)."""
        return {p: str(v) for p, v in self.parts().items() if isinstance(v, Declined)}

    def __repr__(self) -> str:
        gives = [p for p, v in self.parts().items() if not isinstance(v, Declined)]
        return f"<LoopFamily {self.name}: kinds {', '.join(self.kinds)}; gives {', '.join(gives)}>"


def resolve(dotted: str) -> Any:
    """The object at ``"package.module:attribute"``, imported now (an import helper of
    the registry and the lazy attributes of other packages; check what it gives)."""
    module, _, attribute = dotted.partition(":")
    try:
        found = importlib.import_module(module)
        for part in attribute.split(".") if attribute else ():
            found = getattr(found, part)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"cannot load {dotted!r} ({exc}); the registry names a module and "
                         "an attribute as 'package.module:NAME'") from None
    return found
