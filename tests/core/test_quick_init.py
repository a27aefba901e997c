"""`quick_init`: a frozen dataclass filled at once is the same object as one built field
by field (arguments, defaults, equality, hash, repr, frozenness)."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import dataclass, field

import pytest

from crewbook.core.clock import EPOCH as EPOCH_STEP
from crewbook.core.loop import Cap, JournalEntry, quick_init
from crewbook.delivery.state import Step, Wait


@dataclass(frozen=True)
class _Plain:
    a: int
    b: str = "b"
    c: tuple[int, ...] = ()


@dataclass(frozen=True)
class _Factory:
    a: int
    b: list[int] = field(default_factory=list)


def test_quick_init_builds_the_same_objects_as_the_dataclass_init() -> None:
    generated = _Plain.__init__
    quick_init(_Plain)
    assert _Plain.__init__ is not generated
    slow = object.__new__(_Plain)
    generated(slow, 1, c=(2,))
    fast = _Plain(1, c=(2,))
    assert fast == slow
    assert hash(fast) == hash(slow)
    assert repr(fast) == repr(slow)
    assert _Plain(a=3) == _Plain(3, "b", ())
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.a = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        _Plain()  # type: ignore[call-arg]
    assert copy.deepcopy(fast) == fast
    assert pickle.loads(pickle.dumps(fast)) == fast


def test_quick_init_leaves_classes_with_default_factories_alone() -> None:
    generated = _Factory.__init__
    quick_init(_Factory)
    assert _Factory.__init__ is generated
    assert _Factory(1).b == []
    assert _Factory(1).b is not _Factory(1).b


def test_engine_objects_use_it_and_keep_their_defaults() -> None:
    assert Cap("steps", 1, None).left is None
    assert Cap("steps", 3, 2).reached
    assert JournalEntry("plan", "text") == JournalEntry("plan", "text", None, None)
    step = Step(1, "architect", "plan", "a plan", 0, EPOCH_STEP)
    assert (step.verdict, step.target, step.sent_back) == (None, None, False)
    wait = Wait("qa", EPOCH_STEP, EPOCH_STEP, 1, 2, 1, "verify")
    assert (wait.fixes, wait.focus, wait.steps, wait.sent_back) == ((), (), None, False)
    assert dataclasses.asdict(wait)["instructions"] == "verify"

