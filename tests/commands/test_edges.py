"""Edges of the command line: a loop of links where a path is expected, and the message
of a name that cannot be a file."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic_core import PydanticCustomError

from crewbook.crew.model import safe_name

pytestmark = pytest.mark.skipif(os.name != "posix", reason="links, pipes and fork are POSIX")


@pytest.mark.parametrize("argv", [["--project", "{loop}", "status"],
                                  ["graph", "{loop}"],
                                  ["--project", "{loop}", "archive", "x"]])
def test_a_loop_of_links_is_a_usage_error(tmp_path: Path, cli: Callable[..., Any],
                                          argv: list[str]) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(loop)
    result = cli(*[a.replace("{loop}", str(loop)) for a in argv])
    assert result.code == 2, result.err
    assert "loop of links" in result.err


def test_the_unsafe_name_message_shows_the_name() -> None:
    with pytest.raises(PydanticCustomError) as info:
        safe_name("../../x", "run")
    text = str(info.value)
    assert "'../../x'" in text
    assert "{shown" not in text
