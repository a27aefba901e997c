"""A delivery report's time and measures: how long an act took (``duration_ms``, checked:
C4.3), the wait of a launch, and times as the delivery loops write them in texts.
Durations and waits come back often, so their timedeltas are made once each.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import lru_cache

from ..errors import LoopRefused
from .codec import Measured


@lru_cache(maxsize=1024)
def duration(ms: int) -> timedelta:
    """A report's ``duration_ms`` as a timedelta (the same durations come back often, and
    making a timedelta from milliseconds costs more than a cache lookup)."""
    return timedelta(milliseconds=ms)


@lru_cache(maxsize=64)
def minutes(minutes: int) -> timedelta:
    """`Limits.wait` of a number of minutes (the same few come back for every task)."""
    return timedelta(minutes=minutes)


def fmt(when: datetime) -> str:
    """`when` as a text's clock time: ``HH:MM``, with seconds when it has any."""
    return when.strftime("%H:%M") if when.second == 0 else when.strftime("%H:%M:%S")


#: Longest duration one report may claim (a week): beyond, a typo or a forged clock.
MAX_DURATION_MS = 7 * 24 * 3_600_000


def check_measures(report: Measured) -> None:
    """Refuse measures that cannot be (C4.3): a negative or absurd ``duration_ms`` would
    move the task's time backwards past its run-time cap, or jump it by years."""
    ms = report.duration_ms
    if ms is not None and (type(ms) is not int or ms < 0 or ms > MAX_DURATION_MS):
        _bad_duration(ms)
    tokens_in, tokens_out, cost = report.tokens_in, report.tokens_out, report.cost
    if ((tokens_in is not None and not tokens_in >= 0)  # NaN too
            or (tokens_out is not None and not tokens_out >= 0)
            or (cost is not None and not cost >= 0)):
        for key, value in (("tokens_in", tokens_in), ("tokens_out", tokens_out),
                           ("cost", cost)):
            if value is not None and not value >= 0:
                raise LoopRefused(f"{key} {value!r} is negative or not a number",
                                  code="bad_report")


def _bad_duration(ms: object) -> None:
    """Refuse a ``duration_ms`` `check_measures` found wrong, saying why."""
    if isinstance(ms, bool) or not isinstance(ms, int):
        raise LoopRefused(f"duration_ms must be a whole number of milliseconds, not {ms!r}",
                          code="bad_report")
    if ms < 0:
        raise LoopRefused(f"duration_ms {ms} is negative: a report cannot move the task's "
                          "time backwards (C4.3); give the time the act took, 0 or more",
                          code="bad_report")
    if ms > MAX_DURATION_MS:
        raise LoopRefused(f"duration_ms {ms} is more than a week ({MAX_DURATION_MS} ms) for "
                          "one act: a typo? give the time the act took, in milliseconds",
                          code="bad_report")


__all__ = ["MAX_DURATION_MS", "check_measures", "duration", "fmt", "minutes"]
