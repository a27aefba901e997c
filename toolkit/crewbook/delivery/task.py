"""A delivery task, its limits (SPEC C4) and the clock the engines read time from.

A `Task` has a description, a mode (``standard`` or ``coordinator``), a review
policy (``always``, the default, or ``risk-based``: C7), the optional paths it allows
(quick fix, focused recheck: C6, off by default) and its `Limits`: launches per role,
plan revisions, steps, total duration and the deadline of every wait. Tasks are
models, so they also load from YAML (`load_task`) and have a JSON Schema.

Time: engines call an injectable ``clock()``; `ManualClock` moves only when told,
and reports carry their own ``duration_ms``, so a notebook or a simulation runs hours
of work in milliseconds and tests are exact.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Final, Literal

from pydantic import Field

from ..errors import DeliveryError, UsageError
from ..models import FileModel, KebabId, Text, parse_model
from ..sources import read_yaml
from .review import ReviewMode, ReviewPolicy

Mode = Literal["standard", "coordinator"]
#: ``merge-conflict`` work always runs in standard mode (C2).
TaskKind = Literal["change", "merge-conflict"]
Limit = Annotated[int, Field(ge=1)] | None

#: Launches allowed per role and task when the task does not say (C4.3).
DEFAULT_LAUNCHES: Final[dict[str, int]] = {
    "architect": 2, "developer": 5, "qa": 5, "reviewer": 3, "web-tester": 3,
    "explorer": 6, "dependency-analyser": 3,
}
#: When every clock starts in examples and tests: 2025-03-01 09:00 UTC.
EPOCH: Final = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


class Limits(FileModel):
    """The platform's caps on one task (C4.3, C4.4); ``null`` means unlimited, except the
    wait deadline: every wait has one (C4.4)."""

    launches: dict[KebabId, Limit] = Field(
        default_factory=dict, description="Role id → how many times it may be launched "
        f"(defaults: {', '.join(f'{k} {v}' for k, v in DEFAULT_LAUNCHES.items())}).")
    default_launches: Limit = Field(3, description="Launches of a role not named anywhere.")
    plan_revisions: Limit = Field(2, description="How many times the plan may be revised.")
    steps: Limit = Field(60, description="Accepted acts (moves and reports) per task.")
    duration_minutes: Limit = Field(240, description="Total run time of the task.")
    wait_minutes: Annotated[int, Field(ge=1)] = Field(
        45, description="Deadline of every wait for an agent, from its launch or answer.")
    agent_steps: Limit = Field(None, description="Step budget of one agent launch.")
    quick_fix_steps: Annotated[int, Field(ge=1)] = Field(
        15, description="The developer's smaller step budget on the quick-fix path (C6).")

    def launch_limit(self, role: str) -> int | None:
        """How many times `role` may be launched."""
        if role in self.launches:
            return self.launches[role]
        return DEFAULT_LAUNCHES.get(role, self.default_launches)

    @property
    def duration(self) -> timedelta | None:
        """The total run time allowed."""
        return None if self.duration_minutes is None else timedelta(minutes=self.duration_minutes)

    @property
    def wait(self) -> timedelta:
        """How long any wait may last."""
        return timedelta(minutes=self.wait_minutes)


class Task(FileModel):
    """One task to deliver (SPEC C2–C7); see the module docstring."""

    id: KebabId = Field("task", description="A short kebab-case id (the ledger's run name).")
    description: Annotated[str, Field(strict=True, min_length=1)] = Field(
        description="What is asked, in the user's words.")
    mode: Mode = Field("coordinator", description="Who decides the next step: the platform "
                       "(standard, fixed order) or the coordinator.")
    kind: TaskKind = Field("change", description="'merge-conflict' always runs in standard mode.")
    review: ReviewMode | ReviewPolicy = Field(
        "always", description="'always' (default), 'risk-based', or a whole review policy.")
    quick_fix: bool = Field(False, description="Allow the quick-fix path (C6, off by default).")
    focused_recheck: bool = Field(False, description="Allow focused rechecks (C6, off by "
                                  "default).")
    limits: Limits = Field(default_factory=Limits)
    labels: dict[str, Text] = Field(default_factory=dict, description="Free notes (team, "
                                    "ticket…), copied into the ledger's init event.")

    @property
    def policy(self) -> ReviewPolicy:
        """The review policy in force."""
        return self.review if isinstance(self.review, ReviewPolicy) else ReviewPolicy(
            policy=self.review)

    @property
    def standard_only(self) -> bool:
        """Whether this work must run in standard mode (merge conflict resolution, C2)."""
        return self.kind == "merge-conflict"

    def __repr__(self) -> str:
        return (f"<Task {self.id} ({self.mode}, review {self.policy.policy}): "
                f"{self.description[:60]!r}>")


def load_task(path: Path | str) -> Task:
    """A task from a YAML file (`InvalidInputError` listing every problem)."""
    doc = read_yaml(Path(path))
    model, problems = parse_model(Task, doc)
    if model is None:
        raise DeliveryError(f"the task file {doc.name} is not valid", problems)
    assert isinstance(model, Task)
    return model


class ManualClock:
    """A clock that moves only when told (`advance`, `set`): for notebooks, simulations
    and tests. Calling it returns the current time."""

    def __init__(self, start: datetime | str = EPOCH) -> None:
        self.now = _aware(datetime.fromisoformat(start) if isinstance(start, str) else start)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta | None = None, *, hours: float = 0, minutes: float = 0,
                seconds: float = 0) -> datetime:
        """Move forward by `delta` (or hours/minutes/seconds); return the new time."""
        step = (delta or timedelta()) + timedelta(hours=hours, minutes=minutes, seconds=seconds)
        if step < timedelta():
            raise UsageError("a clock only moves forward")
        self.now += step
        return self.now

    def set(self, when: datetime | str) -> datetime:
        """Jump to `when` (not earlier than now)."""
        target = _aware(datetime.fromisoformat(when) if isinstance(when, str) else when)
        if target < self.now:
            raise UsageError(f"a clock only moves forward: {target} is before {self.now}")
        self.now = target
        return self.now

    def __repr__(self) -> str:
        return f"ManualClock({self.now.isoformat()!r})"


def _aware(when: datetime) -> datetime:
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
