"""What a loop hands out and the rules every engine shares (the values of the Loop
protocol, `crewbook.core.loop`).

- `Act`: the contract of the next act (who acts, on what, within which limits), with
  its `JournalEntry`s (decisions pinned into every later contract) and its route
  (`LazyRoute`, resolved by the loop's `RouteSource` when first read);
- `Status`: a read-only view of a loop, with its `Cap`s;
- `Transition`: what an accepted report does (the next state and its events);
- `Snapshot`: a loop's state at one act, to restore later;
- the shared rules: caps (`Cap`, `check_caps`), who may give a verdict
  (`require_role`), and the exact-version rule (`Verdict.covers`).
"""

from __future__ import annotations

import html
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, is_dataclass
from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar

from ..errors import LoopRefused
from .quickinit import quick_init

State = TypeVar("State")

#: A reached cap, as a CSS badge (the ⛔ emoji is an empty box in Debian's default fonts).
_REACHED = ("<span style='background:#c62828;color:#fff;border-radius:3px;padding:0 4px;"
            "font-size:85%'>reached</span>")


class RouteSource(Protocol):
    """Role → the route its contract carries (`crewbook.routing.router.Router` is the one
    crewbook gives every loop)."""

    def __call__(self, role: str | None) -> Mapping[str, Any] | None:
        """The route of `role` (model, native effort, tier, effort...), or None."""


class LazyRoute(Mapping[str, Any]):
    """A contract's route, resolved by the loop's router the first time it is read.

    Routing reads profile files; a loop that is stepped without anyone reading
    ``Act.route`` (a benchmark, a simulation) never pays for it. It reads and compares
    like the mapping the router returns (an empty one when the router has no route).
    """

    __slots__ = ("_resolved", "_role", "_router")

    def __init__(self, router: RouteSource, role: str) -> None:
        self._router, self._role = router, role
        self._resolved: Mapping[str, Any] | None = None

    @property
    def router(self) -> RouteSource:
        """The router this route is resolved by."""
        return self._router

    def _route(self) -> Mapping[str, Any]:
        if self._resolved is None:
            self._resolved = self._router(self._role) or {}
        return self._resolved

    def __getitem__(self, key: str) -> Any:
        return self._route()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._route())

    def __len__(self) -> int:
        return len(self._route())

    def __repr__(self) -> str:
        return repr(dict(self._route()))


@dataclass(frozen=True)
class JournalEntry:
    """One decision pinned into every later contract (B8): steering, approval, verdict…"""

    kind: str
    text: str
    by: str | None = None
    act: int | None = None


@dataclass(frozen=True)
class Cap:
    """A counter and its limit; ``limit=None`` means unlimited (a spec's ``0``)."""

    name: str
    used: int
    limit: int | None

    @property
    def reached(self) -> bool:
        """True when no more is allowed."""
        return self.limit is not None and self.used >= self.limit

    @property
    def left(self) -> int | None:
        """How many remain, or None when unlimited."""
        return None if self.limit is None else max(0, self.limit - self.used)

    def __str__(self) -> str:
        return f"{self.name} {self.used}/{'∞' if self.limit is None else self.limit}"


@dataclass(frozen=True)
class Verdict:
    """A verdict given by a role on one exact version of the work."""

    role: str
    verdict: str
    version: str | int | None = None
    act: int | None = None

    def covers(self, version: str | int | None) -> bool:
        """Whether this verdict speaks for `version` (the exact-version rule, C4.2)."""
        return self.version == version


@dataclass(frozen=True)
class Act:
    """The contract of the next act: who acts, on what, and within which limits."""

    loop: str
    act: int
    role: str | None
    stage: str | None = None
    receives: tuple[str, ...] = ()
    expects: str | None = None
    prompt_path: str | None = None
    budget: Mapping[str, int | None] = field(default_factory=dict)
    attempt: int = 1
    moves: tuple[str, ...] = ()
    feedback: tuple[str, ...] = ()
    journal: tuple[JournalEntry, ...] = ()
    route: Mapping[str, Any] | None = None
    finished: bool = False
    finished_reason: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data."""
        data: dict[str, Any] = plain(self)
        return data

    def __repr__(self) -> str:
        if self.finished:
            return f"<Act {self.loop} finished: {self.finished_reason}>"
        who = self.stage or self.role
        return (f"<Act {self.loop} #{self.act}: {who} (attempt {self.attempt}), "
                f"receives {list(self.receives)}, expects {self.expects}>")

    def _repr_html_(self) -> str:
        if self.finished:
            return (f"<div class='crewbook-act'><b>{html.escape(self.loop)}</b> finished: "
                    f"<code>{html.escape(str(self.finished_reason))}</code></div>")
        rows = [
            ("role", self.role), ("stage", self.stage), ("attempt", self.attempt),
            ("receives", ", ".join(self.receives)), ("expects", self.expects),
            ("prompt", self.prompt_path),
            ("route", _route_text(self.route)),
            ("budget", ", ".join(f"{k}={v}" for k, v in self.budget.items())),
            ("moves", ", ".join(self.moves)),
        ]
        body = "".join(
            f"<tr><th style='text-align:left'>{k}</th><td>{html.escape(str(v))}</td></tr>"
            for k, v in rows if v not in (None, "", ())
        )
        feedback = "".join(f"<li>{html.escape(f)}</li>" for f in self.feedback)
        journal = "".join(
            f"<li><b>{html.escape(j.kind)}</b> {html.escape(j.text)}</li>" for j in self.journal
        )
        return (
            f"<div class='crewbook-act'><b>{html.escape(self.loop)}</b> act #{self.act}"
            f"<table>{body}</table>"
            + (f"<p>feedback:</p><ul>{feedback}</ul>" if feedback else "")
            + (f"<p>journal:</p><ul>{journal}</ul>" if journal else "") + "</div>"
        )


@dataclass(frozen=True)
class Status:
    """A read-only view of a loop: where it is, its counters and caps, how it ended."""

    loop: str
    acts: int
    current: str | None
    previous: str | None
    finished: bool
    finished_reason: str | None
    counters: Mapping[str, int] = field(default_factory=dict)
    caps: tuple[Cap, ...] = ()
    journal: tuple[JournalEntry, ...] = ()
    path: tuple[str, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data."""
        data: dict[str, Any] = plain(self)
        return data

    def __repr__(self) -> str:
        state = f"finished ({self.finished_reason})" if self.finished else f"at {self.current}"
        caps = ", ".join(str(c) for c in self.caps)
        return f"<Status {self.loop} {state} after {self.acts} acts; caps: {caps or 'none'}>"

    def _repr_html_(self) -> str:
        state = (f"finished: <code>{html.escape(str(self.finished_reason))}</code>"
                 if self.finished else f"at <b>{html.escape(str(self.current))}</b>")
        caps = "".join(
            f"<tr><td>{html.escape(c.name)}</td><td>{c.used}</td>"
            f"<td>{'∞' if c.limit is None else c.limit}</td>"
            f"<td>{_REACHED if c.reached else ''}</td></tr>" for c in self.caps
        )
        path = " → ".join(html.escape(p) for p in self.path)
        return (
            f"<div class='crewbook-status'><b>{html.escape(self.loop)}</b> {state} after "
            f"{self.acts} acts<br><small>{path}</small>"
            + (f"<table><tr><th>cap</th><th>used</th><th>limit</th><th></th></tr>{caps}</table>"
               if caps else "") + "</div>"
        )


@dataclass(frozen=True)
class Transition(Generic[State]):
    """What an accepted report does: the next state and the events to log."""

    state: State
    events: Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class Snapshot(Generic[State]):
    """A loop's state at one act, to `restore` later."""

    loop: str
    act: int
    state: State
    #: The events of the loop's run up to this act (None: the loop does not know its
    #: whole run, e.g. it was reopened); a restore copies them into the forked run.
    events: tuple[Mapping[str, Any], ...] | None = field(default=None, repr=False,
                                                         compare=False)


for _fast in (JournalEntry, Cap, Verdict, Transition, Snapshot):
    quick_init(_fast)

def check_caps(caps: Sequence[Cap], move: str, allowed_at_cap: Sequence[str]) -> None:
    """Refuse `move` when a cap is reached and the move is not allowed at a cap."""
    reached = [c for c in caps if c.reached]
    if reached and move not in allowed_at_cap:
        names = ", ".join(str(c) for c in reached)
        raise LoopRefused(
            f"{move!r} is refused: cap reached ({names}); only "
            f"{' or '.join(allowed_at_cap)} remain", code="cap_reached",
        )


def require_role(role: str, allowed: Sequence[str], what: str) -> None:
    """Refuse when `role` is not among the roles that may do `what`."""
    if role not in allowed:
        raise LoopRefused(
            f"{role!r} may not {what}; only {', '.join(allowed)} may", code="not_allowed",
        )


def _route_text(route: Mapping[str, Any] | None) -> str | None:
    """`model (native effort) — tier × effort` of a route, for displays."""
    if not route:
        return None
    model = route.get("model") or "no model (no routing profile)"
    native = f" ({route['native_text']})" if route.get("native_text") else ""
    return f"{model}{native} — {route.get('tier')} × {route.get('effort')}"


def route_line(route: Mapping[str, Any] | None) -> str:
    """A route as a prompt states it: `claude-sonnet-4 · reasoning effort medium
    (standard/medium, role default)`."""
    if not route:
        return "no route"
    if route.get("model") is None:
        return f"no model ({route.get('tier')}/{route.get('effort')}): {route.get('hint')}"
    return (f"{route['model']} · {route.get('native_text')} ({route['tier']}/{route['effort']}, "
            f"{route['via']})")


def plain(value: Any) -> Any:
    """`value` as JSON-ready data: dataclasses and mappings as dicts, tuples as lists,
    times as ISO text."""
    if is_dataclass(value) and not isinstance(value, type):
        return {k: plain(v) for k, v in asdict(value).items()}
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    return value


__all__ = ["Act", "Cap", "JournalEntry", "LazyRoute", "RouteSource", "Snapshot", "State",
           "Status", "Transition", "Verdict", "check_caps", "plain", "require_role",
           "route_line"]
