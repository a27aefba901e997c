"""Routing as long DataFrames with documented columns and real dtypes (DESIGN rule 5).

Tier and effort are ordered categories (deep → light, low → high), sources are
categories, thinking budgets are `Int64`; `matrices.py` builds the displays.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .axes import EFFORTS, LOOP_ROLES, TIERS, Effort, Tier
from .model import Capability

if TYPE_CHECKING:
    import pandas as pd

    from .resolutions import CellResolution, RoleRoute
    from .routes import TaskRoute


def _axis_dtypes() -> dict[str, Any]:
    import pandas as pd

    return {
        "tier": pd.CategoricalDtype(list(TIERS), ordered=True),
        "effort": pd.CategoricalDtype(list(EFFORTS), ordered=True),
    }


_CAP_COLUMNS = [
    "model",
    "setting",
    "reasoning_effort",
    "thinking_budget",
    "native_text",
    "note",
]


def _cap_row(cap: Capability | None) -> dict[str, Any]:
    if cap is None:
        return dict.fromkeys(_CAP_COLUMNS)
    return {
        "model": cap.model,
        "setting": cap.setting,
        "reasoning_effort": cap.reasoning_effort,
        "thinking_budget": cap.thinking_budget,
        "native_text": cap.native_text,
        "note": cap.note,
    }


def _cap_dtypes() -> dict[str, Any]:
    import pandas as pd

    return {
        "model": "string",
        "setting": pd.CategoricalDtype(["reasoning_effort", "thinking_budget", "none"]),
        "reasoning_effort": "string",
        "thinking_budget": "Int64",
        "native_text": "string",
        "note": "string",
    }


def cells_frame(
    cells: Mapping[tuple[Tier, Effort], Capability | None], family: str | None = None
) -> pd.DataFrame:
    """One row per cell: family, tier, effort (ordered categories), model, setting,
    reasoning_effort (string), thinking_budget (Int64), native_text, note."""
    import pandas as pd

    rows = [
        {"family": family, "tier": t, "effort": e, **_cap_row(c)} for (t, e), c in cells.items()
    ]
    columns = ["family", "tier", "effort", *_CAP_COLUMNS]
    return pd.DataFrame(rows, columns=columns).astype(
        {"family": "string", **_axis_dtypes(), **_cap_dtypes()}
    )


_SOURCES = ["project", "global", "preset", "built-in", "none"]


def resolutions_frame(
    resolutions: Sequence[CellResolution], family: str | None = None
) -> pd.DataFrame:
    """`cells_frame` plus source (category: project, global, preset, none) and source_path."""
    import pandas as pd

    frame = cells_frame({(r.tier, r.effort): r.capability for r in resolutions}, family)
    frame["source"] = pd.Categorical([r.source for r in resolutions], categories=_SOURCES)
    frame["source_path"] = pd.Series([r.where for r in resolutions], dtype="string")
    return frame


def roles_frame(roles: Sequence[RoleRoute]) -> pd.DataFrame:
    """One row per role: loop, role, tier, effort, source, source_path (of the pair),
    model, native_text, cell_source, cell_path (of the model)."""
    import pandas as pd

    rows = [
        {
            "loop": r.loop,
            "role": r.role,
            "tier": r.tier,
            "effort": r.effort,
            "source": r.source,
            "source_path": r.where,
            "model": r.capability.model if r.capability else None,
            "native_text": r.capability.native_text if r.capability else None,
            "cell_source": r.cell.source,
            "cell_path": r.cell.where,
        }
        for r in roles
    ]
    columns = [
        "loop",
        "role",
        "tier",
        "effort",
        "source",
        "source_path",
        "model",
        "native_text",
        "cell_source",
        "cell_path",
    ]
    src = pd.CategoricalDtype(_SOURCES)
    return pd.DataFrame(rows, columns=columns).astype(
        {
            "loop": pd.CategoricalDtype(list(LOOP_ROLES)),
            "role": "string",
            **_axis_dtypes(),
            "source": src,
            "source_path": "string",
            "model": "string",
            "native_text": "string",
            "cell_source": src,
            "cell_path": "string",
        }
    )


def short_source(source: str) -> str:
    """`class`, `complexity simple`, `complexity complex` or `default`."""
    if source.startswith("task class"):
        return "class"
    if source.startswith("complexity"):
        return " ".join(source.split()[:2])
    return "default"


def routes_frame(routes: Sequence[TaskRoute]) -> pd.DataFrame:
    """One row per task: task, change, text, done, complexity, capability_tier,
    effort_level (the stored class), tier, tier_source, effort, effort_source (class,
    complexity simple/complex, default), model, native_text, source, source_path."""
    import pandas as pd

    rows = []
    for r in routes:
        cls = r.task_class.to_dict() if r.task_class else {}
        rows.append(
            {
                "task": r.task.id,
                "change": r.task.change,
                "text": r.task.text if r.task.item else None,
                "done": bool(r.task.item.done) if r.task.item else False,
                "complexity": cls.get("complexity"),
                "capability_tier": cls.get("capability_tier"),
                "effort_level": cls.get("effort_level"),
                "tier": r.tier,
                "tier_source": short_source(r.tier_source),
                "effort": r.effort,
                "effort_source": short_source(r.effort_source),
                "model": r.model,
                "native_text": r.capability.native_text if r.capability else None,
                "source": r.source,
                "source_path": r.source_path,
            }
        )
    columns = [
        "task",
        "change",
        "text",
        "done",
        "complexity",
        "capability_tier",
        "effort_level",
        "tier",
        "tier_source",
        "effort",
        "effort_source",
        "model",
        "native_text",
        "source",
        "source_path",
    ]
    axis = _axis_dtypes()
    how = pd.CategoricalDtype(["class", "complexity simple", "complexity complex", "default"])
    return pd.DataFrame(rows, columns=columns).astype(
        {
            "task": "string",
            "change": "string",
            "text": "string",
            "done": bool,
            "complexity": pd.CategoricalDtype(["simple", "complex"]),
            "capability_tier": axis["tier"],
            "effort_level": axis["effort"],
            **axis,
            "tier_source": how,
            "effort_source": how,
            "model": "string",
            "native_text": "string",
            "source": pd.CategoricalDtype(_SOURCES),
            "source_path": "string",
        }
    )
