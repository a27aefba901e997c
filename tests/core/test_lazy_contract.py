"""`Loop.report` returns the next contract built when first read (issue 25): stepping a
loop builds no contract nobody reads, and what is returned is the act of that moment."""

from __future__ import annotations

import copy
import dataclasses
import gc
from dataclasses import dataclass, replace
from typing import Any

from crewbook.core.loop import Act, Loop, Status, Transition


@dataclass(frozen=True)
class Count:
    value: int = 0


class Counter(Loop[Count, int]):
    """A loop that counts how often its contract is built."""

    kind = "counter"
    copy_state = False

    def __init__(self) -> None:
        super().__init__(Count())
        self.built = 0

    def contract(self) -> Act:
        self.built += 1
        return Act(self.kind, self.acts + 1, "adder", details={"value": self._state.value})

    def status(self) -> Status:
        return Status(self.kind, self.acts, "adder", None, False, None)

    def transition(self, state: Count, report: int) -> Transition[Count]:
        return Transition(replace(state, value=state.value + report),
                          [{"kind": "report", "role": "adder", "payload": {"add": report}}])


def test_stepping_builds_no_contract_until_one_is_read() -> None:
    loop = Counter()
    for n in range(5):
        loop.report(n)
    assert loop.built == 0
    act = loop.report(1)
    assert loop.built == 0
    assert act.details == {"value": 11}
    assert act.act == 7
    assert loop.built == 1
    assert type(act) is Act  # a plain Act for good once read


def test_an_act_kept_unread_shows_its_own_moment() -> None:
    loop = Counter()
    kept = loop.report(2)
    loop.report(3)  # the loop moves on before anyone reads `kept`
    assert kept.details == {"value": 2}
    assert kept.act == 2
    assert loop.contract().details == {"value": 5}


def test_a_pending_act_compares_copies_and_hashes_like_the_contract() -> None:
    loop = Counter()
    assert loop.report(1) == loop.contract()
    pending = loop.report(1)
    assert loop.contract() == pending  # the plain Act on the left: the pending one answers
    a, b = loop.report(0), loop.contract()
    assert hash(a) == hash(b) if _hashable(b) else True
    c = loop.report(0)
    assert repr(c) == repr(loop.contract())
    d = loop.report(0)
    assert dataclasses.asdict(d) == dataclasses.asdict(loop.contract())
    e = loop.report(0)
    assert copy.deepcopy(e) == loop.contract()
    f = loop.report(0)
    assert dataclasses.replace(f, role="other").role == "other"


def test_a_dropped_act_costs_nothing_and_restore_settles_a_kept_one() -> None:
    loop = Counter()
    snap = loop.snapshot()
    loop.report(4)
    gc.collect()
    kept = loop.report(5)
    loop.restore(snap)  # the state changes: the kept act is built first
    assert kept.details == {"value": 9}
    assert loop.contract().details == {"value": 0}


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True
