"""The routing rules as problems (D7–D9): axis values, a preset's native setting in every
cell, and YAML keys that are not text. Loaders raise one `RoutingError` listing them."""

from __future__ import annotations

from typing import Any

from ..errors import Problem, did_you_mean
from ..sources import SourceDoc
from .axes import AXES, EFFORTS, TIERS
from .model import PresetFile


def check_axis(axis: str, value: object) -> str | None:
    """Why `value` is not allowed on `axis` (with the nearest allowed value), or None."""
    allowed = AXES[axis]
    if value in allowed:
        return None
    hint = did_you_mean(str(value), allowed) if isinstance(value, str) else ""
    return f"{value!r} is not one of {', '.join(allowed)}{hint}"


def check_axes(values: dict[str, str | None]) -> list[Problem]:
    """Problems with the given axis values (at least one set, each allowed)."""
    given = {k: v for k, v in values.items() if v is not None}
    if not given:
        return [
            Problem(
                "no_axis",
                "give at least one axis: "
                + "; ".join(f"{axis} ({'|'.join(allowed)})" for axis, allowed in AXES.items()),
            )
        ]
    return [
        Problem("invalid_value", msg, key=axis)
        for axis, value in given.items()
        if (msg := check_axis(axis, value))
    ]


def check_settings(preset: PresetFile, doc: SourceDoc) -> list[Problem]:
    """Every cell uses the family's declared native setting."""
    problems = []
    for tier in TIERS:
        for effort in EFFORTS:
            cell = preset.matrix.cell(tier, effort)
            if cell.setting != preset.setting:
                want = (
                    "neither reasoning_effort nor thinking_budget"
                    if preset.setting == "none"
                    else preset.setting
                )
                problems.append(
                    doc.problem(
                        "wrong_setting",
                        f"the family's setting is {preset.setting!r}, so this cell needs "
                        f"{want}; it uses {cell.setting!r}",
                        ("matrix", tier, effort),
                    )
                )
    return problems


def non_string_keys(doc: SourceDoc) -> list[Problem]:
    """YAML reads `1.2:` as a number: say so plainly instead of a type error."""
    problems: list[Problem] = []

    def walk(data: Any, where: tuple[str | int, ...]) -> None:
        if isinstance(data, dict):
            for key, value in data.items():
                if not isinstance(key, str):
                    problems.append(
                        doc.problem(
                            "wrong_type",
                            f"key {key!r} is read as a {type(key).__name__}, not text; "
                            f"quote it: '{key}'",
                            (*where, str(key)),
                        )
                    )
                walk(value, (*where, str(key)))

    walk(doc.data, ())
    return problems
