"""The active profile (D7, D9): layered resolution, sources, displays."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from crewbook.routing import (
    LOOP_ROLES,
    RoutingError,
    get_preset,
    provider_profile_init,
    provider_profile_show,
)
from crewbook.routing.profiles import builtin_defaults


def test_show_without_any_profile_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "_codev").mkdir()
    profile = provider_profile_show(tmp_path)
    assert not profile.exists
    assert profile.family is None
    assert "crewbook routing init" in str(profile)
    assert profile.cell("deep", "high").capability is None
    assert profile.role("qa").tier == builtin_defaults().roles.crew.qa.tier  # type: ignore[union-attr]
    assert profile.to_dict()["hint"]


def test_project_cell_overrides_global_and_says_where(project: Path) -> None:
    provider_profile_init("claude")
    (project / "_codev" / "routing").mkdir(parents=True)
    (project / "_codev" / "routing" / "profile.yaml").write_text(
        "matrix:\n  standard:\n    high: {model: my-model, thinking_budget: 1024}\n",
        encoding="utf-8",
    )
    profile = provider_profile_show(project)
    cells = profile.cells()
    overridden = cells[("standard", "high")]
    assert overridden.capability is not None
    assert overridden.capability.model == "my-model"
    assert overridden.source == "project"
    assert overridden.where == "_codev/routing/profile.yaml"
    assert [c.used for c in overridden.candidates] == [True, False, False]
    others = {k: v.source for k, v in cells.items() if k != ("standard", "high")}
    assert set(others.values()) == {"global"}
    frame = profile.frame()
    assert frame.loc[frame["source"] == "project", "model"].tolist() == ["my-model"]
    assert "_codev/routing/profile.yaml: standard/high" in str(profile)
    assert profile.matrix().marked is not None
    assert int(profile.matrix().marked.to_numpy().sum()) == 1


def test_a_profile_of_another_family_is_skipped_for_cells(project: Path) -> None:
    provider_profile_init("claude")
    provider_profile_init("codex", scope="project", project=project)
    path = project / "_codev" / "routing" / "profile.yaml"
    data = yaml.safe_load(path.read_text("utf-8"))
    del data["matrix"]["deep"]  # codex profile without its deep tier
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    profile = provider_profile_show(project)
    assert profile.family == "codex"
    deep = profile.cell("deep", "low")
    assert deep.source == "preset"
    assert deep.capability == get_preset("codex").cell("deep", "low")
    assert any("skipped: family claude" in c.reason for c in deep.candidates)


def test_roles_and_task_defaults_resolve_by_layer(project: Path) -> None:
    provider_profile_init("claude")
    (project / "_codev" / "routing").mkdir(parents=True)
    (project / "_codev" / "routing" / "profile.yaml").write_text(
        "roles:\n  crew:\n    qa: {tier: deep, effort: high}\n"
        "task_defaults:\n  simple: {tier: standard, effort: low}\n",
        encoding="utf-8",
    )
    profile = provider_profile_show(project)
    qa = profile.role("qa")
    assert (qa.tier, qa.effort, qa.source) == ("deep", "high", "project")
    assert qa.capability is not None
    assert qa.capability.route_key == get_preset("claude").cell("deep", "high").route_key
    assert profile.role("developer").source == "global"
    assert profile.task_default("simple").source == "project"
    assert profile.task_default("complex").source == "global"
    frame = profile.roles_frame()
    assert len(frame) == sum(len(r) for r in LOOP_ROLES.values())
    assert str(frame["tier"].dtype) == "category"
    with pytest.raises(RoutingError, match="did you mean 'reviewer'"):
        profile.role("reviwer", "delivery")


def test_invalid_profile_names_file_line_and_key(project: Path) -> None:
    provider_profile_init("claude", scope="project", project=project)
    path = project / "_codev" / "routing" / "profile.yaml"
    text = path.read_text("utf-8").replace("  standard:\n", "  standrd:\n", 1)
    text = text.replace("effort: high", "effort: hihg", 1)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RoutingError) as info:
        provider_profile_show(project)
    by_code = {p.code: p for p in info.value.problems}
    assert "did you mean 'standard'?" in by_code["unknown_key"].message
    assert by_code["unknown_key"].path == "_codev/routing/profile.yaml"
    lines = text.splitlines()
    line = by_code["unknown_key"].line
    assert line is not None
    assert lines[line - 1].strip() == "standrd:"
    assert "hihg" in by_code["invalid_value"].message


def test_show_with_a_missing_custom_family_still_shows_cells(home: Path, project: Path) -> None:
    provider_profile_init("claude")
    path = home / "profile.yaml"
    path.write_text(path.read_text("utf-8").replace("family: claude", "family: gone"))
    profile = provider_profile_show(project)
    assert profile.preset is None
    assert profile.preset_problem
    assert profile.cell("deep", "low").source == "global"


def test_profile_displays(project: Path) -> None:
    provider_profile_init("mistral")
    profile = provider_profile_show(project)
    assert repr(profile) == "<ActiveProfile family='mistral' (global)>"
    html = profile._repr_html_()
    assert "Routing profile" in html
    assert "<table" in html
    assert profile._repr_html_() == html
    assert profile.role_matrix().frame.shape == (10, 3), "role × tier: it fits a notebook"
    data = profile.to_dict()
    assert data["layers"] == [
        {"scope": "global", "path": "$CREWBOOK_HOME/profile.yaml", "family": "mistral"}
    ]


def test_cell_and_role_displays(project: Path) -> None:
    provider_profile_init("codex")
    profile = provider_profile_show(project)
    cell = profile.cell("light", "high")
    assert repr(cell).startswith("<CellResolution light/high → ")
    assert str(cell).splitlines()[1].startswith("  → global")
    assert "<table" in cell._repr_html_()
    assert "crew.qa" in profile.role("qa")._repr_html_()
    with pytest.raises(RoutingError, match="did you mean 'high'"):
        profile.cell("light", "hgh")
