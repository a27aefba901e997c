"""Fixtures of the drawing tests: the `requires_dot` skip, golden files, option isolation.

Golden files live in tests/data/golden/. After an intended change of the drawings,
regenerate them with::

    CREWBOOK_UPDATE_GOLDEN=1 pytest tests/draw -p no:nbval -o addopts=""

and review the diff like code.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from crewbook.draw import options
from crewbook.draw.render import clear_cache

GOLDEN = Path(__file__).parents[1] / "data" / "golden"
UPDATE = os.environ.get("CREWBOOK_UPDATE_GOLDEN") == "1"
HAS_DOT = shutil.which("dot") is not None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip tests marked `requires_dot` when the Graphviz `dot` program is not on PATH."""
    skip = pytest.mark.skip(reason="the Graphviz 'dot' program is not on PATH")
    for item in items:
        if "requires_dot" in item.keywords and not HAS_DOT:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def fresh_options() -> Iterator[None]:
    """Every test starts from the default drawing options and an empty render cache."""
    options.reset()
    clear_cache()
    yield
    options.reset()
    clear_cache()


@pytest.fixture
def no_dot() -> Iterator[None]:
    """Make crewbook believe `dot` is not installed (an absolute path that does not exist)."""
    with options.override(dot_program="/nonexistent/graphviz/bin/dot"):
        clear_cache()
        yield


@pytest.fixture
def golden() -> Callable[[str, str], None]:
    """`golden(name, text)`: compare `text` with tests/data/golden/<name> (or rewrite it)."""

    def check(name: str, text: str) -> None:
        path = GOLDEN / name
        if UPDATE:
            GOLDEN.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8", newline="\n")
            return
        assert path.is_file(), (
            f"golden file {path} is missing; create it with CREWBOOK_UPDATE_GOLDEN=1"
        )
        expected = path.read_text(encoding="utf-8")
        assert text == expected, (
            f"{name} differs from its golden file; if the change is intended, regenerate "
            "with CREWBOOK_UPDATE_GOLDEN=1 and review the diff"
        )

    return check
