"""`crewbook.core.toolbox` finds each family's MCP tools through its registry line only:
a toy family's tools module, registered from the test, is served with the others."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from crewbook import families
from crewbook.core import toolbox
from crewbook.errors import UsageError

TOY_TOOLS = '''
from crewbook.core.tools import Tool, obj


def _hello(args, project):
    return {"hello": args.get("who", "world")}


TOOLS = (Tool("toy_hello", "Say hello.", obj({"who": {"type": "string"}}), _hello,
              lambda: {"type": "object"}, title="Say hello"),)
'''


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / "toy_tools_mod.py").write_text(TOY_TOOLS)
    monkeypatch.syspath_prepend(str(tmp_path))
    families.register("toy", "toy_family_mod:FAMILY", tools="toy_tools_mod")
    yield "toy_tools_mod"
    families.unregister("toy")


def test_the_registry_lines_name_the_tool_modules() -> None:
    assert families.tool_modules() == [e.tools for e in families.FAMILIES.values()
                                       if e.tools is not None]
    names = {t.name for t in toolbox.TOOLS}
    assert {"crew_init", "loop_init", "loop_step", "task_route_show"} <= names


def test_a_registered_family_s_tools_are_gathered(toy: str) -> None:
    gathered = toolbox.gather()
    assert [t.name for t in gathered][-1] == "toy_hello"
    assert {t.name for t in toolbox.TOOLS} < {t.name for t in gathered}
    assert gathered[-1].run({"who": "crew"}, None) == {"hello": "crew"}


def test_a_tool_name_offered_twice_is_refused(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "twice_tools_mod.py").write_text(
        "from crewbook.autonomous.tools import TOOLS\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    families.register("twice", "twice_family_mod:FAMILY", tools="twice_tools_mod")
    try:
        with pytest.raises(UsageError, match="loop_init"):
            toolbox.gather()
    finally:
        families.unregister("twice")


def test_a_tools_module_without_tools_is_refused(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "empty_tools_mod.py").write_text("TOOLS = ['not a tool']\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    families.register("empty", "empty_family_mod:FAMILY", tools="empty_tools_mod")
    try:
        with pytest.raises(UsageError, match=r"empty_tools_mod\.TOOLS"):
            toolbox.gather()
    finally:
        families.unregister("empty")
