"""A bar command that itself reports to the crew loop measuring it (a nested
``crewbook crew report``) is refused at once, not left waiting for the project's lock
until the bar's timeout."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from crewbook.core.bar import BAR_ROOT_ENV
from crewbook.core.commit import taking_turn
from crewbook.crew import crew_init, crew_report, crew_status
from crewbook.crew.model import CREW_LEDGER
from crewbook.errors import LoopRefused

CLI = (f"{shlex.quote(sys.executable)} -c \"import sys; from crewbook.commands import main; "
       "sys.exit(main())\"")


def _bar_events(project: Path) -> list[dict[str, object]]:
    lines = (project / CREW_LEDGER).read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e["kind"] == "bar"]


def test_a_nested_report_from_inside_a_bar_is_refused_at_once(project: Path) -> None:
    nested = f"{CLI} crew report qa go 'from inside the bar' --project .; echo exit=$?"
    crew_init("goal", bar={"test": nested}, project=project, bar_timeout=120)
    crew_report("analyst", "done", "framed", project=project)
    crew_report("developer", "done", "built", project=project)  # measures the bar
    (event,) = _bar_events(project)
    payload = event["payload"]
    assert isinstance(payload, dict)
    assert payload["timed_out"] is False  # refused at once, not left waiting for the lock
    tail = str(payload["tail"])
    assert tail.endswith("exit=1\n")  # a refusal, not a traceback
    assert "Traceback" not in tail
    assert "inside a bar" in tail
    assert crew_status(project=project).acts == 2  # the nested report changed nothing


def test_a_nested_status_from_inside_a_bar_is_served(project: Path) -> None:
    """What does not wait for the lock (reading the status) is served."""
    nested = f"{CLI} crew status --project . --json"
    crew_init("goal", bar={"test": nested}, project=project, bar_timeout=120)
    crew_report("analyst", "done", "framed", project=project)
    crew_report("developer", "done", "built", project=project)
    (event,) = _bar_events(project)
    payload = event["payload"]
    assert isinstance(payload, dict)
    assert payload["exit_code"] == 0
    assert '"expected_role"' in str(payload["tail"])


def test_taking_a_held_turn_inside_a_bar_of_that_project_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only inside a bar of the lock's own project, and only while the lock is held."""
    from filelock import FileLock

    lock = tmp_path / "project" / "_codev" / "crew" / ".lock"
    lock.parent.mkdir(parents=True)
    holder = FileLock(str(lock))  # another holder, as the loop measuring the bar is
    holder.acquire()
    try:
        monkeypatch.setenv(BAR_ROOT_ENV, str((tmp_path / "project").resolve()))
        with pytest.raises(LoopRefused) as info, taking_turn(lock):
            pass
        assert info.value.code == "inside_bar"
        assert str((tmp_path / "project").resolve()) in str(info.value)
    finally:
        holder.release()
    with taking_turn(lock):  # free: served, even inside the bar
        assert lock.exists()
