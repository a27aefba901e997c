"""docs/routing.md agrees with the shipped data (defaults and preset models)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from crewbook.routing import EFFORTS, LOOP_ROLES, TIERS, get_preset
from crewbook.routing.profiles import builtin_defaults

DOC = (Path(__file__).resolve().parents[2] / "docs" / "routing.md").read_text("utf-8")


def test_role_defaults_table_matches_the_data() -> None:
    rows = re.findall(r"^\| (crew|delivery) \| ([a-z-]+)[^|]* \| (\w+) / (\w+) \|$", DOC, re.M)
    documented = {(loop, role): (tier, effort) for loop, role, tier, effort in rows}
    defaults = builtin_defaults().roles
    actual = {}
    for loop, roles in LOOP_ROLES.items():
        for role in roles:
            pair = defaults.get(loop, role)
            assert pair is not None
            actual[(loop, role)] = (pair.tier, pair.effort)
    assert documented == actual


def test_complexity_defaults_table_matches_the_data() -> None:
    td = builtin_defaults().task_defaults
    for kind, label in (
        ("unclassified", "nothing set"),
        ("simple", "complexity: simple"),
        ("complex", "complexity: complex"),
    ):
        pair = getattr(td, kind)
        assert re.search(rf"\| [^|]*{label}[^|]* \| `{pair.tier}` \| `{pair.effort}` \|", DOC)


@pytest.mark.parametrize("family", ["claude", "codex", "gemini", "mistral"])
def test_preset_models_are_named_in_the_docs(family: str) -> None:
    preset = get_preset(family)
    row = next(line for line in DOC.splitlines() if line.startswith(f"| `{family}` |"))
    assert f"`{preset.file.setting}`" in row
    for tier in TIERS:
        for effort in EFFORTS:
            assert f"`{preset.cell(tier, effort).model}`" in row
