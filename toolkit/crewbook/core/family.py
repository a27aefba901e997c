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
- ``graph`` / ``frames``: drawings and frames, from the loop's public read-only view;
- ``formats`` (optional): the file formats it reads, for `crewbook.formats`;
- ``fast_simulator`` (optional): runs on plain data, for `crewbook.simulate`.

`crewbook.families` maps family names to dotted paths (``"crewbook.crew.family:FAMILY"``)
and `resolve` imports one when it is asked for: nothing registers at import.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import UsageError

if TYPE_CHECKING:
    import numpy as np
    from pydantic import BaseModel

    from ..simulate.model import RandomPolicyFile
    from .form import FormSpec
    from .loop import Act, Loop
    from .players import Player

__all__ = ["Codec", "Declined", "Engine", "FastSimulator", "LoopFamily", "Players", "Store",
           "StoreBase", "render_act", "resolve"]


@dataclass(frozen=True)
class Declined:
    """A part a family does not give, and why (falsy)."""

    reason: str

    def __bool__(self) -> bool:
        return False

    def __str__(self) -> str:
        return self.reason


class Engine(Protocol):
    """How a family builds loops."""

    #: The sources `factory_for` understands, for messages ("a task (.yaml) or a Task").
    sources: str

    def factory_for(self, source: Any) -> Callable[..., Loop[Any, Any]] | None:
        """A loop factory (``factory(**settings) -> Loop``) for `source`, or None when
        `source` is not one of this family's (a file path, a model)."""


class Codec(Protocol):
    """A family's reports as plain mappings, and back from its ledger events."""

    def parse(self, data: Mapping[str, Any]) -> Any:
        """The report object of `data` (refusals name the bad key)."""

    def serialize(self, report: Any) -> dict[str, Any]:
        """`report` as a plain mapping `parse` reads back to an equal report."""

    def from_events(self, events: Sequence[Mapping[str, Any]], loop: Loop[Any, Any]
                    ) -> tuple[list[Any], list[datetime | None]]:
        """The reports (and their times) that produced these recorded events."""


class Players(Protocol):
    """The players simulate and the Stepper use."""

    def happy(self, loop: Loop[Any, Any], act: Act) -> Any:
        """The report that moves `act` forward (None: nothing to report)."""

    def roles(self, loop: Loop[Any, Any]) -> list[str]:
        """The roles (or stages) a policy may name."""

    def check_random(self, spec: Any, loop: Loop[Any, Any]) -> None:
        """Raise `SimulationError` when the random policy `spec` cannot drive `loop`."""

    def random_player(self, spec: Any, loop: Loop[Any, Any], rng: np.random.Generator,
                      clock: Any) -> Player:
        """A player drawing reports as the random policy `spec` says."""

    def rounds(self, loop: Loop[Any, Any]) -> int:
        """How many times work went back in this run."""


class FastSimulator(Protocol):
    """Runs of a loop on plain data, with the outcomes its random player gives on the
    engine (an optional part: simulate plays act by act without it)."""

    def runner(self, spec: RandomPolicyFile, loop: Loop[Any, Any], max_acts: int,
               max_refusals: int) -> Callable[[np.random.Generator], tuple[Any, ...]] | None:
        """A function playing one run of `loop` from a run's generator (its outcome's
        fields after the run index), or None when `loop` is not one it plays."""


class Store(Protocol):
    """A loop's state between processes, in a folder (``crewbook step FAMILY``).

    `StoreBase` gives the parts most stores share (no settings, no sample source, the
    contract shown as `render_act` prints it)."""

    #: The names of the settings `load` takes (``crewbook step --workspace`` ...).
    settings: tuple[str, ...]

    def load(self, folder: Path, source: object = None,
             settings: Mapping[str, str] | None = None) -> Loop[Any, Any]:
        """The loop saved in `folder` (a new one of `source` when there is none yet);
        `LoopRefused` (with its code) when it cannot be loaded."""

    def save(self, loop: Loop[Any, Any], folder: Path) -> None:
        """Keep `loop`'s state in `folder`."""

    def sample_source(self, folder: Path, kind: str) -> object:
        """What `load(folder, source)` starts a small fresh run of `kind` from (the
        protocol suite keeps one between loads), or `Declined` with the reason when a
        run is only set up by the family's own commands."""

    def shown(self, loop: Loop[Any, Any], accepted: bool | None) -> tuple[dict[str, Any], str]:
        """The current contract of `loop` as ``crewbook step`` prints it: the JSON document
        and the text (`accepted`: None when no report was given)."""


class StoreBase:
    """What most stores share (see `Store`); a family's store subclasses it."""

    settings: tuple[str, ...] = ()

    def sample_source(self, folder: Path, kind: str) -> object:
        """Declined unless the store says how to start a sample run."""
        return Declined(f"{type(self).__name__} gives no sample source")

    def shown(self, loop: Loop[Any, Any], accepted: bool | None) -> tuple[dict[str, Any], str]:
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
class LoopFamily:
    """One family of loops, described once (see the module docstring)."""

    name: str
    kinds: tuple[str, ...]
    summary: str
    engine: Engine | Declined
    codec: Codec | Declined
    players: Players | Declined
    form: FormSpec | Declined
    rules: Callable[[], Sequence[Any]] | Declined
    store: Store | Declined
    graph: Callable[[Any], Any] | Declined
    frames: Callable[[Any], Any] | Declined
    #: ``sample(folder, kind)``: a picklable factory of a small fresh loop of `kind`,
    #: set up in `folder` (the protocol suite runs every family through it; simulate
    #: may send it to a worker; a notebook can try a family with it).
    sample: Callable[[Path, str], Callable[[], Loop[Any, Any]]]
    #: Optional: the file formats it reads, file name in ``schemas/`` → the pydantic
    #: model they are generated from (`crewbook.formats`).
    formats: Callable[[], Mapping[str, type[BaseModel]]] | Declined = Declined(
        "it reads no file format of its own")
    #: Optional: runs on plain data for `crewbook.simulate` (`FastSimulator`).
    fast_simulator: FastSimulator | Declined = Declined("simulate plays it act by act")

    #: The parts every family gives or declines, in the order docs list them.
    PARTS = ("engine", "codec", "players", "form", "rules", "store", "graph", "frames",
             "formats", "fast_simulator")

    def declined(self) -> dict[str, str]:
        """Part → the reason it is declined (empty when the family gives every part)."""
        return {p: str(getattr(self, p)) for p in self.PARTS
                if isinstance(getattr(self, p), Declined)}

    def __repr__(self) -> str:
        gives = [p for p in self.PARTS if not isinstance(getattr(self, p), Declined)]
        return f"<LoopFamily {self.name}: kinds {', '.join(self.kinds)}; gives {', '.join(gives)}>"


def resolve(dotted: str) -> Any:
    """The object at ``"package.module:attribute"``, imported now."""
    module, _, attribute = dotted.partition(":")
    try:
        found = importlib.import_module(module)
        for part in attribute.split(".") if attribute else ():
            found = getattr(found, part)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"cannot load {dotted!r} ({exc}); the registry names a module and "
                         "an attribute as 'package.module:NAME'") from None
    return found
