"""Fixtures of the delivery tests: a fixed clock, tasks, loops, and the refusal check
every limit test uses (refused, with its code, and nothing changed or logged)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest

from crewbook import LoopRefused
from crewbook.delivery import (
    Built,
    CoordinatorLoop,
    Delegate,
    DeliveryLoop,
    DeliveryReport,
    Judgement,
    Limits,
    ManualClock,
    Plan,
    StandardLoop,
    Task,
)

CRITERIA = ("the report downloads as CSV", "the columns match the on-screen table")
FILES = ("app/export.py", "tests/test_export.py")


def make_task(**kwargs: Any) -> Task:
    """A CSV-export task; keywords override its fields (``limits=`` takes a dict too)."""
    limits = kwargs.pop("limits", {})
    if isinstance(limits, dict):
        limits = Limits(**limits)
    return Task(id="csv-export", description="Export the report as CSV", limits=limits,
                **kwargs)


@pytest.fixture
def clock() -> ManualClock:
    """A clock stopped at 2025-03-01 09:00 UTC; reports' durations move task time."""
    return ManualClock()


@pytest.fixture
def coordinator(clock: ManualClock) -> Callable[..., CoordinatorLoop]:
    """Build a coordinator loop on the fixed clock: ``coordinator(limits={...})``."""
    return lambda **kw: CoordinatorLoop(make_task(**kw), clock=clock)


@pytest.fixture
def standard(clock: ManualClock) -> Callable[..., StandardLoop]:
    """Build a standard loop on the fixed clock."""
    return lambda **kw: StandardLoop(make_task(**kw), clock=clock)


def step(loop: DeliveryLoop, reports: Iterable[DeliveryReport]) -> DeliveryLoop:
    """Apply every report (each must be accepted)."""
    for report in reports:
        loop.report(report)
    return loop


def build_v1() -> list[DeliveryReport]:
    """Plan, delegate to the developer, version 1 built (ten minutes of work)."""
    return [Plan(CRITERIA), Delegate("developer", "add the CSV export"),
            Built(FILES, duration_ms=600_000)]


def verified(version_files: tuple[str, ...] = FILES) -> list[DeliveryReport]:
    """The full path up to the reviewer's approval of version 1."""
    return [*build_v1(), Delegate("qa", "verify version 1"), Judgement("qa", "pass"),
            Delegate("reviewer", "review version 1"), Judgement("reviewer", "approved")]


def snapshot_of(loop: DeliveryLoop) -> tuple[int, Any, Any, int]:
    """What a refusal must leave alone: the ledger, the status, the contract, the acts."""
    events = getattr(loop.ledger, "events", None)
    count = len(events) if isinstance(events, list) else int(getattr(loop.ledger, "events", 0))
    return count, loop.status().to_dict(), loop.contract().to_dict(), loop.acts


def assert_refused(loop: DeliveryLoop, report: DeliveryReport, code: str,
                   *words: str) -> LoopRefused:
    """`report` is refused with `code` (and a message holding `words`); nothing changed."""
    before = snapshot_of(loop)
    with pytest.raises(LoopRefused) as info:
        loop.report(report)
    assert info.value.code == code, str(info.value)
    for word in words:
        assert word in str(info.value), str(info.value)
    assert snapshot_of(loop) == before
    return info.value
