"""The crew's cascade after qa's ``go`` (SPEC D1): the story is covered, then the loop
moves on by scope:

- ``story``: finished, ``scope_covered``;
- ``epic``: the next open story of the epic, else ``scope_covered``;
- ``all``: then the next change with an open story, then the workshop's next axis
  promoted to an epic (a new change); ``epics_exhausted`` when one is left but
  ``max_epics`` epics were worked on, ``scope_covered`` when nothing is left;
- ``workshop``: like ``all``, from the workshop's axes only.

Functions of the working state (`crew.working.Working`) and the backlog, called by
`crew.engine.CrewLoop`: they fill the act's field changes (``up``) and events, and
change nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .backlog import Backlog, Epic, Story, slug
from .model import ECHO_CHARS, WHOLE_EPIC
from .working import Working

Event = dict[str, Any]


def next_story(w: Working, epic: Epic, also: tuple[str, str] | None,
                up: dict[str, Any]) -> Story | None:
    """The first story of `epic` still to deliver (not covered, counting `also`, nor
    fully checked), or None; searched from where the last search on this very parse
    of the epic stopped (stories before it stay covered or checked: coverage only
    grows, and an edit of the file is a new parse), and that place noted in
    ``up["cursor"]``."""
    cursor = w.cursor
    stories = epic.stories
    i = cursor[1] if cursor is not None and cursor[0] is epic else 0
    name, covered = epic.name, w.covered
    while i < len(stories):
        story = stories[i]
        key = (name, story.title)
        if key not in covered and key != also and not story.checked:
            up["cursor"] = (epic, i)
            return story
        i += 1
    up["cursor"] = (epic, i)
    return None


def cover(backlog: Backlog, kind: str, w: Working, epic: Epic, covered: tuple[str, str],
          up: dict[str, Any], events: list[Event], ts: str, act: int) -> None:
    """qa said go: cover the story and move the cascade on (see the module docstring)."""
    up.update(expected="analyst", attempt=1, bar=None, feedback=(), dev_act=None)
    cfg = w.config
    if cfg.scope == "story":
        return _finish(kind, w, up, covered, events, ts, act, "scope_covered",
                            f"story {w.story!r} of {w.epic} delivered")
    nxt = next_story(w, epic, covered, up)
    if nxt is not None:
        up["story"] = nxt.title
        events.append({"loop": kind, "ts": ts, "kind": "transition", "stage": "story",
                       "summary": f"next story of {w.epic}: {nxt.title}",
                       "payload": {"act": act, "epic": w.epic, "from": w.story,
                                   "to": nxt.title}})
        return None
    epics_covered = (*w.epics_covered, covered[0])
    up["epics_covered"] = epics_covered
    if cfg.scope == "epic":
        return _finish(kind, w, up, covered, events, ts, act, "scope_covered",
                            f"epic {w.epic} delivered")
    all_covered = w.covered | {covered}
    name, axis = next_epic(backlog, w, all_covered, set(epics_covered))
    if name is None:
        return _finish(kind, w, up, covered, events, ts, act, "scope_covered",
                            "no epic left to deliver and the workshop is empty")
    limit = cfg.limit("epics")
    if limit is not None and w.epics_started >= limit:
        what = f"workshop axis {axis!r}" if axis else f"epic {name}"
        return _finish(kind, w, up, covered, events, ts, act, "epics_exhausted",
                            f"{what} is left but max_epics {limit} epics were worked on")
    first = backlog.next_story(name, all_covered) if axis is None else None
    up.update(epic=name, epic_axis=axis, epics_started=w.epics_started + 1,
              story=first.title if first else WHOLE_EPIC)
    if axis is not None:
        up["promoted"] = (*w.promoted, axis)
    events.append({"loop": kind, "ts": ts, "kind": "transition",
                   "stage": "workshop" if axis else "epic",
                   "summary": (f"workshop: axis {axis!r} promoted to epic {name}" if axis
                               else f"next epic: {name}"),
                   "payload": {"act": act, "from": w.epic, "to": name, "axis": axis}})
    return None

def next_epic(backlog: Backlog, w: Working, covered: set[tuple[str, str]], done: set[str]
               ) -> tuple[str | None, str | None]:
    """(change, None) for the next open change (scope all), or (slug, axis) for the
    workshop's next axis, or (None, None)."""
    if w.config.scope == "all":
        name = backlog.first_open(covered, done)
        if name is not None:
            return name, None
    return next_axis(backlog, w.promoted, done)

def _finish(kind: str, w: Working, up: dict[str, Any], covered: tuple[str, str] | None,
            events: list[Event], ts: str, act: int, reason: str, why: str) -> None:
    up["finished_reason"] = reason
    events.append(finish_event(kind, w, up, covered, ts, act, why))

def finish_event(kind: str, w: Working, up: Mapping[str, Any],
                  covered: tuple[str, str] | None, ts: str, act: int, why: str) -> Event:
    """The ``finish`` event, from the state after the act (`w` with `up`, `covered`)."""
    stories = len(w.stories_covered) + (covered is not None)
    return {"loop": kind, "ts": ts, "kind": "finish",
            "verdict": up["finished_reason"], "summary": why,
            "payload": {"act": act, "stories_covered": stories,
                        "epics_covered": list(up.get("epics_covered", w.epics_covered)),
                        "acts": up.get("acts", w.acts)}}


def next_axis(backlog: Backlog, promoted: tuple[str, ...], done: set[str]
              ) -> tuple[str | None, str | None]:
    """(change name, axis) of the workshop's first axis not promoted yet, or (None, None)."""
    for axis in backlog.workshop():
        name = slug(axis)
        if axis not in promoted and name not in done:
            return name, axis
    return None, None


#: Findings of a no-go fed back to the developer (each echoed up to `ECHO_CHARS`).
MAX_FINDINGS = 20


def echo(text: str) -> str:
    """`text` as status, feedback and journals echo it: at most `ECHO_CHARS` characters."""
    return text if len(text) <= ECHO_CHARS else text[:ECHO_CHARS - 1] + "…"


def left(used: int, limit: int | None) -> int | None:
    """What `used` leaves of `limit` (None: unlimited)."""
    return None if limit is None else max(0, limit - used)


__all__ = ["MAX_FINDINGS", "cover", "echo", "finish_event", "left", "next_axis", "next_epic",
           "next_story"]
