"""Matrices: DataFrames with real dtypes and stable, coloured displays."""

from __future__ import annotations

from pathlib import Path

import pytest

from crewbook.routing import (
    EFFORTS,
    TIERS,
    compare_profiles,
    get_preset,
    provider_profile_init,
    provider_profile_show,
)
from crewbook.routing.graph import model_colours


def test_model_colours_are_stable_and_distinct() -> None:
    colours = model_colours(["a", "b", "a", None, "c"])
    assert list(colours) == ["a", "b", "c"]
    assert model_colours(["c", "b", "a"]) == colours, "a model's colour ignores the order"
    models = [m for family in ("claude", "codex", "gemini", "mistral")
              for m in get_preset(family).models]
    preset_colours = model_colours(models)
    assert len(set(preset_colours.values())) == len(set(models)), "built-in models never share"


def test_one_model_one_colour_in_every_table() -> None:
    from crewbook import routing

    claude = get_preset("claude").matrix()
    compared = routing.compare_profiles("gemini", "claude").matrix()
    seen: dict[str, set[str]] = {}
    for matrix in (claude, compared):
        assert matrix.colours is not None
        for i in range(matrix.frame.shape[0]):
            for j in range(matrix.frame.shape[1]):
                colour = matrix.colours.iat[i, j]
                if colour:
                    model = str(matrix.frame.iat[i, j]).split(" · ")[0]
                    seen.setdefault(model, set()).add(colour)
    assert seen
    assert all(len(c) == 1 for c in seen.values()), seen


def test_model_names_do_not_wrap_and_texts_are_not_cut() -> None:
    html = get_preset("claude").matrix().to_html()
    assert "white-space: nowrap" in html


def test_capability_matrix_colours_cells_by_model() -> None:
    preset = get_preset("claude")
    matrix = preset.matrix()
    assert matrix.frame.index.tolist() == list(TIERS)
    assert matrix.frame.columns.tolist() == list(EFFORTS)
    assert matrix.colours is not None
    for tier in TIERS:
        # one model per tier in this preset's file: one colour per row
        models = {preset.cell(tier, e).model for e in EFFORTS}
        assert len(set(matrix.colours.loc[tier])) == len(models)
    html = matrix.to_html()
    assert html == preset.matrix().to_html(), "the HTML must be the same on every run"
    assert "background-color" in html
    assert "<br><small>" in html
    assert "outline" not in html
    assert "| deep" in matrix.to_markdown()


def test_comparison_frames_the_differences(project: Path) -> None:
    same = compare_profiles("codex", "codex")
    assert same.names == ("codex", "codex (2)")
    assert same.differences == []
    provider_profile_init("codex")
    path = project / "_codev" / "routing" / "profile.yaml"
    path.parent.mkdir(parents=True)
    path.write_text("matrix:\n  light:\n    low: {model: other, reasoning_effort: low}\n", "utf-8")
    comparison = compare_profiles("codex", provider_profile_show(project))
    assert comparison.differences == [("project profile (codex)", "light", "low")]
    matrix = comparison.matrix()
    assert matrix.marked is not None
    assert int(matrix.marked.to_numpy().sum()) == 1
    assert "outline: 2px solid #c62828" in matrix.to_html()
    assert "framed: differs from codex" in str(comparison)
    frame = comparison.frame()
    assert len(frame) == 18
    assert frame["differs"].sum() == 1
    assert comparison.to_dict()["differences"] == [
        {"name": "project profile (codex)", "tier": "light", "effort": "low"}
    ]


def test_four_families_side_by_side() -> None:
    comparison = compare_profiles("claude", "codex", "gemini", "mistral")
    assert comparison.matrix().frame.shape == (9, 4)
    assert repr(comparison).endswith("27 differing cells>")


def test_compare_needs_two_and_known_things() -> None:
    with pytest.raises(TypeError):
        compare_profiles("claude")
    with pytest.raises(TypeError, match="cannot compare"):
        compare_profiles("claude", 3)  # type: ignore[arg-type]


def test_role_matrix_places_each_role_in_its_cell(project: Path) -> None:
    provider_profile_init("claude")
    profile = provider_profile_show(project)
    matrix = profile.role_matrix()
    for route in profile.roles():
        row = matrix.frame.loc[f"{route.role} ({route.loop})"]
        filled = [c for c, v in row.items() if v]
        assert filled == [route.tier]
        assert route.capability is not None
        assert row[filled[0]] == f"{route.capability.model} · {route.effort}"


def test_routing_tables_fit_a_notebook_cell(project: Path) -> None:
    """The role matrix has a column per tier (not nine tier/effort pairs), headers may
    wrap (inline styles: an untrusted notebook keeps them), model names never break."""
    provider_profile_init("claude")
    profile = provider_profile_show(project)
    matrix = profile.role_matrix()
    assert list(matrix.frame.columns) == ["deep", "standard", "light"]
    shown = matrix.to_html()
    assert shown.count("white-space: normal; text-align: left") >= 3 + len(matrix.frame)
    assert "claude-opus-4-5<br><small>" in shown
    assert "white-space: nowrap" in shown
