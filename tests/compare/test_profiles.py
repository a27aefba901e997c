"""diff_profiles on hand-made pairs: cells, roles, task defaults, tasks routed differently."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from crewbook import RoutingError, get_preset, task_classify
from crewbook.compare import diff_profiles

TASKS_MD = "- [ ] 1.1 Add the button\n- [ ] 1.2 Write the serializer\n- [ ] 1.3 Name the file\n"


def _profile(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


OPUS = {"model": "claude-opus-4-5", "thinking_budget": 16000, "note": "Opus here."}
SONNET = {"model": "claude-sonnet-4-5", "thinking_budget": 24000, "note": "Sonnet."}


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    a = _profile(tmp_path / "a.yaml", {"family": "claude",
                                       "matrix": {"standard": {"high": SONNET}}})
    b = _profile(tmp_path / "b.yaml", {
        "family": "claude",
        "matrix": {"standard": {"high": OPUS}, "deep": {"low": dict(OPUS, thinking_budget=8000)}},
        "roles": {"delivery": {"reviewer": {"tier": "deep", "effort": "high"}}},
        "task_defaults": {"simple": {"tier": "standard", "effort": "low"}},
    })
    return a, b


def test_identical_profiles_give_an_empty_diff(pair: tuple[Path, Path]) -> None:
    assert diff_profiles(pair[0], pair[0]).empty
    assert diff_profiles("claude", get_preset("claude")).empty
    d = diff_profiles(pair[0], pair[0])
    assert (d.a, d.b) == (f"{pair[0]} (a)", f"{pair[0]} (b)")


def test_cells_roles_and_task_defaults(pair: tuple[Path, Path]) -> None:
    d = diff_profiles(*pair, labels=("before", "after"))
    got = {(e.section, e.item, e.field): (e.before, e.after) for e in d.entries}
    assert got[("cell", "standard/high", "model")] == ("claude-sonnet-4-5", "claude-opus-4-5")
    assert got[("cell", "standard/high", "native")] == ("thinking 24,000 tok",
                                                        "thinking 16,000 tok")
    assert got[("cell", "deep/low", "native")] == ("thinking 4,096 tok", "thinking 8,000 tok")
    assert ("cell", "deep/low", "model") not in got
    assert got[("role", "delivery.reviewer", "effort")] == ("medium", "high")
    assert got[("task_default", "simple", "tier")] == ("light", "standard")
    # a role whose cell changed is rerouted even with the same tier/effort
    assert got[("role", "crew.developer", "model")] == ("claude-sonnet-4-5", "claude-opus-4-5")
    assert {e.section for e in d.entries} == {"cell", "role", "task_default"}


def test_matrix_and_drawing(pair: tuple[Path, Path]) -> None:
    d = diff_profiles(*pair, labels=("before", "after"))
    matrix = d.matrix()
    assert matrix.marked is not None
    assert bool(matrix.marked.loc["standard/high", "after"]) is True
    assert bool(matrix.marked.loc["light/low", "after"]) is False
    model = d.graph_model()
    edges = {(e.source, e.target): e.kind for e in model.edges}
    assert edges[("cell:standard/high", "model:claude-sonnet-4-5")] == "removed"
    assert edges[("cell:standard/high", "model:claude-opus-4-5")] == "added"
    assert model.nodes["cell:deep/low"].status == "changed"
    assert d.dot() == diff_profiles(*pair, labels=("before", "after")).dot()


def test_tasks_routed_differently(tour: Path, pair: tuple[Path, Path]) -> None:
    change = tour / "_codev" / "changes" / "add-csv-export"
    (change / "tasks.md").write_text(TASKS_MD, encoding="utf-8")
    task_classify("1.2", capability_tier="standard", effort_level="high",
                  change="add-csv-export", project=tour)
    task_classify("1.3", complexity="simple", change="add-csv-export", project=tour)
    d = diff_profiles(*pair, change="add-csv-export", project=tour)
    assert d.rerouted_tasks == ["1.2", "1.3"]
    got = {(e.item, e.field): (e.before, e.after) for e in d.section("task")}
    assert got[("1.2", "model")] == ("claude-sonnet-4-5", "claude-opus-4-5")
    assert got[("1.3", "tier")] == ("light", "standard")
    assert d.to_dict()["rerouted_tasks"] == ["1.2", "1.3"]
    assert d.to_dict()["change"] == "add-csv-export"


def test_families_and_preset_files() -> None:
    d = diff_profiles("claude", "codex")
    assert len([e for e in d.section("cell") if e.field == "model"]) == 9
    preset = get_preset("gemini")
    assert diff_profiles(preset.path, "gemini").empty


def test_a_broken_profile_is_a_routing_error(tmp_path: Path) -> None:
    bad = _profile(tmp_path / "bad.yaml", {"family": "claude", "matrix": {"standrd": {}}})
    with pytest.raises(RoutingError, match="did you mean 'standard'"):
        diff_profiles(bad, "claude")


def test_the_active_profile_and_the_display(tour: Path) -> None:
    from crewbook import provider_profile_show

    profile = tour / "_codev" / "routing" / "profile.yaml"
    profile.parent.mkdir(parents=True)
    _profile(profile, {"family": "claude", "matrix": {"light": {"low": SONNET}}})
    d = diff_profiles("claude", provider_profile_show(tour))
    assert d.b == "profile (claude)"
    assert [(e.item, e.field) for e in d.section("cell")] == [("light/low", "model"),
                                                              ("light/low", "native")]
    html = d._repr_html_()
    assert "light/low" in html
    assert "Compared: claude vs profile (claude)" in html
    assert {e.item for e in d.section("role")} == {"delivery.explorer"}
    assert repr(d) == "<ProfileDiff 'claude' → 'profile (claude)': 4 changed>"
