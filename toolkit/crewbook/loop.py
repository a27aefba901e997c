"""Deprecated home of the Loop protocol: it lives in `crewbook.core` now.

``from crewbook.loop import Loop, Act, ...`` keeps working (a `PendingDeprecationWarning`
says where to import from); new code imports `crewbook.core.loop` (the protocol),
`crewbook.core.clock` (`ManualClock`, `utc_now`) and `crewbook.core.sinks`
(`EventSink`, `MemoryLedger`), or the names from `crewbook` itself.
"""

from __future__ import annotations

import warnings

from .core.clock import EPOCH, ManualClock, utc_now
from .core.loop import (
    Act,
    Cap,
    JournalEntry,
    LazyRoute,
    Loop,
    RouteSource,
    Snapshot,
    Status,
    Transition,
    Verdict,
    check_caps,
    require_role,
)
from .core.sinks import EventSink, MemoryLedger

#: The old name of the route protocol (`crewbook.routing.router.Router` is the router).
Router = RouteSource

warnings.warn("crewbook.loop moved to crewbook.core (crewbook.core.loop, .clock, .sinks); "
              "import from there or from crewbook", PendingDeprecationWarning, stacklevel=2)

__all__ = ["EPOCH", "Act", "Cap", "EventSink", "JournalEntry", "LazyRoute", "Loop",
           "ManualClock", "MemoryLedger", "RouteSource", "Router", "Snapshot", "Status",
           "Transition", "Verdict", "check_caps", "require_role", "utc_now"]
