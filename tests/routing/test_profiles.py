"""Profiles (D7): init from a preset, refusal without force, layered resolution."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from crewbook import AlreadyExistsError, ProjectNotFoundError
from crewbook.routing import (
    EFFORTS,
    LOOP_ROLES,
    TIERS,
    PresetNotFoundError,
    RoutingError,
    get_preset,
    provider_profile_init,
)


def test_init_global_writes_the_preset_matrix_and_role_defaults(home: Path) -> None:
    result = provider_profile_init("claude")
    path = home / "profile.yaml"
    assert result.path == path
    assert result.display_path == "$CREWBOOK_HOME/profile.yaml"
    assert not result.overwritten
    assert "_codev/routing/profile.yaml" in result.advice
    assert "suggestion" in result.advice
    data = yaml.safe_load(path.read_text("utf-8"))
    preset = get_preset("claude")
    assert data["family"] == "claude"
    for tier in TIERS:
        for effort in EFFORTS:
            assert data["matrix"][tier][effort]["model"] == preset.cell(tier, effort).model
    assert set(data["roles"]) == set(LOOP_ROLES)
    assert set(data["roles"]["delivery"]) == set(LOOP_ROLES["delivery"])
    assert path.read_text("utf-8").startswith("# crewbook routing profile (global)")


def test_init_twice_is_refused_and_the_file_unchanged(home: Path) -> None:
    provider_profile_init("claude")
    path = home / "profile.yaml"
    path.write_text(path.read_text("utf-8") + "# my edit\n", encoding="utf-8")
    before = path.read_bytes()
    with pytest.raises(AlreadyExistsError, match=r"\$CREWBOOK_HOME/profile.yaml") as info:
        provider_profile_init("codex")
    assert info.value.path == path
    assert "Pass force=True to regenerate" in str(info.value)
    assert "--force" not in str(info.value)
    assert path.read_bytes() == before
    again = provider_profile_init("codex", force=True)
    assert again.overwritten
    assert yaml.safe_load(path.read_text("utf-8"))["family"] == "codex"
    assert b"# my edit" not in path.read_bytes()


def test_init_output_is_deterministic(home: Path) -> None:
    provider_profile_init("gemini")
    first = (home / "profile.yaml").read_bytes()
    provider_profile_init("gemini", force=True)
    assert (home / "profile.yaml").read_bytes() == first


def test_init_project_scope_lives_in_the_project(project: Path, home: Path) -> None:
    result = provider_profile_init("codex", scope="project", project=project)
    assert result.display_path == "_codev/routing/profile.yaml"
    assert (project / "_codev" / "routing" / "profile.yaml").is_file()
    assert not (home / "profile.yaml").exists()
    with pytest.raises(AlreadyExistsError, match=r"_codev/routing/profile\.yaml"):
        provider_profile_init("codex", scope="project", project=project)


def test_init_project_scope_needs_a_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ProjectNotFoundError):
        provider_profile_init("claude", scope="project")


def test_init_rejects_an_unknown_scope_or_family(home: Path) -> None:
    with pytest.raises(RoutingError, match="did you mean 'global'"):
        provider_profile_init("claude", scope="globl")
    with pytest.raises(PresetNotFoundError):
        provider_profile_init("nope")
    assert not (home / "profile.yaml").exists()
