"""The one clock of crewbook: `utc_now` (the default) and `ManualClock`, which moves only
when told, so notebooks, simulations and tests run hours of work in milliseconds."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from ..errors import UsageError

__all__ = ["EPOCH", "ManualClock", "iso_text", "utc_now", "utc_now_text"]


#: When every `ManualClock` starts by default: 2025-03-01 09:00 UTC.
EPOCH: Final = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


class ManualClock:
    """A clock that moves only when told (`advance`, `set`, `catch_up`): the one clock of
    notebooks, simulations and tests. Calling it returns the current time."""

    __slots__ = ("now",)

    def __init__(self, start: datetime | str = EPOCH) -> None:
        self.now = _aware(datetime.fromisoformat(start) if isinstance(start, str) else start)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta | None = None, *, ms: int = 0, hours: float = 0,
                minutes: float = 0, seconds: float = 0) -> datetime:
        """Move forward by `delta` (or ms/hours/minutes/seconds); return the new time."""
        if delta is None and not (hours or minutes or seconds) and ms >= 0:
            self.now += timedelta(milliseconds=ms)  # the simulation's path: one act's time
            return self.now
        step = (delta or timedelta()) + timedelta(milliseconds=ms, hours=hours,
                                                  minutes=minutes, seconds=seconds)
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

    def catch_up(self, when: datetime) -> datetime:
        """Move to `when` if it is later, else stay: a timer or a recorded time that may
        already have passed (simulation, replay)."""
        if when > self.now:
            self.now = when
        return self.now

    def __repr__(self) -> str:
        return f"ManualClock({self.now.isoformat()!r})"


def _aware(when: datetime) -> datetime:
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def utc_now() -> datetime:
    """The default clock."""
    return datetime.now(UTC)


#: The second `utc_now_text` last formatted: its first microsecond since the epoch, and
#: its text up to the seconds with the dot.
_SECOND: list[Any] = [-1, ""]


def utc_now_text() -> str:
    """``utc_now().isoformat()``, made faster: the text up to the seconds is formatted once
    per second (a loop stamps every act it logs with the time). The same format as
    `datetime.isoformat`: ``2025-03-01T09:00:00.250000+00:00``, no fraction on a whole
    second."""
    now = time.time_ns() // 1000
    last = _SECOND
    micros = now - last[0]
    if not 0 <= micros < 1_000_000:  # a new second (or the clock went back)
        seconds = now // 1_000_000
        head = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.")
        last[0], last[1] = seconds * 1_000_000, head
        micros = now - last[0]
    else:
        head = last[1]
    if micros:
        return head + str(1_000_000 + micros)[1:] + "+00:00"  # six digits, zeros first
    return head[:-1] + "+00:00"


#: `iso_text`'s memo: UTC time → its text; cleared when full (bounded memory).
_ISO: dict[datetime, str] = {}
_ISO_MAX: Final = 4096


def iso_text(when: datetime) -> str:
    """``when.isoformat()``, remembered for UTC times (`datetime.isoformat` costs about a
    microsecond, a loop stamps every event and deadline with it, and simulated tasks on a
    `ManualClock` meet the same times again and again). Equal UTC datetimes have the same
    text; times in another zone (or naive, or a subclass) are formatted each time."""
    if when.tzinfo is not UTC or type(when) is not datetime:  # not a subclass's own text
        return when.isoformat()
    text = _ISO.get(when)
    if text is None:
        if len(_ISO) >= _ISO_MAX:
            _ISO.clear()
        text = _ISO[when] = when.isoformat()
    return text
