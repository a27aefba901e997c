"""The crew engine's working state: plain data between acts, `CrewState` at the boundary.

`CrewState` (a frozen pydantic model) is what the loop shows and saves: ``loop.state``,
``loop.view``, snapshots, the state file. Copying it and validating a new `ActRecord` on
every act cost more than the act itself, so the engine works on a `Working` instead:
a plain object with the same fields (declared once, `crewbook.crew.model.CrewFields`),
whose trail and covered stories only grow (appended in place, never copied), built once
from a checked `CrewState` (`Working.of`) and turned back into one only when someone
asks (`Working.state`, cached by the loop until the next act).

Nothing outside `crewbook.crew.engine` holds a `Working`: snapshots and ``loop.state``
are `CrewState`s, immutable, so appending to a working trail never changes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from .model import ActRecord, CrewFields, CrewState

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


#: The fields a `Working` copies as they are (`CrewFields` but the trail, the covered
#: stories and the format).
SCALARS: Final = tuple(name for name in CrewFields.__annotations__
                       if name not in ("format", "stories_covered", "trail"))


class Working(CrewFields):
    """The fields of `CrewState` (the one declaration, `CrewFields`), with the trail and
    the covered stories as lists the engine appends to, a set of the covered stories for
    lookups, and where the last scan for the next story stopped (`cursor`).

    A plain instance dictionary, not slots: an act's changes are taken with one
    ``__dict__.update`` (`apply`)."""

    # the two fields kept as lists here (the state holds tuples)
    stories_covered: list[tuple[str, str]]  # type: ignore[assignment]
    trail: list[Rec]  # type: ignore[assignment]
    covered: set[tuple[str, str]]
    #: `ActRecord`s of `trail[:len(records)]`, made when a `CrewState` was last asked for.
    records: list[ActRecord]
    #: (epic, i): every story of that `Epic` (that very parse) before index i is covered
    #: or fully checked, so the next open story is searched from i on.
    cursor: tuple[Epic, int] | None = None
    #: ``config.limit("rounds")``, read once.
    rounds: int | None = None

    @classmethod
    def of(cls, state: CrewState) -> Working:
        """A working copy of a (checked) state."""
        work = cls()
        for name in SCALARS:
            setattr(work, name, getattr(state, name))
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
