"""Task and limits (SPEC C4): defaults, files, the clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from crewbook import InvalidInputError
from crewbook.delivery import Limits, ManualClock, ReviewPolicy, Task, load_task


def test_defaults() -> None:
    task = Task(description="Export the report as CSV")
    assert task.mode == "coordinator"
    assert task.policy.policy == "always"
    assert not task.quick_fix
    assert not task.focused_recheck
    limits = task.limits
    assert limits.launch_limit("developer") == 5
    assert limits.launch_limit("other") == 3
    assert limits.wait == timedelta(minutes=45)
    assert limits.duration == timedelta(hours=4)
    assert Task(description="x", review="risk-based").policy.risk_based
    policy = ReviewPolicy(policy="risk-based", max_lines=120)
    assert Task(description="x", review=policy).policy.max_lines == 120


def test_every_wait_has_a_deadline() -> None:
    with pytest.raises(ValidationError):
        Limits(wait_minutes=None)  # type: ignore[arg-type]
    assert Limits(steps=None).steps is None  # other caps may be lifted


def test_load_task(tmp_path: Path) -> None:
    path = tmp_path / "task.yaml"
    path.write_text("id: csv-export\ndescription: Export as CSV\nreview: risk-based\n"
                    "limits: {steps: 20, launches: {qa: 2}}\n", "utf-8")
    task = load_task(path)
    assert task.limits.launch_limit("qa") == 2
    assert task.policy.risk_based
    path.write_text("description: x\nmode: solo\nlimit: {}\n", "utf-8")
    with pytest.raises(InvalidInputError) as info:
        load_task(path)
    assert sorted(info.value.codes) == ["invalid_value", "unknown_key"]


def test_manual_clock() -> None:
    clock = ManualClock("2025-03-01T09:00:00")
    assert clock() == datetime(2025, 3, 1, 9, tzinfo=UTC)
    assert clock.advance(minutes=90).hour == 10
    with pytest.raises(ValueError, match="forward"):
        clock.set("2025-03-01T08:00:00+00:00")
    with pytest.raises(ValueError, match="forward"):
        clock.advance(timedelta(seconds=-1))
