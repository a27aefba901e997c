"""What `Loop.report` adds to an act's events (issue 25): engines whose events are their own
(``fresh_events``) are stamped in place with the same result as the copying path, and go
to whatever ledger the loop has now; `iso_text` is `datetime.isoformat`, remembered for
UTC times."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pandas as pd
import pytest

from crewbook.core import clock
from crewbook.core.clock import ManualClock, iso_text
from crewbook.core.loop import Act, Loop, Status, Transition


@dataclass(frozen=True)
class Count:
    value: int = 0


class Counter(Loop[Count, dict[str, Any]]):
    """Each report is one event: the report's own keys, then the engine's."""

    kind = "counter"
    copy_state = False

    def contract(self) -> Act:
        return Act(self.kind, self.acts + 1, "adder")

    def status(self) -> Status:
        return Status(self.kind, self.acts, "adder", None, False, None)

    def transition(self, state: Count, report: dict[str, Any]) -> Transition[Count]:
        return Transition(replace(state, value=state.value + 1),
                          [{"kind": "report", "role": "adder", **report}])


class FreshCounter(Counter):
    fresh_events = True


class Sink:
    """A sink with only `append`, remembering what it was given."""

    def __init__(self) -> None:
        self.got: list[dict[str, Any]] = []

    def append(self, event: dict[str, Any]) -> None:
        self.got.append(event)


class BatchSink(Sink):
    def append_many(self, events: list[dict[str, Any]]) -> None:
        self.got.append({"batch": len(events)})


REPORTS: list[dict[str, Any]] = [
    {},  # the loop stamps loop, ts and run
    {"ts": "2025-03-01T10:00:00+00:00"},  # an event's own ts wins
    {"run": "other", "loop": "mine"},  # and its own run and loop
    {"ts": None},  # even a None it gives itself
]


@pytest.mark.parametrize("run", [None, "r1"])
def test_fresh_events_are_stamped_as_the_copying_path_stamps_them(run: str | None) -> None:
    logged = []
    for engine in (Counter, FreshCounter):
        sink = Sink()
        loop = engine(Count(), ledger=sink, run=run, clock=ManualClock())
        for report in REPORTS:
            loop.report(report)
        logged.append(sink.got)
    copied, in_place = logged
    assert copied == in_place  # same keys and values (the order of keys may differ)
    assert in_place[0] == {"kind": "report", "role": "adder", "loop": "counter",
                           "ts": "2025-03-01T09:00:00+00:00", **({"run": run} if run else {})}
    assert in_place[1]["ts"] == "2025-03-01T10:00:00+00:00"
    assert (in_place[2]["run"], in_place[2]["loop"]) == ("other", "mine")
    assert in_place[3]["ts"] is None


def test_fresh_events_go_to_the_ledger_the_loop_has_now() -> None:
    first, second = Sink(), BatchSink()
    loop = FreshCounter(Count(), ledger=first, run="r")
    loop.report({})
    loop.ledger = second
    loop.report({})
    loop.report({})
    assert [e.get("kind") for e in first.got] == ["report"]
    assert second.got == [{"batch": 1}, {"batch": 1}]


@pytest.mark.parametrize("when", [
    datetime(2025, 3, 1, 9, 0, tzinfo=UTC),
    datetime(2025, 3, 1, 9, 0, 0, 250_000, tzinfo=UTC),
    datetime(2025, 3, 1, 10, 0, tzinfo=timezone(timedelta(hours=1))),  # the same instant
    datetime(2025, 3, 1, 9, 0),  # naive
    pd.Timestamp("2025-03-01T09:00:00.000000001", tz="UTC"),  # a subclass: its own text
])
def test_iso_text_is_isoformat(when: datetime) -> None:
    iso_text(datetime(2025, 3, 1, 9, 0, tzinfo=UTC))  # remembered first
    assert iso_text(when) == when.isoformat()
    assert iso_text(when) == when.isoformat()


def test_iso_text_memory_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clock, "_ISO_MAX", 8)
    monkeypatch.setattr(clock, "_ISO", {})
    start = datetime(2025, 3, 1, tzinfo=UTC)
    for n in range(20):
        when = start + timedelta(seconds=n)
        assert iso_text(when) == when.isoformat()
        assert len(clock._ISO) <= 8
