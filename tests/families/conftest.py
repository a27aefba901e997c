"""One small fresh loop per ledger kind of every registered family, for the protocol
suite (`test_protocol.py`): the way transitions runs its core tests over each machine
class, every family runs the same tests here.

The loops come from the registry: each family's `sample(folder, kind)` (a picklable
factory, so that simulate may send it to a worker). A new family is covered by its
registry line alone.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from crewbook.families import FAMILIES, family


def _maker(name: str, kind: str) -> Callable[[Path], Callable[[], Any]]:
    return functools.partial(family(name).sample, kind=kind)


#: Ledger kind → (family name, a maker of a picklable loop factory in a folder).
SAMPLES: dict[str, tuple[str, Callable[[Path], Callable[[], Any]]]] = {
    kind: (name, _maker(name, kind)) for name in FAMILIES for kind in family(name).kinds
}


def test_every_family_kind_has_a_sample() -> None:
    kinds = {k for name in FAMILIES for k in family(name).kinds}
    assert kinds == set(SAMPLES)


@pytest.fixture(params=sorted(SAMPLES))
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def factory(kind: str, tmp_path: Path) -> Callable[[], Any]:
    return SAMPLES[kind][1](tmp_path)
