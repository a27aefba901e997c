"""`Router`: the route every loop contract carries, resolved through routing (issue 15)."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest

from crewbook.delivery import CoordinatorLoop, Delegate, Plan, StandardLoop, Task
from crewbook.pipeline import load_pipeline
from crewbook.routing import provider_profile_init, provider_profile_show
from crewbook.routing.router import Router, TaskRoute

SEED = Path(__file__).parents[1] / "data" / "pipelines" / "role_pipeline.toml"


def test_without_a_profile_the_route_has_tier_and_effort_but_no_model(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # outside any project, and no global profile (CREWBOOK_HOME)
    route = Router("delivery")("reviewer")
    assert route is not None
    assert (route["tier"], route["effort"], route["model"]) == ("deep", "medium", None)
    assert route["source"] == "built-in: delivery.reviewer"


def test_a_profile_gives_the_model_and_its_native_effort(project: Path) -> None:
    provider_profile_init("codex", "project", project=project)
    router = Router("crew", project)
    route = router("developer")
    cell = provider_profile_show(project).cell("standard", "high").capability
    assert cell is not None
    assert (route or {})["model"] == cell.model
    assert (route or {})["native"] == cell.native
    assert router("developer") is route, "each role is resolved once"


def test_a_role_routing_does_not_know_gets_the_unclassified_route(project: Path) -> None:
    route = Router("pipeline", profile=provider_profile_show(project))("implementer")
    assert route is not None
    assert route["source"] == "task_defaults.unclassified"
    assert (route["tier"], route["effort"]) == ("standard", "medium")


def test_every_engine_contract_carries_its_route(project: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    provider_profile_init("claude", "project", project=project)
    monkeypatch.chdir(project)  # the default router finds the project from here
    coordinator = CoordinatorLoop(Task(description="export CSV"))
    act = coordinator.contract()
    assert act.role == "architect"
    expected = provider_profile_show(project).role("architect", "delivery").capability
    assert expected is not None
    assert act.route is not None
    assert act.route["model"] == expected.model
    coordinator.report(Plan(("exports CSV",)))
    act = coordinator.report(Delegate("developer", "build it"))
    assert act.role == "developer"
    assert act.route is not None
    assert act.route["role"] == "developer"
    standard = StandardLoop(Task(description="export CSV", mode="standard"))
    assert standard.contract().route is not None
    pipeline = load_pipeline(SEED).loop()
    act = pipeline.contract()
    assert act.route is not None
    assert act.route["role"] == act.stage
    assert act.to_dict()["route"]["model"] == act.route["model"]


def test_a_router_by_task_gives_task_routes_and_a_plain_one_does_not(project: Path) -> None:
    """Task routes come from how the router was built, not from the loop's name."""
    plain = Router("crew", project)("developer")
    by_task = cast("TaskRoute | None", Router("crew", project, by_task=True)("developer"))
    assert plain is not None
    assert by_task is not None
    assert "via" not in plain
    assert (by_task["via"], by_task["task"], by_task["suggestion"]) == ("role default", None,
                                                                         True)
    assert (by_task["tier"], by_task["effort"]) == (plain["tier"], plain["effort"])
