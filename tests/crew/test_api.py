"""crew_init / crew_step / crew_report / crew_status and the autonomous loop's functions,
on a persisted loop: refusals write nothing, crew_step is idempotent, payload rules."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest

from crewbook.crew import CrewReport, crew_init, crew_report, crew_status, crew_step, open_crew
from crewbook.crew.model import CREW_LEDGER, STATE_FILE
from crewbook.errors import (
    AlreadyExistsError,
    CrewError,
    LoopRefused,
    NotFoundError,
    UnsafePathError,
)

from .conftest import GREEN, RED


def _files(project: Path) -> tuple[bytes, bytes]:
    return (project / CREW_LEDGER).read_bytes(), (project / STATE_FILE).read_bytes()


@pytest.fixture
def started(project: Path) -> Path:
    crew_init("Deliver the CSV export", bar={"test": GREEN}, project=project)
    return project


def test_init_writes_state_and_init_event(started: Path) -> None:
    status = crew_status(project=started)
    assert status.current == "analyst"
    assert not status.finished
    assert status.details["pointer"] == {"epic": "add-csv-export", "story": "Export",
                                         "task": "1.1", "axis": None}
    assert [(c.name, c.used, c.limit) for c in status.caps] == [("rounds", 0, 100),
                                                               ("epics", 1, 3)]
    events = [json.loads(x) for x in (started / CREW_LEDGER).read_text().splitlines()]
    assert [e["kind"] for e in events] == ["init"]
    assert events[0]["run"] == "crew-1"
    assert events[0]["payload"]["goal"] == \
        "Deliver the CSV export"


def test_init_refuses_without_a_bar_command(project: Path) -> None:
    for bar in (None, {}):
        with pytest.raises(CrewError, match="the bar is empty") as exc:
            crew_init("goal", bar=bar, project=project)
        assert exc.value.codes == ["bar_empty"]
    assert not (project / STATE_FILE).exists()


def test_init_checks_every_bar_entry(project: Path) -> None:
    with pytest.raises(CrewError) as exc:
        crew_init("goal", bar={"tests": "pytest", "lint": {"command": "ruff", "cwd": "../x"},
                               "build": {"command": ""}}, project=project)
    assert exc.value.codes == ["bar_unknown_name", "bar_cwd", "invalid_value"]
    assert "did you mean 'test'" in str(exc.value)


def test_bar_stack_fills_command_and_cwd(project: Path) -> None:
    (project / "api").mkdir()
    (project / "_codev" / "crew.yaml").write_text("stacks:\n  - name: python\n    cwd: api\n")
    with pytest.raises(CrewError, match="did you mean 'python'"):
        crew_init("goal", bar={"lint": {"stack": "pyton", "command": "x"}}, project=project)
    crew_init("goal", bar={"test": {"stack": "python"}}, project=project)
    loop = open_crew(project)
    assert loop.config.bar["test"].command == "python -m pytest -q"
    assert loop.config.bar["test"].cwd == "api"


def test_existing_loop_is_overwritten_only_with_force(started: Path) -> None:
    before = _files(started)
    with pytest.raises(AlreadyExistsError, match="pass force=True to start") as refused:
        crew_init("Another goal", bar={"test": GREEN}, project=started)
    assert "--force" not in str(refused.value)  # Python's words, not the command line's
    assert _files(started) == before
    crew_report("analyst", "done", "framed", project=started)
    crew_init("Another goal", bar={"test": GREEN}, force=True, project=started)
    status = crew_status(project=started)
    assert status.acts == 0
    assert status.details["goal"] == "Another goal"
    assert status.details["run"] == "crew-2"


def test_step_twice_returns_the_same_and_writes_nothing_new(started: Path) -> None:
    first = crew_step(project=started)
    prompt = started / str(first.prompt_path)
    assert prompt.is_file()
    assert prompt.resolve().is_relative_to(started.resolve())
    text = json.loads(prompt.read_text())["prompt"]
    assert "Goal: Deliver the CSV export" in text
    stamp, content, state = prompt.stat().st_mtime_ns, prompt.read_bytes(), _files(started)
    os.utime(prompt, ns=(stamp - 10**9, stamp - 10**9))  # would change if rewritten
    again = crew_step(project=started)
    assert again == first
    assert prompt.read_bytes() == content
    assert prompt.stat().st_mtime_ns == stamp - 10**9
    assert _files(started) == state
    assert crew_status(project=started).acts == 0


def test_goal_is_in_every_prompt(started: Path) -> None:
    for role in ("analyst", "developer", "qa"):
        act = crew_step(project=started)
        assert act.role == role
        assert "Deliver the CSV export" in json.loads(
            (started / str(act.prompt_path)).read_text())["prompt"]
        crew_report(role, "go" if role == "qa" else "done", f"{role} ok", project=started)


@pytest.mark.parametrize(("role", "verdict", "summary", "code"), [
    ("developer", "done", "too early", "wrong_role"),
    ("qa", "go", "too early", "wrong_role"),
    ("architect", "done", "who?", "unknown_role"),
    ("analyst", "go", "analysts do not judge", "bad_verdict"),
    ("analyst", "done", "   ", "bad_report"),
])
def test_refusals_leave_ledger_and_state_byte_identical(
        started: Path, role: str, verdict: str, summary: str, code: str) -> None:
    before = _files(started)
    with pytest.raises(LoopRefused) as exc:
        crew_report(role, verdict, summary, project=started)
    assert exc.value.code == code
    assert _files(started) == before


def test_qa_go_is_refused_on_a_red_bar(project: Path) -> None:
    crew_init("goal", bar={"test": GREEN, "lint": RED}, project=project)
    crew_report("analyst", "done", "framed", project=project)
    crew_report("developer", "done", "built", project=project)
    before = _files(project)
    with pytest.raises(LoopRefused, match="bar is red") as exc:
        crew_report("qa", "go", "looks fine", project=project)
    assert exc.value.code == "bar_red"
    assert _files(project) == before
    act = crew_report("qa", "no-go", "lint fails", {"findings": ["fix lint"]}, project=project)
    assert act.role == "developer"
    assert act.attempt == 2
    assert act.feedback == ("lint fails", "fix lint")


def test_crew_step_measures_the_bar_when_facts_do_not_match(project: Path) -> None:
    crew_init("goal", bar={"test": GREEN}, project=project)
    loop = open_crew(project, run_bar=False)  # a loop that does not measure by itself
    loop.report(CrewReport("analyst", "done", "framed"))
    loop.report(CrewReport("developer", "done", "built"))
    assert open_crew(project).status().details["bar"] is None
    act = crew_step(project=project)
    assert act.role == "qa"
    assert act.details["bar"]["passed"] is True
    ledger = (project / CREW_LEDGER).read_bytes()
    assert crew_step(project=project) == act  # cached facts match: not measured again
    assert (project / CREW_LEDGER).read_bytes() == ledger


def test_a_loop_opened_before_another_caller_acted_refuses(started: Path) -> None:
    stale = open_crew(started)
    crew_report("analyst", "done", "framed elsewhere", project=started)
    before = _files(started)
    with pytest.raises(LoopRefused, match="open it again") as exc:
        stale.report(CrewReport("developer", "done", "built"))
    assert exc.value.code == "stale"
    assert _files(started) == before


def test_status_shows_the_last_acts_and_counts_the_others(started: Path) -> None:
    for _ in range(2):
        for role, verdict in (("analyst", "done"), ("developer", "done"), ("qa", "no-go")):
            if role == "analyst" and crew_status(project=started).current != "analyst":
                continue
            crew_report(role, verdict, f"{role} {verdict}", project=started)
    status = crew_status(project=started, last=2)
    assert status.details["ledger_omitted"] == status.acts - 2
    assert len(status.details["ledger"]) == 2
    full = crew_status(True, project=started)
    assert full.details["ledger_omitted"] == 0
    assert len(full.details["ledger"]) == full.acts
    assert all("ts" in r for r in full.details["ledger"])


def test_no_loop_yet_is_a_clear_not_found(project: Path) -> None:
    with pytest.raises(NotFoundError, match="crew_init"):
        crew_status(project=project)


# -------------------------------------------------------------------------- payloads
def test_payload_and_payload_path_together_are_refused(started: Path) -> None:
    (started / "p.json").write_text("{}")
    before = _files(started)
    with pytest.raises(CrewError, match="not both") as exc:
        crew_report("analyst", "done", "x", {"a": 1}, "p.json", project=started)
    assert exc.value.codes == ["payload_conflict"]
    assert _files(started) == before


def test_payload_path_is_read_relative_or_absolute_under_the_project(started: Path) -> None:
    (started / "out").mkdir()
    (started / "out" / "analyst.json").write_text(json.dumps({"criteria": ["a", "b"]}))
    crew_report("analyst", "done", "framed", payload_path="out/analyst.json", project=started)
    (started / "dev.json").write_text(json.dumps({"files": ["x.py"]}))
    crew_report("developer", "done", "built", payload_path=str(started / "dev.json"),
                project=started)
    events = [json.loads(x) for x in (started / CREW_LEDGER).read_text().splitlines()]
    reports = [e for e in events if e["kind"] == "report"]
    assert reports[0]["payload"]["data"] == {"criteria": ["a", "b"]}
    assert reports[1]["payload"]["data"] == {"files": ["x.py"]}


def test_payload_of_4_1_mib_is_refused(started: Path) -> None:
    big = started / "big.json"
    big.write_text(json.dumps({"blob": "x" * int(4.1 * 1024 * 1024)}))
    before = _files(started)
    with pytest.raises(CrewError, match="too large") as exc:
        crew_report("analyst", "done", "framed", payload_path="big.json", project=started)
    assert exc.value.codes == ["payload_too_large"]
    assert "4 MiB" in str(exc.value)
    assert _files(started) == before
    small = started / "small.json"
    small.write_text(json.dumps({"blob": "x" * (4 * 1024 * 1024 - 100)}))  # just under
    crew_report("analyst", "done", "framed", payload_path="small.json", project=started)


def test_payload_path_escapes_are_refused(started: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    (started / "link.json").symlink_to(outside)
    (started / "linkdir").symlink_to(tmp_path)
    before = _files(started)
    for path in ("../outside.json", "sub/../../outside.json", str(outside), "link.json",
                 "linkdir/outside.json"):
        with pytest.raises(UnsafePathError, match="outside the project"):
            crew_report("analyst", "done", "framed", payload_path=path, project=started)
    assert _files(started) == before


def test_payload_file_must_be_a_json_object(started: Path) -> None:
    (started / "bad.json").write_text("{\n  'single': quotes\n}")
    (started / "list.json").write_text("[1, 2]")
    with pytest.raises(CrewError) as exc:
        crew_report("analyst", "done", "x", payload_path="bad.json", project=started)
    problem = exc.value.problems[0]
    assert problem.code == "payload_bad_json"
    assert problem.line == 2
    with pytest.raises(CrewError) as exc:
        crew_report("analyst", "done", "x", payload_path="list.json", project=started)
    assert exc.value.codes == ["payload_not_object"]
    with pytest.raises(CrewError) as exc:
        crew_report("analyst", "done", "x", payload_path="nope.json", project=started)
    assert exc.value.codes == ["payload_not_found"]
    with pytest.raises(CrewError) as exc:
        crew_report("analyst", "done", "x", payload=[1, 2], project=started)  # type: ignore[arg-type]
    assert exc.value.codes == ["payload_not_object"]


def test_two_callers_at_once_take_turns(project: Path) -> None:
    import threading

    slow = f"{shlex.quote(sys.executable)} -c \"import time; time.sleep(0.5)\""
    crew_init("goal", bar={"test": slow}, project=project)
    crew_report("analyst", "done", "framed", project=project)
    outcomes: list[str] = []

    def report() -> None:
        try:
            crew_report("developer", "done", "built", project=project)
            outcomes.append("accepted")
        except LoopRefused as refusal:
            outcomes.append(refusal.code)

    threads = [threading.Thread(target=report) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["accepted", "wrong_role"]
    assert crew_status(project=project).acts == 2
