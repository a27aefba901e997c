"""`crewbook crew init|step|report|status` and `crewbook loop init|step`: the CLI takes
turns with a notebook on one persisted loop."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from crewbook.crew import CrewReport, open_crew

GREEN = f"{shlex.quote(sys.executable)} -c pass"
TASKS_MD = "## Export\n\n- [ ] 1.1 Add the button\n"


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CREWBOOK_HOME", str(tmp_path / "home"))


@pytest.fixture
def project(tour: Path) -> Path:
    (tour / "_codev" / "changes" / "add-csv-export" / "tasks.md").write_text(TASKS_MD)
    return tour


def test_cli_and_notebook_take_turns(project: Path, cli: Callable[..., Any]) -> None:
    p = ["--project", str(project)]
    res = cli("crew", "init", "Deliver the CSV export", "--bar", f"test={GREEN}", "--json", *p)
    assert res.code == 0
    assert res.json["current"] == "analyst"
    res = cli("crew", "step", *p)
    assert res.code == 0
    assert "Act 1: analyst (frame)" in res.out
    assert "prompt:" in res.out
    res = cli("crew", "report", "analyst", "done", "framed", "--payload", '{"c": [1]}',
              "--json", *p)
    assert res.json["role"] == "developer"
    loop = open_crew(project)  # the notebook's turn
    act = loop.report(CrewReport("developer", "done", "built in a notebook"))
    assert act.role == "qa"
    assert act.details["bar"]["passed"]
    res = cli("crew", "report", "qa", "go", "delivered", "--json", *p)
    assert res.json["finished_reason"] == "scope_covered"
    res = cli("crew", "status", "--full", *p)
    assert "finished: scope_covered after 3 acts" in res.out
    assert "#2 developer: done — built in a notebook" in res.out


def test_cli_refusals_and_errors_are_one_json_document(project: Path,
                                                        cli: Callable[..., Any]) -> None:
    p = ["--project", str(project)]
    res = cli("crew", "init", "goal", "--json", *p)
    assert res.code == 1
    assert "bar_empty" in json.dumps(res.json)
    res = cli("crew", "status", "--json", *p)
    assert res.code == 2
    assert "crew_init" in json.dumps(res.json)
    cli("crew", "init", "goal", "--bar-json", json.dumps({"test": GREEN}), *p)
    ledger = (project / "_codev" / "crew" / "crew.jsonl").read_bytes()
    res = cli("crew", "report", "qa", "go", "not my turn", "--json", *p)
    assert res.code == 1
    assert "expects a report from 'analyst'" in json.dumps(res.json)
    assert (project / "_codev" / "crew" / "crew.jsonl").read_bytes() == ledger
    res = cli("crew", "init", "goal", "--bar", f"test={GREEN}", *p)
    assert res.code == 1
    assert "pass --force to start a new one" in res.err  # the command line's words
    assert "force=True" not in res.err
    res = cli("crew", "init", "goal", "--bar", f"test={GREEN}", "--json", *p)
    assert "pass --force to start" in res.json["error"]["message"]


def test_loop_commands(project: Path, cli: Callable[..., Any]) -> None:
    p = ["--project", str(project)]
    assert cli("loop", "init", "Ship", *p).code == 0
    again = cli("loop", "init", "Ship", *p)
    assert again.code == 1
    assert "pass --force to start a new one" in again.err
    assert "force=True" not in again.err
    assert cli("loop", "step", "--json", *p).json["stage"] == "implementation"
    assert cli("loop", "step", "--json", *p).json["stage"] == "recette"
    res = cli("loop", "step", "--json", *p)
    assert res.code == 1
    assert "test_command" in json.dumps(res.json)
    res = cli("loop", "step", "--test-command", GREEN, "--json", *p)
    assert res.json["stage"] == "delivery"


def test_the_autonomous_command_is_the_loop_command(project: Path,
                                                   cli: Callable[..., Any]) -> None:
    """`crewbook autonomous` names the autonomous loop; `crewbook loop` still works."""
    p = ["--project", str(project)]
    assert cli("autonomous", "init", "Ship", *p).code == 0
    assert cli("autonomous", "step", "--json", *p).json["stage"] == "implementation"
    assert cli("loop", "step", "--json", *p).json["stage"] == "recette"


def test_a_broken_state_file_says_how_to_start_again_in_each_front_ends_words(
        project: Path, cli: Callable[..., Any]) -> None:
    from crewbook.crew import crew_status
    from crewbook.crew.model import STATE_FILE
    from crewbook.errors import CrewError

    p = ["--project", str(project)]
    assert cli("crew", "init", "goal", "--bar", f"test={GREEN}", *p).code == 0
    (project / STATE_FILE).write_text('{"run": 3}')
    res = cli("crew", "status", *p)
    assert res.code == 1
    assert "not a valid state file; start again with --force" in res.err
    with pytest.raises(CrewError, match="start again with force=True"):
        crew_status(project=project)
