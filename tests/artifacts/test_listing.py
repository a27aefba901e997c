"""`crewbook list` and `crewbook list --specs`: the OpenSpec CLI's words and fields."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any


def make(root: Path) -> Path:
    for name, tasks, stamp in (("beta", "- [x] a\n- [x] b\n", 2_000_000_000),
                               ("alpha", "- [x] a\n- [ ] b\n", 1_900_000_000),
                               ("gamma", None, 1_800_000_000)):
        change = root / "openspec" / "changes" / name
        change.mkdir(parents=True)
        (change / "proposal.md").write_text("## Why\nx\n")
        if tasks:
            (change / "tasks.md").write_text(tasks)
        for file in change.iterdir():
            os.utime(file, (stamp, stamp))
    spec = root / "openspec" / "specs" / "auth"
    spec.mkdir(parents=True)
    (spec / "spec.md").write_text("# auth\n\n## Purpose\nWhy.\n\n## Requirements\n"
                                  "### Requirement: A\nThe system SHALL a.\n\n"
                                  "#### Scenario: a\n- WHEN a\n")
    return root


def test_list_json_fields_and_recent_first(tmp_path: Path, cli: Callable[..., Any]) -> None:
    root = make(tmp_path)
    changes = cli("--project", root, "list", "--json").json["changes"]
    assert [(c["name"], c["completedTasks"], c["totalTasks"], c["status"]) for c in changes] == [
        ("beta", 2, 2, "complete"), ("alpha", 1, 2, "in-progress"), ("gamma", 0, 0, "no-tasks")]
    assert changes[0]["lastModified"] == "2033-05-18T03:33:20.000Z"
    by_name = cli("--project", root, "list", "--json", "--sort", "name").json["changes"]
    assert [c["name"] for c in by_name] == ["alpha", "beta", "gamma"]


def test_list_words(tmp_path: Path, cli: Callable[..., Any]) -> None:
    root = make(tmp_path)
    lines = cli("--project", root, "list", "--sort", "name").out.splitlines()
    assert lines[0] == "Changes:"
    assert [line.split()[:2] for line in lines[1:]] == [
        ["alpha", "1/2"], ["beta", "✓"], ["gamma", "No"]]
    specs = cli("--project", root, "list", "--specs").out.splitlines()
    assert specs == ["Specs:", "  auth     requirements 1"]
    assert cli("--project", root, "list", "--specs", "--json").json == {
        "specs": [{"id": "auth", "requirementCount": 1}]}
