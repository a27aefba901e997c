"""Routes in contracts follow the routing files; prompt files are written once."""

from __future__ import annotations

import json
from pathlib import Path

import crewbook
from crewbook.crew.contracts import write_prompt
from crewbook.routing.router import Router


def test_write_prompt_writes_only_when_the_text_changes(tmp_path: Path) -> None:
    assert write_prompt(tmp_path, "p/a.json", "hello")
    assert json.loads((tmp_path / "p" / "a.json").read_text()) == {"prompt": "hello"}
    assert not write_prompt(tmp_path, "p/a.json", "hello")
    assert write_prompt(tmp_path, "p/a.json", "hello again")


def test_routes_follow_a_new_profile(project: Path) -> None:
    resolver = Router("crew", crewbook.Project(project), by_task=True)
    before = resolver.route("qa")
    assert before["model"] is None
    assert "routing init" in (before["hint"] or "")
    crewbook.provider_profile_init("claude", scope="project", project=project)
    after = resolver.route("qa")
    assert after["model"] == crewbook.role_route("qa", project=project).capability.model  # type: ignore[union-attr]
    assert after["via"] == "role default"
    assert resolver("qa") == after  # the Loop router protocol
    assert resolver(None) is None
