"""The one clock: notebooks and tests set it by hand, simulations advance it by acts."""

from __future__ import annotations

from datetime import timedelta

import pytest

from crewbook.core.clock import EPOCH, ManualClock
from crewbook.errors import UsageError


def test_simulation_uses_the_one_clock() -> None:
    assert ManualClock()() == EPOCH


def test_advance_by_milliseconds_and_by_parts_agree() -> None:
    a, b = ManualClock(), ManualClock()
    a.advance(ms=90_500)
    b.advance(timedelta(seconds=30), minutes=1, ms=500)
    assert a() == b() == EPOCH + timedelta(seconds=90.5)


def test_the_clock_never_goes_back() -> None:
    clock = ManualClock()
    with pytest.raises(UsageError):
        clock.advance(ms=-1)
    with pytest.raises(UsageError):
        clock.set(EPOCH - timedelta(seconds=1))
    assert clock.catch_up(EPOCH - timedelta(hours=1)) == EPOCH  # a timer already passed
    assert clock.catch_up(EPOCH + timedelta(hours=1)) == EPOCH + timedelta(hours=1)
