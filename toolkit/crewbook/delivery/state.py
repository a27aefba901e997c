"""A delivery task's state: who holds it, the plan, versions and verdicts, waits, the trail.

Immutable: engines build the next state from a draft (a dict of the fields) and
freeze it once per act, so `Loop.report` needs no defensive copy and `snapshot()`
is free.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Literal

from ..core.loop import JournalEntry, Verdict, quick_init
from .diffstat import ChangeSummary
from .review import ReviewDecision

OutcomeKind = Literal["pull_request", "already_done", "failed"]
#: The three ways a task ends (C5), as the ledger's finished reasons.
OUTCOMES: tuple[str, ...] = ("pull_request", "already_done", "failed")


@dataclass(frozen=True)
class PlanRecord:
    """The plan in force: acceptance criteria, path, the quick fix's files, its revision."""

    criteria: tuple[str, ...]
    summary: str
    path: str
    files: tuple[str, ...]
    revision: int
    act: int


@dataclass(frozen=True)
class Wait:
    """An agent at work: who, since when, until when, on which version, told what."""

    role: str
    since: datetime
    deadline: datetime
    launch: int
    act: int
    version: int
    instructions: str
    fixes: tuple[str, ...] = ()
    focus: tuple[str, ...] = ()
    steps: int | None = None
    sent_back: bool = False


@dataclass(frozen=True)
class PendingQuestion:
    """A question an agent asked; the coordinator answers before anything else."""

    role: str
    text: str
    act: int


@dataclass(frozen=True)
class Step:
    """One accepted act on the task's trail (what the drawing and `path_frame` show)."""

    act: int
    actor: str
    move: str
    summary: str
    version: int
    at: datetime
    verdict: str | None = None
    target: str | None = None
    sent_back: bool = False


@dataclass(frozen=True)
class Outcome:
    """How the task ended (C5): a pull request, already done, or failed with its reason."""

    kind: OutcomeKind
    reason: str
    version: int
    review: ReviewDecision | None = None
    description: str | None = None
    path: str | None = None

    @property
    def pr_line(self) -> str | None:
        """The pull-request description's last line (None when there is no pull request)."""
        if self.kind != "pull_request" or self.review is None:
            return None
        return self.review.pr_line(self.path)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data."""
        return {"kind": self.kind, "reason": self.reason, "version": self.version,
                "pr_line": self.pr_line, "description": self.description, "path": self.path,
                "review": self.review.to_dict() if self.review else None}

    def __str__(self) -> str:
        if self.kind == "pull_request":
            return f"pull request of version {self.version}; {self.pr_line}"
        return f"{self.kind.replace('_', ' ')}: {self.reason}"


@dataclass(frozen=True)
class TaskState:
    """Where a delivery task is. `holder` is the role whose turn it is (the architect is
    the coordinator in coordinator mode); None once the task has ended."""

    holder: str | None
    plan: PlanRecord | None = None
    path: str = "full"
    version: int = 0
    head: str | None = None
    files: tuple[str, ...] = ()
    change: ChangeSummary | None = None
    launches: Mapping[str, int] = field(default_factory=dict)
    revisions: int = 0
    steps: int = 0
    started: datetime | None = None
    now: datetime | None = None
    wait: Wait | None = None
    question: PendingQuestion | None = None
    verdicts: tuple[Verdict, ...] = ()
    findings: tuple[str, ...] = ()
    flagged: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()
    trail: tuple[Step, ...] = ()
    sent_back: int = 0
    journal: tuple[JournalEntry, ...] = ()
    outcome: Outcome | None = None
    previous: str | None = None

    def latest(self, role: str, version: int | None = None) -> Verdict | None:
        """The last verdict `role` gave (on `version` when given)."""
        for v in reversed(self.verdicts):
            if v.role == role and (version is None or v.covers(version)):
                return v
        return None


for _fast in (PlanRecord, Wait, PendingQuestion, Step, Outcome):
    quick_init(_fast)  # built on every act: fill each at once (same objects, `quick_init`)


def freeze(draft: Mapping[str, Any]) -> TaskState:
    """The state a draft describes (every field present; no per-call introspection)."""
    state = _new_object(TaskState)
    _set_attribute(state, "__dict__", dict(draft))
    return state


_new_object: Final = object.__new__
_set_attribute: Final = object.__setattr__
