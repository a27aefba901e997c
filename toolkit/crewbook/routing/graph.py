"""Routing as DataFrames and matrices (the design card's "role-routing matrices").

* `capability_matrix`: tier × effort → `model · native effort`, coloured by model;
* `role_matrix`: role × tier → model · effort, for the crew and delivery roles;
* `task_table`: the routes of a change's tasks, with where each axis came from;
* `compare_profiles`: two or more profiles or families side by side, differences framed.

Each display is a `RoutingMatrix`, the drawing layer's `crewbook.draw.Matrix` with
categorical colours (one per model) instead of a numeric scale; its `frame` is the
table shown, and the `*_frame` functions give long tables with real dtypes.
"""

from __future__ import annotations

import functools
import html
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..draw.matrix import Matrix, content_uuid, inline_styles, text_colour
from ..draw.table import breakable
from .axes import EFFORTS, TIERS, Effort, Tier
from .checks import check_settings
from .files import load_model
from .frames import cells_frame, short_source
from .home import builtin_presets_folder
from .model import Capability, PresetFile

if TYPE_CHECKING:
    import pandas as pd

    from .resolutions import RoleRoute
    from .routes import TaskRoute

#: Light, distinct fills (ColorBrewer Set3, then Pastel1) for models, readable with black text.
MODEL_PALETTE: tuple[str, ...] = (
    "#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5",
    "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f", "#fbb4ae", "#b3cde3", "#decbe4", "#fed9a6",
    "#e5d8bd", "#fddaec", "#f2f2f2",
)
#: Columns of prose (task texts, meanings) that wrap; every other cell stays on one line,
#: so that a model name never breaks at its hyphens.
WRAPPED_COLUMNS = frozenset({"text", "what it means", "note", "reason"})
#: Columns of short phrases that may wrap between their words and after an ``=`` (a
#: task's class: ``capability_tier=standard, effort_level=high``), never inside a word.
BREAKING_COLUMNS = frozenset({"class"})
MARK_CSS = "outline: 2px solid #c62828; outline-offset: -2px; font-weight: bold"
EMPTY = "—"
SEP = " · "


@functools.cache
def _preset_models() -> dict[str, int]:
    """The models of the built-in presets, each with its own palette slot (family by
    family, in file order), so that they never share a colour."""
    slots: dict[str, int] = {}
    for path in sorted(builtin_presets_folder().glob("*.yaml")):
        file = load_model(path, PresetFile, path.name, "preset", check_settings)
        for model in dict.fromkeys(file.matrix.cell(t, e).model for t in TIERS for e in EFFORTS):
            slots.setdefault(model, len(slots))
    return slots


def model_colour(model: str) -> str:
    """The one colour of `model`, the same in every matrix and table: built-in preset
    models have their own slots; any other model a slot from a hash of its name."""
    slot = _preset_models().get(model)
    if slot is None:
        slot = zlib.crc32(model.encode("utf-8"))
    return MODEL_PALETTE[slot % len(MODEL_PALETTE)]


def model_colours(models: Iterable[str | None]) -> dict[str, str]:
    """The colour of each model named (`model_colour`), in order of first appearance."""
    return {m: model_colour(m) for m in dict.fromkeys(models) if m}


@dataclass(frozen=True, eq=False)
class RoutingMatrix(Matrix):
    """A text `Matrix` whose cells are filled by category (model) and optionally framed.

    colours: same shape as `frame`, a CSS colour or None per cell; marked: same shape,
    True for cells drawn with a red frame (a project override, a difference); note:
    a line under the table explaining the marks.
    """

    colours: pd.DataFrame | None = None
    marked: pd.DataFrame | None = None
    note: str = ""

    def to_html(self) -> str:
        """The table as HTML: cells filled by model, marked cells framed (stable ids)."""
        frame = self.frame

        def fmt(value: Any) -> str:
            text = EMPTY if value is None else str(value)
            if SEP in text:
                first, rest = text.split(SEP, 1)
                return f"{html.escape(first)}<br><small>{html.escape(rest)}</small>"
            return html.escape(text)

        def styles(_: Any) -> pd.DataFrame:
            import pandas as pd

            out = pd.DataFrame("", index=frame.index, columns=frame.columns)
            for i in range(frame.shape[0]):
                for j in range(frame.shape[1]):
                    css = []
                    colour = self.colours.iat[i, j] if self.colours is not None else None
                    if isinstance(colour, str) and colour:
                        css.append(f"background-color: {colour}; color: {text_colour(colour)}")
                    if frame.columns[j] in WRAPPED_COLUMNS:  # prose: wraps, never cut
                        css.append("white-space: normal; text-align: left; min-width: 12em")
                    elif frame.columns[j] in BREAKING_COLUMNS or str(
                            frame.columns[j]).endswith(" from"):  # "complexity simple"
                        css.append("white-space: normal; text-align: left")
                    else:  # a model name never breaks at its hyphens
                        css.append("white-space: nowrap")
                    if self.marked is not None and bool(self.marked.iat[i, j]):
                        css.append(MARK_CSS)
                    out.iat[i, j] = "; ".join(css)
            return out

        note = f"<p><small>{html.escape(self.note)}</small></p>" if self.note else ""
        try:
            import jinja2  # noqa: F401  (Styler needs it)
        except ImportError:  # pragma: no cover - jinja2 ships with the notebook stack
            table = frame.map(fmt).to_html(escape=False)
            title = f"<p><b>{html.escape(self.title)}</b></p>" if self.title else ""
            return f"<div class='crewbook-matrix'>{title}{table}{note}</div>"
        def heads(labels: pd.Series) -> list[str]:  # inline: kept in untrusted notebooks
            return ["white-space: normal; text-align: left"] * len(labels)

        styler = (
            frame.style.set_uuid(content_uuid(frame, self.title))
            .format(fmt)
            .format(lambda v: fmt(v).replace("=", "=<wbr>"),
                    subset=[c for c in frame.columns if c in BREAKING_COLUMNS])
            .apply(styles, axis=None)
            .format_index(lambda v: breakable(str(v)), axis=1)
            .format_index(lambda v: html.escape(str(v)), axis=0)
            .apply_index(heads, axis=0)
            .apply_index(heads, axis=1)
            .set_table_styles(
                [
                    {"selector": "td", "props": "text-align: center; padding: 3px 8px; "
                                                "white-space: nowrap"},
                    {
                        "selector": "caption",
                        "props": "caption-side: top; font-weight: bold; text-align: left",
                    },
                ]
            )
        )
        if self.title:
            styler = styler.set_caption(html.escape(self.title))
        return f"<div class='crewbook-matrix'>{inline_styles(styler.to_html())}{note}</div>"

    def to_markdown(self) -> str:
        """The Markdown table, with the note under it."""
        text = super().to_markdown()
        return f"{text}\n{self.note}\n" if self.note else text

    def __repr__(self) -> str:
        rows, cols = self.frame.shape
        return f"<RoutingMatrix {self.title!r}: {rows} × {cols}>"


# -- matrices ----------------------------------------------------------------------------


def _label(cap: Capability | None) -> str:
    return cap.label if cap is not None else EMPTY


def capability_matrix(
    cells: Mapping[tuple[Tier, Effort], Capability | None],
    *,
    title: str = "",
    marked: Iterable[tuple[Tier, Effort]] = (),
    note: str = "",
    colours: Mapping[str, str] | None = None,
) -> RoutingMatrix:
    """Tier × effort → `model · native effort`, coloured by model."""
    import pandas as pd

    palette = dict(colours or model_colours(c.model for c in cells.values() if c))
    index = pd.Index(list(TIERS), name="tier")
    columns = pd.Index(list(EFFORTS), name="effort")
    text = pd.DataFrame(
        [[_label(cells.get((t, e))) for e in EFFORTS] for t in TIERS], index=index, columns=columns
    )
    fill = pd.DataFrame(
        [
            [palette.get(c.model) if (c := cells.get((t, e))) else None for e in EFFORTS]
            for t in TIERS
        ],
        index=index,
        columns=columns,
    )
    marks = set(marked)
    mark = pd.DataFrame(
        [[(t, e) in marks for e in EFFORTS] for t in TIERS], index=index, columns=columns
    )
    return RoutingMatrix(
        text,
        title=title,
        empty=EMPTY,
        colours=fill,
        marked=mark,
        note=note if marks else "",
    )


def role_matrix(roles: Sequence[RoleRoute], *, title: str = "") -> RoutingMatrix:
    """Role × tier → ``model · effort``: each role's row shows its model and effort in
    its tier's column (three columns, not nine tier/effort pairs: it fits a notebook)."""
    import pandas as pd

    palette = model_colours(r.capability.model for r in roles if r.capability)
    index = pd.Index([f"{r.role} ({r.loop})" for r in roles], name="role")
    columns = pd.Index(list(TIERS), name="tier")
    text, fill, mark = [], [], []
    for r in roles:
        model = r.capability.model if r.capability else EMPTY
        text.append([f"{model}{SEP}{r.effort}" if t == r.tier else "" for t in TIERS])
        fill.append([palette.get(model) if t == r.tier else None for t in TIERS])
        project = r.source == "project" or r.cell.source == "project"
        mark.append([project and t == r.tier for t in TIERS])
    return RoutingMatrix(
        pd.DataFrame(text, index=index, columns=columns),
        title=title,
        colours=pd.DataFrame(fill, index=index, columns=columns),
        marked=pd.DataFrame(mark, index=index, columns=columns),
        note="framed: set by the project profile" if any(any(m) for m in mark) else "",
    )


def task_table(routes: Sequence[TaskRoute], *, title: str = "") -> RoutingMatrix:
    """The routes of tasks: class, tier and effort with their source, model and its source."""
    import pandas as pd

    palette = model_colours(r.model for r in routes)
    columns = ["text", "class", "tier", "tier from", "effort", "effort from", "model", "model from"]
    rows: list[list[str]] = []
    fill: list[list[str | None]] = []
    mark: list[list[bool]] = []
    for r in routes:
        text = r.task.text or ""
        rows.append(
            [
                text,
                str(r.task_class) if r.task_class else "",
                r.tier,
                short_source(r.tier_source),
                r.effort,
                short_source(r.effort_source),
                _label(r.capability),
                r.source,
            ]
        )
        fill.append([*([None] * 6), palette.get(r.model or ""), None])
        mark.append([False] * 6 + [r.source == "project", False])
    index = pd.Index([r.task.id for r in routes], name="task")
    return RoutingMatrix(
        pd.DataFrame(rows, index=index, columns=columns),
        title=title,
        colours=pd.DataFrame(fill, index=index, columns=columns),
        marked=pd.DataFrame(mark, index=index, columns=columns),
        note="framed: model from the project profile" if any(any(m) for m in mark) else "",
    )


# -- comparison --------------------------------------------------------------------------

def _key(cap: Capability | None) -> tuple[str, str | None, int | None] | None:
    return cap.route_key if cap is not None else None


@dataclass(frozen=True, eq=False)
class ProfileComparison:
    """Profiles or families side by side: one row per tier/effort, one column each."""

    names: tuple[str, ...]
    cells: tuple[dict[tuple[Tier, Effort], Capability | None], ...]

    @property
    def differences(self) -> list[tuple[str, Tier, Effort]]:
        """(name, tier, effort) of every cell that differs from the first column."""
        base = self.cells[0]
        return [
            (name, t, e)
            for name, cells in zip(self.names[1:], self.cells[1:], strict=True)
            for t in TIERS
            for e in EFFORTS
            if _key(cells.get((t, e))) != _key(base.get((t, e)))
        ]

    def frame(self) -> pd.DataFrame:
        """One row per (name, cell): name, tier, effort, the capability columns, and
        differs (bool: not the same as the first column)."""
        import pandas as pd

        diff = set(self.differences)
        frames = []
        for name, cells in zip(self.names, self.cells, strict=True):
            f = cells_frame(cells).drop(columns="family")
            f.insert(0, "name", pd.Series([name] * len(f), dtype="string"))
            f["differs"] = [(name, t, e) in diff for (t, e) in cells]
            frames.append(f)
        return pd.concat(frames, ignore_index=True)

    def matrix(self) -> RoutingMatrix:
        """The side-by-side table; cells that differ from the first column are framed."""
        import pandas as pd

        palette = model_colours(
            c.model for cells in self.cells for c in cells.values() if c is not None
        )
        index = pd.Index([f"{t}/{e}" for t in TIERS for e in EFFORTS], name="tier/effort")
        columns = pd.Index(list(self.names), name="profile")
        diff = set(self.differences)
        text = [[_label(cells.get((t, e))) for cells in self.cells] for t in TIERS for e in EFFORTS]
        fill = [
            [palette.get(c.model) if (c := cells.get((t, e))) else None for cells in self.cells]
            for t in TIERS
            for e in EFFORTS
        ]
        mark = [[(n, t, e) in diff for n in self.names] for t in TIERS for e in EFFORTS]
        return RoutingMatrix(
            pd.DataFrame(text, index=index, columns=columns),
            title="Compared: " + " vs ".join(self.names),
            colours=pd.DataFrame(fill, index=index, columns=columns),
            marked=pd.DataFrame(mark, index=index, columns=columns),
            note=f"framed: differs from {self.names[0]}" if diff else "",
        )

    def to_dict(self) -> dict[str, Any]:
        """`{"names", "matrix": {name: {tier: {effort: cell}}}, "differences"}`."""
        return {
            "names": list(self.names),
            "matrix": {
                name: {
                    t: {e: (c.to_dict() if (c := cells.get((t, e))) else None) for e in EFFORTS}
                    for t in TIERS
                }
                for name, cells in zip(self.names, self.cells, strict=True)
            },
            "differences": [{"name": n, "tier": t, "effort": e} for n, t, e in self.differences],
        }

    def __str__(self) -> str:
        return self.matrix().to_markdown()

    def __repr__(self) -> str:
        n = len(self.differences)
        return (
            f"<ProfileComparison {' vs '.join(self.names)}: "
            f"{n} differing cell{'' if n == 1 else 's'}>"
        )

    def _repr_html_(self) -> str:
        return self.matrix()._repr_html_()
