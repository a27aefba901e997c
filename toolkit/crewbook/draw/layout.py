"""Lay a drawing out to be whole and legible at a notebook cell's width.

`dot` draws a long chain left to right as one line thousands of pixels wide: shrunk to
a cell it is unreadable, at 1:1 it is cut off. `fit_layout` measures the drawing `dot`
makes and, when its smallest text would be under `MIN_TEXT_PX` at `CELL_WIDTH` ×
`FIT_HEIGHT`, tries two other layouts and keeps the most legible: the same graph
top to bottom, and the left-to-right order folded into rows (cut, where it can, at an
edge going back: a loop's send-back starts a new row). The rows are kept in the model
(`GraphModel.rows`), so `to_dot` writes them and the same model gives the same bytes.

Also here, because every display reads them: the size of an SVG `dot` wrote, the
smallest text in it, and where its nodes sit.
"""

from __future__ import annotations

import bisect
import html
import math
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from .model import GraphModel

__all__ = ["CELL_WIDTH", "FIT_HEIGHT", "MIN_TEXT_PX", "fit_layout", "fit_scale",
           "node_positions", "shown_text_px", "svg_points", "text_px_at"]

#: The width (CSS px) a drawing must fit whole: an output of JupyterLab 4 in chromium
#: at 1280 × 900 with the file browser open is 828 px wide (measured); a little less.
CELL_WIDTH = 820
#: Most CSS px a drawing is tall before it is shrunk (a projected screen's height).
FIT_HEIGHT = 720
#: Smallest text (CSS px) a drawing may show at the cell's width.
MIN_TEXT_PX = 10.0
#: Drawings with more nodes than this keep `dot`'s layout (folding them would cost
#: several `dot` runs; they collapse, and `DrawingView` shows their parts).
FOLD_LIMIT = 400
_PT = 4 / 3  # CSS px per pt: dot writes its SVG in points
_ROOT_SIZE = re.compile(r'<svg\b[^>]*?\swidth="([\d.]+)(pt|px)?"[^>]*?\sheight="([\d.]+)(pt|px)?"',
                        re.S)
_VIEWBOX = re.compile(r'viewBox="([-\d.]+) ([-\d.]+) ([-\d.]+) ([-\d.]+)"')
_FONT = re.compile(r'font-size="([\d.]+)"')
_TRANSLATE = re.compile(r'class="graph" transform="[^"]*translate\(([-\d.]+) ([-\d.]+)\)')
_NODE = re.compile(r'class="node">\s*<title>(.*?)</title>', re.S)
_TEXT = re.compile(r'<text\b[^>]*?\sx="([-\d.]+)" y="([-\d.]+)"')


def svg_points(svg: str) -> tuple[float, float, float]:
    """(width, height, CSS px per drawing unit at 1:1) of an SVG `dot` wrote; zeros when
    it has no size."""
    found = _ROOT_SIZE.search(svg)
    if found is None:
        return 0.0, 0.0, 0.0
    unit = _PT if found.group(2) in (None, "pt") else 1.0
    width, height = float(found.group(1)) * unit, float(found.group(3)) * unit
    box = _VIEWBOX.search(svg)
    per_unit = width / float(box.group(3)) if box and float(box.group(3)) else unit
    return width, height, per_unit


def fit_scale(width: float, height: float, cell: float = CELL_WIDTH,
              tall: float = FIT_HEIGHT) -> float:
    """The scale (at most 1) at which a `width` × `height` px drawing fits `cell` × `tall`."""
    if width <= 0 or height <= 0:
        return 1.0
    return min(1.0, cell / width, tall / height)


def text_px_at(svg: str, scale: float) -> float:
    """The smallest text of `svg` in CSS px when shown at `scale` of its size (its
    smallest ``font-size`` times px per unit); infinity when it has no text."""
    sizes = [float(x) for x in _FONT.findall(svg)]
    _w, _h, per_unit = svg_points(svg)
    return min(sizes) * per_unit * scale if sizes else math.inf


def shown_text_px(svg: str, cell: float = CELL_WIDTH, tall: float = FIT_HEIGHT) -> float:
    """The smallest text of `svg` in CSS px once fitted to `cell` × `tall`."""
    width, height, _unit = svg_points(svg)
    return text_px_at(svg, fit_scale(width, height, cell, tall))


def node_positions(svg: str) -> dict[str, tuple[float, float]]:
    """Node id → (x, y) of its first line of text, in the viewBox's units (the id from
    each node's ``<title>``)."""
    shift = _TRANSLATE.search(svg)
    dx, dy = (float(shift.group(1)), float(shift.group(2))) if shift else (0.0, 0.0)
    positions: dict[str, tuple[float, float]] = {}
    for found in _NODE.finditer(svg):
        text = _TEXT.search(svg, found.end())
        if text is not None:
            positions.setdefault(html.unescape(found.group(1)),
                                 (float(text.group(1)) + dx, float(text.group(2)) + dy))
    return positions


def fit_layout(model: GraphModel, cell: float = CELL_WIDTH,
               tall: float = FIT_HEIGHT) -> GraphModel:
    """`model` laid out to be legible in `cell` × `tall` px: unchanged when `dot`'s own
    layout is, else the most legible of rows and top-to-bottom (a copy with `rows` or
    `direction` set). Needs `dot`; without it, or on any `dot` error, `model` unchanged."""
    from ..errors import DotError, DotNotFoundError
    from .dot import to_dot
    from .render import render_svg

    if model.rows or model.direction != "LR" or not 2 < len(model) <= FOLD_LIMIT:
        return model
    try:
        first = render_svg(to_dot(model))
        best, best_px = model, shown_text_px(first, cell, tall)
        if best_px >= MIN_TEXT_PX or _hopeless(first, cell, tall):
            return model
        for candidate in _folds(model, first, cell, tall, render_svg, to_dot):
            px = shown_text_px(render_svg(to_dot(candidate)), cell, tall)
            if px > best_px + 0.05:
                best, best_px = candidate, px
            if best_px >= MIN_TEXT_PX:
                break
    except (DotError, DotNotFoundError):
        return model
    return best


#: How much of its area a fold may save (a left-to-right chain is mostly white):
#: a drawing whose text would stay under this share of `MIN_TEXT_PX` even with its
#: whole area fitted into the cell is not folded (no `dot` run is spent on it).
SAVED_AREA = 0.6


def _hopeless(svg: str, cell: float, tall: float) -> bool:
    """Whether no layout of this much drawing can be legible in `cell` × `tall` px: its
    text at the scale that fits its area (not its shape) into the cell is too small."""
    width, height, _unit = svg_points(svg)
    if not width or not height:
        return True
    return text_px_at(svg, min(1.0, math.sqrt(cell * tall / (width * height)))) < (
        SAVED_AREA * MIN_TEXT_PX)


#: Most row counts `fit_layout` tries (each one `dot` run).
TRIES = 8


def _folds(model: GraphModel, svg: str, cell: float, tall: float, render: Any,
           write: Any) -> Iterator[GraphModel]:
    """Folded copies of `model` to try: rows from the count that best balances width and
    height, then one row more while the last was too wide, one less while too tall;
    top to bottom last."""
    width, height, _unit = svg_points(svg)
    positions = node_positions(svg)
    if width and positions:
        # n rows: about width/n wide and n times as tall (plus a rank's gap between rows)
        count = min(range(2, len(model) + 1),
                    key=lambda n: max(width / n / cell, n * (height + 40) / tall))
        seen: set[tuple[tuple[str, ...], ...]] = set()
        step = 0
        while len(seen) < TRIES and 2 <= count <= len(model):
            rows = fold_rows(model, positions, count)
            if rows in seen or len(rows) < 2:  # the same cut as a count tried: next one
                count += step or 1
                continue
            seen.add(rows)
            folded = replace(model, rows=rows)
            yield folded
            w, h, _u = svg_points(render(write(folded)))
            wider = w / cell >= h / tall  # the width is what shrinks it: more rows
            if step and (step > 0) != wider:
                break  # it turned: the best is behind
            step = 1 if wider else -1
            count += step
    yield replace(model, direction="TB")


def fold_rows(model: GraphModel, positions: dict[str, tuple[float, float]],
              count: int) -> tuple[tuple[str, ...], ...]:
    """The nodes of a left-to-right layout cut into about `count` rows of equal span,
    by their x (nodes one above the other stay in one row). A row ends, when it can
    (within a third of a row either way), where an edge turns back (a send-back), so
    the fold reads as the loop's turn."""
    placed = sorted((positions[n.id][0], n.sort_key(), n.id) for n in model.nodes.values()
                    if n.id in positions)
    if not placed:
        return ()
    columns = sorted({x for x, _k, _i in placed})
    span = (columns[-1] - columns[0]) / count or 1.0
    turns = _turns(model, {i: x for x, _k, i in placed}, columns)
    starts = [columns[0]]
    while True:
        later = [x for x in columns if x - starts[-1] > span]
        if not later:
            break
        near = [x for x in columns if starts[-1] + span * 2 / 3 < x <= starts[-1] + span * 4 / 3
                and x in turns]
        starts.append(min(near, key=lambda x: (abs(x - starts[-1] - span), x))
                      if near else later[0])
    rows: list[list[str]] = [[] for _ in starts]
    for x, _key, node_id in placed:
        rows[bisect.bisect_right(starts, x) - 1].append(node_id)
    rows[-1].extend(n.id for n in model.sorted_nodes() if n.id not in positions)
    return tuple(tuple(row) for row in rows if row)


def _turns(model: GraphModel, x_of: dict[str, float], columns: list[float]) -> set[float]:
    """The x where a row may start after a turn: the column after the source of an edge
    drawn right to left, or the target of a dashed one (a send-back)."""
    cuts = set()
    for edge in model.edges:
        a, b = x_of.get(edge.source), x_of.get(edge.target)
        if a is None or b is None or edge.source == edge.target:
            continue
        if b < a:  # the loop turns back after its source: the next column starts a row
            after = bisect.bisect_right(columns, a)
            if after < len(columns):
                cuts.add(columns[after])
        elif edge.style == "dashed":
            cuts.add(b)
    return cuts
