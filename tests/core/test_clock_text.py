"""`utc_now_text`: the loops' fast time stamp has `datetime.isoformat`'s exact format."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from crewbook.core import clock


def test_utc_now_text_lies_between_two_readings_of_the_clock() -> None:
    before = datetime.now(UTC)
    text = clock.utc_now_text()
    after = datetime.now(UTC)
    assert before <= datetime.fromisoformat(text) <= after
    assert text.endswith("+00:00")


@pytest.mark.parametrize("ns", [1_733_256_000_000_000_000, 1_733_256_000_250_000_123,
                                1_733_256_001_000_001_999])
def test_utc_now_text_formats_as_isoformat(ns: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clock.time, "time_ns", lambda: ns)
    seconds, micros = divmod(ns // 1000, 1_000_000)
    expected = datetime.fromtimestamp(seconds, UTC).replace(microsecond=micros).isoformat()
    assert clock.utc_now_text() == expected


def test_utc_now_text_follows_the_clock_across_seconds_and_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The cached second is left when the clock moves past it, forward or back."""
    readings = [1_733_256_000_999_999_000, 1_733_256_001_000_000_000, 1_733_256_000_500_000_000,
                1_733_256_000_000_000_000, 1_733_256_002_000_000_001, 1_733_256_002_999_999_999]
    for ns in readings:
        monkeypatch.setattr(clock.time, "time_ns", lambda ns=ns: ns)
        seconds, micros = divmod(ns // 1000, 1_000_000)
        when = datetime.fromtimestamp(seconds, UTC).replace(microsecond=micros)
        assert clock.utc_now_text() == when.isoformat()
