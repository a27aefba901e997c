"""The engine's act stamping and its sink: the one seam between a loop's events and
where they go (a fast path each, documented here, not spread through `Loop`).

- `stamp_events`: the events of one act get the loop's ``loop``, one ``ts`` and the run;
  an event's own ``ts`` and ``run`` win (the delivery loops stamp their events with the
  task's own time). Engines whose ``transition`` returns new dicts that nothing else
  holds (``fresh_events``) are stamped in place instead of copied (the same keys and
  values; only their order differs).
- `appender`: a `Ledger`'s ``append_built`` (the engine's own events, trusted), else
  the sink's ``append_many`` (one lock and one write per act: they land together or
  not at all), else one ``append`` each. `core.commit` commits through it too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from .sinks import EventSink


def stamp_events(events: Sequence[Mapping[str, Any]], kind: str, run: str | None,
                 fresh: bool, now: Callable[[], str]) -> list[dict[str, Any]]:
    """`events` stamped with ``loop`` `kind`, the ``ts`` `now()` (read once, and only
    when an event has none) and `run` (when given), where they lack them; `fresh`: the
    events are a list of new dicts, stamped in place."""
    ts: str | None = None
    stamped: list[dict[str, Any]]
    if fresh and type(events) is list:  # the engine's own dicts: in place
        stamped = cast("list[dict[str, Any]]", events)
        for event in stamped:
            if "loop" not in event:
                event["loop"] = kind
            if "ts" not in event:
                if ts is None:
                    ts = now()
                event["ts"] = ts
            if run is not None and "run" not in event:
                event["run"] = run
        return stamped
    for given in events:
        if "ts" not in given:
            ts = now()
            break
    if run is None:
        return [{"loop": kind, "ts": ts, **event} for event in events]
    # an event's own run keeps its place, else the run goes last (as `setdefault` puts it)
    return [{"loop": kind, "ts": ts, **event, "run": event.get("run", run)}
            for event in events]


def append_events(ledger: EventSink, events: Sequence[Mapping[str, Any]]) -> None:
    """Log the events of one act (or a batch) together, through `appender`."""
    appender(ledger)(events)


def appender(ledger: EventSink) -> Callable[[Sequence[Mapping[str, Any]]], Any]:
    """How a loop logs the events of one act in `ledger`: the one seam between the
    engines and their sinks (an engine that logs every act in the same sink looks it up
    once).

    A `crewbook.Ledger` takes them by ``append_built`` (the events an engine built,
    trusted for what it formatted: one lock and one write, no model built); any other
    sink by ``append_many`` when it has one (`EventSink`: all of an act at once), else
    one ``append`` each."""
    batch = getattr(ledger, "append_built", None) or getattr(ledger, "append_many", None)
    if batch is not None:
        return cast("Callable[[Sequence[Mapping[str, Any]]], Any]", batch)

    def one_by_one(events: Sequence[Mapping[str, Any]]) -> None:
        for event in events:
            ledger.append(event)
    return one_by_one



__all__ = ["append_events", "appender", "stamp_events"]
