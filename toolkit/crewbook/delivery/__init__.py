"""Delivery roles and the coordinator (SPEC C): roles, standard and coordinator loops with
the platform's limits, and the review policy.

- `load_catalogue()`: the seven roles (C1) with their step and tools, built in
  (``builtin/roles.yaml``) plus a project's ``_codev/delivery.yaml``; `.frame()`,
  `.permissions()` (a tool × role matrix).
- `Task` (description, mode, review policy, quick fix / focused recheck) and its
  `Limits` (C4); `ManualClock` (from `crewbook.core.clock`) for exact time in notebooks and tests.
- `CoordinatorLoop` (C3–C6) and `StandardLoop` (C2), both on the Loop protocol
  (`contract()`, `report()`, `status()`, `snapshot()`/`restore()`, a ledger);
  `start_task()` picks the mode. Moves and reports: `Plan`, `Delegate`, `Answer`,
  `Revise`, `Finalise`, `Fail`; `Built`, `Judgement`, `Result`, `Question`; `Expire`.
- `review_required(change, policy)` (C7), a pure function; change summaries from
  ``git diff --numstat --summary``, a unified diff or by hand (`parse_change`,
  `read_change`, `ChangeSummary.of`).

Importing this package is cheap: pandas and graphviz load only when a frame or a
drawing is asked for.
"""

from __future__ import annotations

from ..core.loop import ManualClock
from .catalogue import Role, RoleCatalogue, builtin_catalogue, load_catalogue
from .codec import (
    Answer,
    Built,
    Delegate,
    DeliveryReport,
    Expire,
    Fail,
    Finalise,
    Judgement,
    Plan,
    Question,
    Result,
    Revise,
    parse_report,
)
from .coordinator import CoordinatorLoop
from .diffstat import (
    ChangeSummary,
    FileChange,
    Unreadable,
    from_numstat,
    from_unified_diff,
    parse_change,
    read_change,
)
from .engine import DeliveryLoop
from .model import ROLE_IDS, SENSITIVE, Limits, ReviewPolicy, Task, format_models, load_task
from .review import ReviewDecision, load_review_policy, review_required, sensitive_matches
from .standard import StandardLoop, replay, start_task
from .state import Outcome, TaskState

__all__ = [
    "ROLE_IDS",
    "SENSITIVE",
    "Answer",
    "Built",
    "ChangeSummary",
    "CoordinatorLoop",
    "Delegate",
    "DeliveryLoop",
    "DeliveryReport",
    "Expire",
    "Fail",
    "FileChange",
    "Finalise",
    "Judgement",
    "Limits",
    "ManualClock",
    "Outcome",
    "Plan",
    "Question",
    "Result",
    "ReviewDecision",
    "ReviewPolicy",
    "Revise",
    "Role",
    "RoleCatalogue",
    "StandardLoop",
    "Task",
    "TaskState",
    "Unreadable",
    "builtin_catalogue",
    "format_models",
    "from_numstat",
    "from_unified_diff",
    "load_catalogue",
    "load_review_policy",
    "load_task",
    "parse_change",
    "parse_report",
    "read_change",
    "replay",
    "review_required",
    "sensitive_matches",
    "start_task",
]

