"""The crew loop's cascade (scopes, workshop, caps) and the autonomous loop (D1-D6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crewbook
from crewbook.crew import (
    CrewReport,
    crew_init,
    crew_report,
    crew_status,
    crew_step,
    open_crew,
)
from crewbook.crew.model import CREW_LEDGER
from crewbook.errors import CrewError, LoopRefused

from .conftest import GREEN, PY, RED

CYCLE = (("analyst", "done"), ("developer", "done"), ("qa", "go"))


def _story(project: Path) -> str | None:
    """Run one story (analyst, developer, qa go); returns the finished reason or None."""
    for role, verdict in CYCLE:
        act = crew_report(role, verdict, f"{role} {verdict}", project=project)
        if act.finished:
            return act.finished_reason
    return None


def test_scope_story_finishes_after_one_story(project: Path) -> None:
    crew_init("goal", scope="story", bar={"test": GREEN}, project=project)
    assert _story(project) == "scope_covered"
    status = crew_status(project=project)
    assert status.finished
    assert status.current is None
    assert status.counters["stories_covered"] == 1
    with pytest.raises(LoopRefused, match="finished"):
        crew_report("analyst", "done", "more", project=project)


def test_scope_epic_covers_every_story_then_finishes(project: Path) -> None:
    crew_init("goal", bar={"test": GREEN}, project=project)
    assert _story(project) is None
    assert crew_status(project=project).details["pointer"]["story"] == "Check"
    assert _story(project) == "scope_covered"
    assert crew_status(project=project).counters["epics_covered"] == 1


def test_checked_stories_are_skipped(project: Path) -> None:
    tasks = project / "_codev" / "changes" / "add-csv-export" / "tasks.md"
    tasks.write_text(tasks.read_text().replace("- [ ] 1.1", "- [x] 1.1").replace(
        "- [ ] 1.2", "- [x] 1.2"))
    crew_init("goal", bar={"test": GREEN}, project=project)
    assert crew_status(project=project).details["pointer"]["story"] == "Check"


def test_rounds_exhausted_and_zero_is_unlimited(project: Path) -> None:
    crew_init("goal", max_rounds=2, bar={"test": GREEN}, project=project)
    crew_report("analyst", "done", "framed", project=project)
    act = crew_report("developer", "done", "built", project=project)
    assert act.finished
    assert act.finished_reason == "rounds_exhausted"
    crew_init("goal", max_rounds=0, bar={"test": GREEN}, force=True, project=project)
    status = crew_status(project=project)
    assert status.caps[0].limit is None
    assert status.details["max_rounds"] == 0
    for _ in range(5):  # well past any small cap: qa keeps sending the work back
        crew_report("analyst", "done", "framed", project=project) \
            if crew_status(project=project).current == "analyst" else None
        crew_report("developer", "done", "built", project=project)
        crew_report("qa", "no-go", "again", project=project)
    status = crew_status(project=project)
    assert not status.finished
    assert status.acts == 11
    assert status.counters["no_go"] == 5


def _workshop(project: Path, *axes: str) -> None:
    lines = "".join(f"  - {a}\n" for a in axes)
    (project / "_codev" / "crew.yaml").write_text(f"workshop:\n{lines}")


def test_workshop_cascade_reaches_epics_exhausted(project: Path) -> None:
    _workshop(project, "Import invoices from CSV", "Multi-currency totals", "Dark mode")
    crew_init("goal", scope="all", max_epics=2, bar={"test": GREEN}, project=project)
    assert _story(project) is None
    assert _story(project) is None
    status = crew_status(project=project)
    assert status.details["pointer"]["epic"] == "import-invoices-from-csv"
    assert status.details["pointer"]["axis"] == "Import invoices from CSV"
    change = project / "_codev" / "changes" / "import-invoices-from-csv" / "change.yaml"
    assert change.is_file()
    assert "Import invoices from CSV" in change.read_text()
    assert status.counters["epics_started"] == 2
    assert _story(project) == "epics_exhausted"  # the whole-epic story of the axis
    events = [json.loads(x) for x in (project / CREW_LEDGER).read_text().splitlines()]
    assert [e["stage"] for e in events if e["kind"] == "transition"] == ["story", "workshop"]
    assert events[-1]["kind"] == "finish"
    assert events[-1]["verdict"] == "epics_exhausted"


def test_all_with_unlimited_epics_covers_the_workshop(project: Path) -> None:
    _workshop(project, "Dark mode")
    crew_init("goal", scope="all", max_epics=0, bar={"test": GREEN}, project=project)
    reasons = [_story(project) for _ in range(3)]
    assert reasons == [None, None, "scope_covered"]
    assert crew_status(project=project).counters["epics_covered"] == 2


def test_scope_workshop_starts_on_the_first_axis(project: Path) -> None:
    _workshop(project, "Dark mode", "Offline mode")
    crew_init("goal", scope="workshop", max_epics=0, bar={"test": GREEN}, project=project)
    assert crew_status(project=project).details["pointer"]["epic"] == "dark-mode"
    assert _story(project) is None
    assert crew_status(project=project).details["pointer"]["epic"] == "offline-mode"
    assert _story(project) == "scope_covered"


def test_nothing_to_deliver_is_refused(project: Path) -> None:
    with pytest.raises(CrewError, match="workshop") as exc:
        crew_init("goal", scope="workshop", bar={"test": GREEN}, project=project)
    assert exc.value.codes == ["nothing_to_deliver"]


def test_analyst_writing_the_tasks_moves_the_pointer_to_the_first_story(tour: Path) -> None:
    crew_init("goal", bar={"test": GREEN}, project=tour)  # the tour's change has no tasks
    assert crew_status(project=tour).details["pointer"]["story"] == "(whole epic)"
    (tour / "_codev" / "changes" / "add-csv-export" / "tasks.md").write_text(
        "## Button\n- [ ] 1.1 Add it\n")
    crew_report("analyst", "done", "wrote tasks.md", project=tour)
    assert crew_status(project=tour).details["pointer"] == {
        "epic": "add-csv-export", "story": "Button", "task": "1.1", "axis": None}


def test_contract_carries_the_route_from_routing(project: Path) -> None:
    crewbook.provider_profile_init("claude", scope="project", project=project)
    crew_init("goal", bar={"test": GREEN}, project=project)
    analyst = crew_step(project=project)
    expected = crewbook.role_route("analyst", project=project)
    assert analyst.route is not None
    assert analyst.route["via"] == "role default"
    assert analyst.route["model"] == expected.capability.model  # type: ignore[union-attr]
    assert analyst.route["source"] == "project"
    crew_report("analyst", "done", "framed", project=project)
    crewbook.task_classify("1.1", complexity="complex", change="add-csv-export",
                           project=project)
    developer = crew_step(project=project)
    route = crewbook.task_route_show("1.1", change="add-csv-export", project=project)
    assert developer.route is not None
    assert developer.route["via"] == "task class"
    assert developer.route["model"] == route.model
    assert developer.route["tier"] == "deep"


def test_document_focus_is_checked_and_named_in_the_prompt(project: Path) -> None:
    crew_init("goal", bar={"test": GREEN}, project=project)
    act = crew_step("specs", project=project)
    assert str(act.prompt_path).endswith("-analyst-specs.json")
    assert "Document in focus: specs" in json.loads(
        (project / str(act.prompt_path)).read_text())["prompt"]
    with pytest.raises(CrewError, match="did you mean 'brief'") as exc:
        crew_step("brif", project=project)
    assert exc.value.codes == ["unknown_document"]


def test_bar_events_are_logged_and_the_ledger_reads_back(project: Path) -> None:
    crew_init("goal", bar={"test": GREEN, "lint": RED}, project=project)
    crew_report("analyst", "done", "framed", project=project)
    crew_report("developer", "done", "built", tokens_in=100, duration_ms=5, project=project)
    df = crewbook.read_ledger(project / CREW_LEDGER)
    bars = df[df["kind"] == "bar"]
    assert list(bars["stage"]) == ["test", "lint"]
    assert list(bars["verdict"].astype(str)) == ["pass", "fail"]
    assert bars["payload"].iloc[1]["exit_code"] == 1
    assert "boom" in bars["payload"].iloc[1]["tail"]
    outcomes = crewbook.run_outcomes(df)
    assert outcomes.loc["crew-1", "acts"] == 2
    assert not outcomes.loc["crew-1", "finished"]
    assert crewbook.validate_ledger(project / CREW_LEDGER).problems == ()


def test_memory_loop_drawing_and_frame(project: Path) -> None:
    crew_init("goal", bar={"test": GREEN}, project=project)
    loop = open_crew(project)
    loop.report(CrewReport("analyst", "done", "framed"))
    dot = loop.dot()
    assert '"developer"' in dot
    assert "Export" in dot
    model = loop.graph_model()
    assert model.nodes["developer"].emphasis
    assert model.nodes["developer"].status == "ready"
    assert model.nodes["analyst"].status == "done"
    assert not model.nodes["qa"].emphasis
    frame = loop.frame()
    assert list(frame.columns) == ["act", "ts", "role", "verdict", "summary", "epic", "story"]
    assert str(frame["ts"].dtype) == "datetime64[ns, UTC]"
    assert str(frame["act"].dtype) == "Int64"
    assert "expects developer" in repr(loop)
    assert "crewbook-status" in loop._repr_html_()


# ---------------------------------------------------------------------- properties
ROLE_VERDICTS = [(r, v) for r in ("analyst", "developer", "qa", "architect")
                 for v in ("done", "go", "no-go")]
NEXT = {("analyst", "done"): "developer", ("developer", "done"): "qa",
        ("qa", "no-go"): "developer", ("qa", "go"): "analyst"}


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(ROLE_VERDICTS), max_size=40), st.integers(0, 12))
def test_any_report_sequence_keeps_the_rules(project: Path, reports: list[tuple[str, str]],
                                             max_rounds: int) -> None:
    from crewbook.core.sinks import MemoryLedger
    from crewbook.crew.model import BarCommand, CrewConfig, CrewState

    config = CrewConfig(goal="g", max_rounds=max_rounds, bar={"test": BarCommand(command="x")})
    state = CrewState(run="p", config=config, epic="add-csv-export", story="Export")
    ledger = MemoryLedger()
    loop = crewbook.CrewLoop(state, project=crewbook.Project(project), ledger=ledger,
                             run_bar=False)
    for role, verdict in reports:
        before, events = loop.state, len(ledger.events)
        try:
            loop.report(CrewReport(role, verdict, f"{role} {verdict}"))
        except LoopRefused:
            assert loop.state == before  # a refusal changes nothing
            assert len(ledger.events) == events  # and logs nothing
            assert (role, verdict) not in NEXT or role != before.expected \
                or before.finished_reason is not None
            continue
        after = loop.state
        assert role == before.expected
        assert after.acts == before.acts + 1
        assert len(ledger.events) > events
        if after.finished_reason is None:
            assert after.expected == NEXT[(role, verdict)]
    final = loop.state
    assert max_rounds == 0 or final.acts <= max_rounds
    if max_rounds and final.acts == max_rounds:
        assert final.finished_reason in ("rounds_exhausted", "scope_covered")


def test_a_hanging_or_flooding_bar_never_hangs_the_loop(project: Path) -> None:
    import time

    hang = f"{PY} -c \"import time; time.sleep(60)\""
    flood = f"{PY} -c \"import sys; sys.stdout.write('y' * 3_000_000)\""
    crew_init("goal", bar={"test": hang, "lint": flood}, bar_timeout=1.0, project=project)
    crew_report("analyst", "done", "framed", project=project)
    started = time.monotonic()
    act = crew_report("developer", "done", "built", project=project)
    assert time.monotonic() - started < 20
    bar = act.details["bar"]
    assert bar["passed"] is False
    assert "timed out" in bar["lines"][0]
    events = [json.loads(x) for x in (project / CREW_LEDGER).read_text().splitlines()]
    lint = next(e for e in events if e["kind"] == "bar" and e["stage"] == "lint")
    assert lint["payload"]["output_bytes"] == 3_000_000
    assert lint["payload"]["truncated"] is True
    assert len(lint["payload"]["tail"]) <= 2000
    assert crew_report("qa", "no-go", "the tests hang", project=project).role == "developer"


def test_a_memory_ledger_frame_feeds_the_analyses(project: Path) -> None:
    from crewbook.crew.model import BarCommand, CrewConfig, CrewState

    config = CrewConfig(goal="g", scope="story", bar={"test": BarCommand(command=GREEN)})
    loop = crewbook.CrewLoop(CrewState(run="mem", config=config, epic="add-csv-export",
                                       story="Export"), project=crewbook.Project(project))
    for role, verdict in CYCLE:
        loop.report(CrewReport(role, verdict, f"{role} {verdict}"))
    frame = loop.ledger.frame()  # type: ignore[attr-defined]
    assert list(frame["kind"].astype(str)) == ["report", "report", "bar", "verdict", "finish"]
    outcomes = crewbook.run_outcomes(frame)
    assert outcomes.loc["mem", "finished_reason"] == "scope_covered"
    assert outcomes.loc["mem", "acts"] == 3
