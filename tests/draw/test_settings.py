"""`crewbook.draw.options`: validated, overridable, resettable."""

from __future__ import annotations

import pytest

import crewbook
from crewbook.draw import options
from crewbook.draw.settings import DEFAULT_COLLAPSE_THRESHOLD


def test_reachable_from_the_package() -> None:
    assert crewbook.draw.options is options
    assert options.collapse_threshold == DEFAULT_COLLAPSE_THRESHOLD == 1500


@pytest.mark.parametrize(("name", "value"), [
    ("collapse_threshold", 0), ("collapse_threshold", 2.5), ("collapse_threshold", True),
    ("dot_timeout", -1), ("dot_timeout", "10"), ("dot_program", ""),
])
def test_bad_values_are_refused(name: str, value: object) -> None:
    with pytest.raises(ValueError, match=name):
        setattr(options, name, value)


def test_override_restores_even_after_an_error() -> None:
    seen = []

    def use() -> None:
        with options.override(collapse_threshold=7, dot_timeout=1):
            seen.append((options.collapse_threshold, options.dot_timeout))
            raise RuntimeError

    with pytest.raises(RuntimeError):
        use()
    assert seen == [(7, 1)]
    assert options.collapse_threshold == DEFAULT_COLLAPSE_THRESHOLD
    assert options.dot_timeout == 60.0


def test_override_names_unknown_options() -> None:
    with pytest.raises(ValueError, match="unknown drawing option"), options.override(colour=1):
        pass


def test_reset() -> None:
    options.collapse_threshold = 3
    options.reset()
    assert options.collapse_threshold == DEFAULT_COLLAPSE_THRESHOLD
