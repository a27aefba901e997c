"""Provider presets (D7): built-in data, custom presets, strict validation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from crewbook.routing import (
    EFFORTS,
    TIERS,
    PresetNotFoundError,
    RoutingError,
    get_preset,
    provider_presets_list,
)
from crewbook.routing.home import builtin_presets_folder

FAMILIES = ["claude", "codex", "gemini", "mistral"]


def raw(family: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(
        (builtin_presets_folder() / f"{family}.yaml").read_text("utf-8")
    )
    return data


def write_preset(home: Path, name: str, data: dict[str, Any] | str) -> Path:
    folder = home / "presets"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    text = data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_four_builtin_families_are_listed() -> None:
    listing = provider_presets_list()
    assert listing.families == FAMILIES
    assert all(p.source == "built-in" and not p.overrides_builtin for p in listing)
    assert listing.warnings == ()


@pytest.mark.parametrize("family", FAMILIES)
def test_builtin_preset_matches_its_file(family: str) -> None:
    data = raw(family)
    preset = get_preset(family)
    for tier in TIERS:
        for effort in EFFORTS:
            cell = preset.cell(tier, effort)
            written = data["matrix"][tier][effort]
            assert cell.model == written["model"]
            assert cell.setting == data["setting"]
            assert cell.note
            assert "\n" not in cell.note
    assert preset.file.setting_note
    assert "\n" not in preset.file.setting_note.strip()


def test_native_settings_are_the_expected_kinds() -> None:
    kinds = {f: get_preset(f).file.setting for f in FAMILIES}
    assert kinds == {
        "claude": "thinking_budget",
        "codex": "reasoning_effort",
        "gemini": "thinking_budget",
        "mistral": "none",
    }
    assert get_preset("mistral").cell("deep", "high").native is None
    assert get_preset("codex").cell("light", "low").native == "low"


def test_vendor_alias_resolves_to_the_family() -> None:
    assert get_preset("anthropic").family == "claude"
    assert get_preset("openai").family == "codex"


def test_unknown_family_suggests_the_nearest() -> None:
    with pytest.raises(PresetNotFoundError, match=r"did you mean 'claude'\?") as info:
        get_preset("claud")
    assert isinstance(info.value, KeyError)
    with pytest.raises(PresetNotFoundError, match="families: claude, codex, gemini, mistral"):
        get_preset("zzz")


def test_custom_preset_with_a_builtin_name_overrides_it(home: Path) -> None:
    data = raw("claude")
    data["matrix"]["deep"]["high"]["model"] = "my-own-deep-model"
    write_preset(home, "claude.yaml", data)
    listing = provider_presets_list()
    preset = listing["claude"]
    assert preset.source == "custom"
    assert preset.overrides_builtin
    assert preset.cell("deep", "high").model == "my-own-deep-model"
    assert listing.families.count("claude") == 1
    assert "overrides the built-in" in str(listing)
    assert listing.to_dict()["presets"][0]["overrides_builtin"] is True


def test_custom_preset_with_a_free_name(home: Path) -> None:
    write_preset(home, "acme-llm.yaml", {**raw("mistral"), "family": "acme-llm"})
    listing = provider_presets_list()
    assert listing.families[0] == "acme-llm"
    assert listing["acme-llm"].source == "custom"
    assert not listing["acme-llm"].overrides_builtin


def test_broken_custom_preset_is_a_warning_and_an_error_when_asked_for(home: Path) -> None:
    data = raw("codex")
    data["matrix"]["deep"]["hihg"] = data["matrix"]["deep"].pop("high")
    write_preset(home, "codex.yaml", data)
    listing = provider_presets_list()
    assert [w.code for w in listing.warnings] == ["preset_unusable"]
    assert "codex" not in listing  # the built-in is NOT silently used instead
    with pytest.raises(RoutingError) as info:
        get_preset("codex")
    codes = info.value.codes
    assert "unknown_key" in codes
    assert "missing_key" in codes
    unknown = next(p for p in info.value.problems if p.code == "unknown_key")
    assert "did you mean 'high'?" in unknown.message
    assert unknown.path == "$CREWBOOK_HOME/presets/codex.yaml"
    assert unknown.line is not None
    assert unknown.line > 1


def test_preset_cells_must_use_the_family_setting(home: Path) -> None:
    data = raw("codex")
    cell = data["matrix"]["light"]["low"]
    del cell["reasoning_effort"]
    cell["thinking_budget"] = 1024
    path = write_preset(home, "mixed.yaml", data)
    with pytest.raises(RoutingError) as info:
        get_preset("mixed")
    problem = info.value.problems[0]
    assert problem.code == "wrong_setting"
    assert problem.key == "matrix.light.low"
    lines = path.read_text("utf-8").splitlines()
    assert problem.line is not None
    assert "low:" in lines[problem.line - 1]


def test_one_knob_per_cell_and_a_note_required(home: Path) -> None:
    data = raw("gemini")
    data["matrix"]["deep"]["low"]["reasoning_effort"] = "low"
    del data["matrix"]["standard"]["medium"]["note"]
    write_preset(home, "two-knobs.yaml", data)
    with pytest.raises(RoutingError) as info:
        get_preset("two-knobs")
    assert sorted(info.value.codes) == ["conflicting_keys", "missing_key"]


def test_file_name_is_the_family_and_a_mismatch_warns(home: Path) -> None:
    write_preset(home, "team.yaml", {**raw("claude"), "family": "other"})
    listing = provider_presets_list()
    assert "team" in listing
    assert [w.code for w in listing.warnings] == ["preset_name_mismatch"]


def test_malformed_yaml_is_reported_with_its_line(home: Path) -> None:
    write_preset(home, "bad.yaml", "family: bad\nmatrix: [\n")
    listing = provider_presets_list()
    assert listing.warnings[0].code == "preset_unusable"
    with pytest.raises(RoutingError) as info:
        get_preset("bad")
    assert info.value.codes == ["yaml_syntax"]


def test_preset_frame_and_displays() -> None:
    preset = get_preset("claude")
    frame = preset.frame()
    assert len(frame) == 9
    assert list(frame["tier"].cat.categories) == list(TIERS)
    assert str(frame["thinking_budget"].dtype) == "Int64"
    assert "claude" in repr(preset)
    assert "<table" in preset._repr_html_()
    assert preset.matrix().frame.shape == (3, 3)
    assert "Preset claude" in str(preset)
    listing = provider_presets_list()
    assert listing.frame()["family"].tolist() == FAMILIES
    assert "<table" in listing._repr_html_()
    assert "4 presets" in repr(listing)
