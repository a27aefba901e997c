"""One small fresh loop per ledger kind of every registered family, for the protocol
suite (`test_protocol.py`): the way transitions runs its core tests over each machine
class, every family runs the same tests here.

The loops come from the registry: each family's `sample(folder, kind)` (a picklable
factory, so that simulate may send it to a worker). A new family is covered by its
registry line alone: the toy family of `toy.py`, which lives here and not in crewbook,
is added through `crewbook.families.register` for the tests that use it (and removed
after them), so the suite also runs over a family crewbook's code never names.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from crewbook.families import FAMILIES, family, register, unregister

from . import toy


def register_toy() -> None:
    """The toy family's registry line: its family, command group, routing roles and
    random-policy section."""
    register(toy.NAME, toy.DOTTED, command=toy.COMMAND, roles=toy.ROLES, policy=toy.POLICY)


@contextlib.contextmanager
def toy_registered() -> Iterator[None]:
    """The toy family in the registry while the block runs (through its public API)."""
    register_toy()
    try:
        yield
    finally:
        unregister(toy.NAME)


def _maker(name: str, kind: str) -> Callable[[Path], Callable[[], Any]]:
    sample = family(name).sample
    return lambda folder: sample(folder, kind)


def _samples() -> dict[str, tuple[str, Callable[[Path], Callable[[], Any]]]]:
    with toy_registered():
        return {kind: (name, _maker(name, kind)) for name in FAMILIES
                for kind in family(name).kinds}


#: Ledger kind → (family name, a maker of a picklable loop factory in a folder), for
#: every registered family and the toy.
SAMPLES = _samples()


def test_every_family_kind_has_a_sample() -> None:
    kinds = {k for name in FAMILIES for k in family(name).kinds}
    assert kinds | {toy.KIND} == set(SAMPLES)
    assert toy.NAME not in FAMILIES  # registered only while a test uses it


@pytest.fixture(params=sorted(SAMPLES))
def kind(request: pytest.FixtureRequest) -> Iterator[str]:
    with toy_registered() if request.param == toy.KIND else contextlib.nullcontext():
        yield str(request.param)


@pytest.fixture
def factory(kind: str, tmp_path: Path) -> Callable[[], Any]:
    return SAMPLES[kind][1](tmp_path)
