"""The crew engine's working state: plain data between acts, `CrewState` at the boundary.

`CrewState` (a frozen pydantic model) is what the loop shows and saves: ``loop.state``,
``loop.view``, snapshots, the state file. Copying it and validating a new `ActRecord` on
every act cost more than the act itself, so the engine works on a `Working` instead:
a slotted object whose trail and covered stories only grow (appended in place, never
copied), built once from a checked `CrewState` (`Working.of`) and turned back into one
only when someone asks (`Working.state`, cached by the loop until the next act).

Nothing outside `crewbook.crew.engine` holds a `Working`: snapshots and ``loop.state``
are `CrewState`s, immutable, so appending to a working trail never changes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from .model import ActRecord, BarFacts, CrewConfig, CrewState

if TYPE_CHECKING:
    from .backlog import Epic


class Rec(NamedTuple):
    """One accepted act, as the engine keeps it (an `ActRecord` once shown)."""

    act: int
    ts: str
    role: str
    verdict: str
    summary: str
    epic: str | None
    story: str | None

    @classmethod
    def new(cls, act: int, ts: str, role: str, verdict: str, summary: str, epic: str | None,
            story: str | None) -> Rec:
        """`Rec(...)` without the generated ``__new__`` (one call less on every act)."""
        return tuple.__new__(cls, (act, ts, role, verdict, summary, epic, story))

    def record(self) -> ActRecord:
        """The `ActRecord` `CrewState.trail` holds (checked: it leaves the engine here)."""
        return ActRecord(act=self.act, ts=self.ts, role=self.role, verdict=self.verdict,
                         summary=self.summary, epic=self.epic, story=self.story)


#: The `CrewState` fields a `Working` copies as they are (the others: trail, stories).
SCALARS = ("run", "config", "expected", "previous", "acts", "version", "attempt", "epic",
           "epic_axis", "story", "epics_started", "epics_covered", "promoted", "no_go",
           "dev_act", "bar", "bar_runs", "feedback", "finished_reason")


@dataclass(eq=False)
class Working:
    """The fields of `CrewState` (same names, same meaning), with the trail and the covered
    stories as lists the engine appends to, a set of the covered stories for lookups,
    and where the last scan for the next story stopped (`cursor`).

    A plain instance dictionary, not slots: an act's changes are taken with one
    ``__dict__.update`` (`apply`)."""

    run: str
    config: CrewConfig
    expected: str = "analyst"
    previous: str | None = None
    acts: int = 0
    version: int = 0
    attempt: int = 1
    epic: str | None = None
    epic_axis: str | None = None
    story: str | None = None
    epics_started: int = 1
    epics_covered: tuple[str, ...] = ()
    promoted: tuple[str, ...] = ()
    no_go: int = 0
    dev_act: int | None = None
    bar: BarFacts | None = None
    bar_runs: int = 0
    feedback: tuple[str, ...] = ()
    finished_reason: str | None = None
    stories_covered: list[tuple[str, str]] = field(default_factory=list)
    covered: set[tuple[str, str]] = field(default_factory=set)
    trail: list[Rec] = field(default_factory=list)
    #: `ActRecord`s of `trail[:len(records)]`, made when a `CrewState` was last asked for.
    records: list[ActRecord] = field(default_factory=list)
    #: (epic, i): every story of that `Epic` (that very parse) before index i is covered
    #: or fully checked, so the next open story is searched from i on.
    cursor: tuple[Epic, int] | None = None
    #: ``config.limit("rounds")``, read once.
    rounds: int | None = None

    @classmethod
    def of(cls, state: CrewState) -> Working:
        """A working copy of a (checked) state."""
        work = cls(**{name: getattr(state, name) for name in SCALARS})
        work.stories_covered = list(state.stories_covered)
        work.covered = set(work.stories_covered)
        work.trail = [Rec(r.act, r.ts, r.role, r.verdict, r.summary, r.epic, r.story)
                      for r in state.trail]
        work.records = list(state.trail)
        work.rounds = state.config.limit("rounds")
        return work

    def apply(self, up: Mapping[str, Any], rec: Rec | None = None,
              covered: tuple[str, str] | None = None) -> None:
        """Take an act's changes: `up` (fields set), `rec` (appended to the trail),
        `covered` (a story qa said go on)."""
        self.__dict__.update(up)  # the engine's own field names (see `CrewLoop._step`)
        if rec is not None:
            self.trail.append(rec)
        if covered is not None:
            self.stories_covered.append(covered)
            self.covered.add(covered)

    def state(self, up: Mapping[str, Any] | None = None, rec: Rec | None = None,
              covered: tuple[str, str] | None = None) -> CrewState:
        """The `CrewState` of this working state (with an act's changes not applied yet,
        for a store that saves the state before the loop takes it). Built without checks:
        every value came from a checked state or from the engine's own rules."""
        records = self.records
        if len(records) < len(self.trail):
            records.extend(r.record() for r in self.trail[len(records):])
        trail = tuple(records)
        stories = tuple(self.stories_covered)
        if rec is not None:
            trail = (*trail, rec.record())
        if covered is not None:
            stories = (*stories, covered)
        data: dict[str, Any] = {name: getattr(self, name) for name in SCALARS}
        if up:
            data.update({k: v for k, v in up.items() if k in data})
        return CrewState.model_construct(format=1, stories_covered=stories, trail=trail, **data)


__all__ = ["Rec", "Working"]
