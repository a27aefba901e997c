"""Task classes (D8) and routes (D9), including the issue's "Checked by" items."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crewbook import ChangeNotFoundError
from crewbook.routing import (
    COMPLEXITIES,
    EFFORTS,
    TIERS,
    RoutingError,
    TaskNotFoundError,
    get_preset,
    provider_profile_init,
    role_route,
    task_classify,
    task_route_show,
    task_routes,
)
from crewbook.routing.profiles import builtin_defaults

CHANGE = "add-csv-export"


def tasks_file(project: Path) -> Path:
    return project / "_codev" / "routing" / "tasks.yaml"


def snapshot(project: Path) -> bytes | None:
    path = tasks_file(project)
    return path.read_bytes() if path.exists() else None


def test_classify_stores_the_class_and_returns_the_route(project: Path) -> None:
    provider_profile_init("claude")
    route = task_classify("1.2", complexity="complex", change=CHANGE, project=project)
    implied = builtin_defaults().task_defaults.complex
    assert implied is not None
    assert (route.tier, route.effort) == (implied.tier, implied.effort)
    assert route.tier_source.startswith("complexity complex")
    assert route.model == get_preset("claude").cell(implied.tier, implied.effort).model
    assert route.source == "global"
    stored = yaml.safe_load(tasks_file(project).read_text("utf-8"))
    assert stored["changes"][CHANGE] == {"1.2": {"complexity": "complex"}}
    assert route.task.text == "Write the CSV serializer (UTF-8 with a BOM)"


def test_absent_axes_are_left_unchanged(project: Path) -> None:
    task_classify("1.1", complexity="simple", change=CHANGE, project=project)
    task_classify("1.1", effort_level="high", change=CHANGE, project=project)
    route = task_classify("1.1", capability_tier="deep", change=CHANGE, project=project)
    assert route.task_class is not None
    assert route.task_class.to_dict() == {
        "complexity": "simple",
        "capability_tier": "deep",
        "effort_level": "high",
    }
    assert (route.tier, route.effort) == ("deep", "high")
    assert route.tier_source.startswith("task class")


def test_task_by_position_is_stored_under_its_id(project: Path) -> None:
    route = task_classify("4", effort_level="low", change=CHANGE, project=project)
    assert route.task.id == "2.1"
    assert task_route_show("2.1", change=CHANGE, project=project).effort == "low"


def test_free_task_ids_without_a_change(project: Path) -> None:
    route = task_classify("TSK-03", complexity="complex", capability_tier="deep", project=project)
    assert route.task.change is None
    assert route.task.label == "TSK-03"
    stored = yaml.safe_load(tasks_file(project).read_text("utf-8"))
    assert stored["tasks"] == {"TSK-03": {"complexity": "complex", "capability_tier": "deep"}}
    with pytest.raises(RoutingError, match="task id"):
        task_classify("no spaces allowed", complexity="simple", project=project)


def test_unclassified_task_gets_the_documented_default(project: Path) -> None:
    route = task_route_show("1.3", change=CHANGE, project=project)
    default = builtin_defaults().task_defaults.unclassified
    assert default is not None
    assert (route.tier, route.effort) == (default.tier, default.effort)
    assert route.task_class is None
    assert route.model is None
    assert route.hint
    assert "routing init" in route.hint
    assert "nothing is applied" in str(route)


@pytest.mark.parametrize(
    ("kwargs", "error", "needle"),
    [
        ({}, RoutingError, "at least one axis"),
        ({"capability_tier": "ultra"}, RoutingError, "capability_tier: 'ultra' is not one of"),
        ({"capability_tier": "dep"}, RoutingError, "did you mean 'deep'?"),
        ({"effort_level": "hi", "complexity": "hard"}, RoutingError, "effort_level: 'hi' is not"),
    ],
)
def test_classify_refuses_bad_input_and_changes_nothing(
    project: Path, kwargs: dict[str, str], error: type[Exception], needle: str
) -> None:
    task_classify("1.1", complexity="simple", change=CHANGE, project=project)
    before = snapshot(project)
    with pytest.raises(error, match=needle):
        task_classify("1.2", change=CHANGE, project=project, **kwargs)
    assert snapshot(project) == before


def test_classify_reports_every_bad_axis_at_once(project: Path) -> None:
    with pytest.raises(RoutingError) as info:
        task_classify("1.1", "hard", "ultra", "max", change=CHANGE, project=project)
    assert [p.key for p in info.value.problems] == [
        "complexity",
        "capability_tier",
        "effort_level",
    ]
    assert snapshot(project) is None


def test_classify_an_unknown_task_is_an_error_and_changes_nothing(project: Path) -> None:
    task_classify("1.1", complexity="simple", change=CHANGE, project=project)
    before = snapshot(project)
    with pytest.raises(TaskNotFoundError, match=r"no task '9.9'.*tasks: 1.1, 1.2, 1.3, 2.1"):
        task_classify("9.9", complexity="simple", change=CHANGE, project=project)
    with pytest.raises(TaskNotFoundError, match=r"did you mean '2\.1'"):
        task_classify("2.2", complexity="simple", change=CHANGE, project=project)
    with pytest.raises(ChangeNotFoundError):
        task_classify("1.1", complexity="simple", change="no-such-change", project=project)
    assert snapshot(project) == before


def test_a_change_without_tasks_says_so(tour: Path) -> None:
    with pytest.raises(TaskNotFoundError, match="has no tasks yet"):
        task_classify("1", complexity="simple", change=CHANGE, project=tour)


def test_a_broken_tasks_file_is_reported_never_overwritten(project: Path) -> None:
    path = tasks_file(project)
    path.parent.mkdir(parents=True)
    path.write_text("changes:\n  add-csv-export:\n    1.1: {complexty: simple}\n", "utf-8")
    before = path.read_bytes()
    with pytest.raises(RoutingError) as info:
        task_classify("1.2", complexity="simple", change=CHANGE, project=project)
    messages = " ".join(p.message for p in info.value.problems)
    assert "quote it: '1.1'" in messages
    assert path.read_bytes() == before


def test_a_project_override_of_one_cell_changes_exactly_that_route(project: Path) -> None:
    provider_profile_init("claude")
    task_classify("1.1", complexity="simple", change=CHANGE, project=project)
    task_classify("1.2", complexity="complex", change=CHANGE, project=project)
    task_classify(
        "1.3", capability_tier="standard", effort_level="high", change=CHANGE, project=project
    )
    before = {r.task.id: r for r in task_routes(CHANGE, project).routes}
    target = before["1.3"]
    (project / "_codev" / "routing").mkdir(exist_ok=True)
    (project / "_codev" / "routing" / "profile.yaml").write_text(
        f"matrix:\n  {target.tier}:\n    {target.effort}:\n"
        "      model: project-special-model\n      thinking_budget: 2048\n",
        encoding="utf-8",
    )
    after = {r.task.id: r for r in task_routes(CHANGE, project).routes}
    changed = {
        k
        for k in before
        if getattr(before[k].capability, "route_key", None)
        != getattr(after[k].capability, "route_key", None)
    }
    assert changed == {"1.3"}
    route = task_route_show("1.3", change=CHANGE, project=project)
    assert route.model == "project-special-model"
    assert route.source == "project"
    assert route.source_path == "_codev/routing/profile.yaml"
    assert "_codev/routing/profile.yaml" in str(route)
    assert route.to_dict()["source_path"] == "_codev/routing/profile.yaml"
    used = [s for s in route.steps() if s.step == "model" and s.used]
    assert [s.where for s in used] == ["_codev/routing/profile.yaml"]


def test_role_route_uses_the_profile(project: Path) -> None:
    provider_profile_init("codex")
    route = role_route("developer", "delivery", project)
    default = builtin_defaults().roles.delivery.developer
    assert default is not None
    assert route.capability is not None
    assert route.capability.model == get_preset("codex").cell(default.tier, default.effort).model
    assert repr(route).startswith("<RoleRoute delivery.developer ")


def test_routing_table_of_a_change(project: Path) -> None:
    provider_profile_init("gemini")
    task_classify("1.2", complexity="complex", change=CHANGE, project=project)
    table = task_routes(CHANGE, project)
    assert len(table) == 4
    frame = table.frame()
    assert frame["task"].tolist() == ["1.1", "1.2", "1.3", "2.1"]
    assert frame["done"].tolist() == [False, False, True, False]
    assert frame.loc[1, "tier_source"] == "complexity complex"
    assert frame.loc[0, "tier_source"] == "default"
    assert str(frame["tier"].dtype) == "category"
    assert str(frame["done"].dtype) == "bool"
    implied = builtin_defaults().task_defaults.complex
    assert implied is not None
    assert table["1.2"].tier == implied.tier
    assert "<table" in table._repr_html_()
    assert "| 1.2" in str(table)
    assert table.to_dict()["tasks"][1]["class"] == {"complexity": "complex"}


def test_routing_table_wraps_class_and_sources_between_words(project: Path) -> None:
    provider_profile_init("gemini")
    task_classify("1.2", complexity="complex", capability_tier="deep", change=CHANGE,
                  project=project)
    shown = task_routes(CHANGE, project)._repr_html_()
    cell = re.search(r'style="([^"]*)"[^>]*>complexity=<wbr>complex, '
                     r'capability_tier=<wbr>deep<', shown)
    assert cell is not None, shown
    assert "white-space: normal" in cell.group(1), "a long class wraps between its pairs"


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    steps=st.lists(
        st.tuples(
            st.one_of(st.none(), st.sampled_from(COMPLEXITIES)),
            st.one_of(st.none(), st.sampled_from(TIERS)),
            st.one_of(st.none(), st.sampled_from(EFFORTS)),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_classify_merges_axes_like_a_dict_update(
    project: Path, steps: list[tuple[str | None, str | None, str | None]]
) -> None:
    tasks_file(project).unlink(missing_ok=True)
    expected: dict[str, str] = {}
    for complexity, tier, effort in steps:
        given_axes = {"complexity": complexity, "capability_tier": tier, "effort_level": effort}
        if not any(given_axes.values()):
            with pytest.raises(RoutingError):
                task_classify("2.1", change=CHANGE, project=project)
            continue
        route = task_classify("2.1", complexity, tier, effort, change=CHANGE, project=project)
        expected.update({k: v for k, v in given_axes.items() if v})
        assert route.task_class is not None
        assert route.task_class.to_dict() == expected
