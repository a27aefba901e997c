"""`DrawingView(obj)`: any drawing in a window you pan, zoom, search and focus; and
`reveal_html`, the drawing of a loop kept around its current node (the Stepper's).

Pure ipywidgets: the drawing is inline SVG in an `HTML` widget, and every move (pan,
zoom, 1:1, fit) only rewrites the root element's ``viewBox`` from Python, so no script
runs in the page (JupyterLab 4 never runs scripts of widget HTML) and nothing is laid
out again. Node positions come from the SVG `dot` wrote (each node's ``<title>`` and
first ``<text>``), so a search can centre the window on a node.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as w

from ..draw.cards import fallback_card
from ..draw.display import overview, prepare
from ..draw.dot import to_dot
from ..draw.layout import CELL_WIDTH, MIN_TEXT_PX, fit_layout, node_positions, text_px_at
from ..draw.model import GraphModel, Node, closest
from ..draw.render import render_svg
from ..errors import NotFoundError
from ._common import guarded, note_html

__all__ = ["READABLE", "WINDOW", "DrawingView", "Viewport", "reveal_html"]

#: Default window of a view, in CSS pixels (width, height): a cell's width.
WINDOW = (CELL_WIDTH, 600)
#: `reveal_html` shrinks a drawing to fit its window while its smallest text stays at
#: least this share of `MIN_TEXT_PX` times the asked zoom; a bigger drawing is cropped
#: around the node instead.
READABLE = 1.0
_PT = 4 / 3  # CSS px per pt: dot writes its SVG in points
_ROOT = re.compile(r"<svg\b[^>]*>", re.S)
_VIEWBOX = re.compile(r'viewBox="([-\d.]+) ([-\d.]+) ([-\d.]+) ([-\d.]+)"')
_PROLOG = re.compile(r"\A(?:\s*<\?xml[^>]*\?>|\s*<!DOCTYPE[^>]*>|\s*<!--.*?-->)*\s*", re.S)


@dataclass
class Viewport:
    """A rendered SVG and a window on it: `show()` gives the SVG cropped (by its
    ``viewBox``) to `window` CSS px around `centre`, at `zoom` (1.0 = 1:1)."""

    svg: str
    window: tuple[int, int] = WINDOW
    zoom: float = 1.0
    centre: tuple[float, float] = (0.0, 0.0)
    size: tuple[float, float] = (0.0, 0.0)
    positions: dict[str, tuple[float, float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.svg = _PROLOG.sub("", self.svg, count=1)
        box = _VIEWBOX.search(self.svg)
        self.size = (float(box.group(3)), float(box.group(4))) if box else (0.0, 0.0)
        self.positions = node_positions(self.svg)
        self.centre = (self.size[0] / 2, self.size[1] / 2)

    @property
    def fit_zoom(self) -> float:
        """The zoom at which the whole drawing fits the window (never above 1:1)."""
        if not self.size[0] or not self.size[1]:
            return 1.0
        return min(1.0, self.window[0] / (self.size[0] * _PT),
                   self.window[1] / (self.size[1] * _PT))

    def fit(self) -> None:
        """The whole drawing, centred (the overview)."""
        self.zoom = self.fit_zoom
        self.centre = (self.size[0] / 2, self.size[1] / 2)

    def fits(self) -> bool:
        """Whether the whole drawing is in the window at the current zoom."""
        return (self.size[0] * _PT * self.zoom <= self.window[0] + 0.5
                and self.size[1] * _PT * self.zoom <= self.window[1] + 0.5)

    def pan(self, dx: float, dy: float) -> None:
        """Move the window by fractions of itself (``pan(0.33, 0)``: a third to the right),
        never past the drawing's edges (so a move back is always seen at once)."""
        self.centre = self._kept((self.centre[0] + dx * self._box()[0],
                                  self.centre[1] + dy * self._box()[1]))

    def _kept(self, centre: tuple[float, float]) -> tuple[float, float]:
        """`centre` moved so that the window stays inside the drawing."""
        width, height = self._box()
        return (min(max(centre[0], width / 2), max(self.size[0] - width / 2, width / 2)),
                min(max(centre[1], height / 2), max(self.size[1] - height / 2, height / 2)))

    def reveal(self, node_id: str) -> bool:
        """Centre the window on `node_id`; False when it is not in this drawing."""
        where = self.positions.get(node_id)
        if where is None:
            return False
        self.centre = where
        return True

    def visible(self, node_id: str) -> bool:
        """Whether `node_id`'s label is inside the window."""
        where = self.positions.get(node_id)
        if where is None:
            return False
        x, y, width, height = self.view_box()
        return x <= where[0] <= x + width and y <= where[1] <= y + height

    def _box(self) -> tuple[float, float]:
        scale = _PT * self.zoom
        width = min(self.window[0] / scale, self.size[0]) if self.size[0] else 0.0
        height = min(self.window[1] / scale, self.size[1]) if self.size[1] else 0.0
        return width, height

    def view_box(self) -> tuple[float, float, float, float]:
        """(x, y, width, height) of the window in the drawing's units, kept inside it."""
        width, height = self._box()
        x = min(max(self.centre[0] - width / 2, 0.0), max(self.size[0] - width, 0.0))
        y = min(max(self.centre[1] - height / 2, 0.0), max(self.size[1] - height, 0.0))
        return x, y, width, height

    def show(self) -> str:
        """The SVG, its root sized to the window and its viewBox on the window's part."""
        x, y, width, height = self.view_box()
        scale = _PT * self.zoom
        root = _ROOT.search(self.svg)
        if root is None:
            return self.svg
        tag = root.group(0)
        tag = re.sub(r'\swidth="[^"]*"', f' width="{width * scale:.0f}px"', tag, count=1)
        tag = re.sub(r'\sheight="[^"]*"', f' height="{height * scale:.0f}px"', tag, count=1)
        tag = _VIEWBOX.sub(f'viewBox="{x:.2f} {y:.2f} {width:.2f} {height:.2f}" '
                           'style="max-width:100%;height:auto"', tag, count=1)
        return self.svg[:root.start()] + tag + self.svg[root.end():]


def _render(model: GraphModel) -> str:
    return render_svg(to_dot(model))


def _emphasised(model: GraphModel) -> str | None:
    marked = [n.id for n in model.sorted_nodes() if n.emphasis]
    return marked[0] if marked else None


def reveal_html(model_of: Callable[[], Any], zoom: float = 1.0, node_id: str | None = None,
                *, window: tuple[int, int] = WINDOW) -> str:
    """The drawing of `model_of()` inline at `zoom`; when it is bigger than `window`, the
    whole of it shrunk to fit (down to `READABLE` times `zoom`), else only the window's
    part around `node_id` (default: the emphasised node, a loop's current one), with a
    line saying so. The fallback card without `dot` or on any error; never
    raises. The Stepper draws with it, so the current node stays in view."""
    dot_text: str | None = None
    try:
        model = model_of()
        if model is None:
            return note_html("(no drawing)")
        shown = prepare(model)
        dot_text = to_dot(shown)
        dot_text = to_dot(fit_layout(shown, *window))  # a long run folded into rows
        port = Viewport(render_svg(dot_text), window=window, zoom=zoom)
        target = node_id if node_id is not None else _emphasised(shown)
        note = ""
        legible = READABLE * MIN_TEXT_PX * min(zoom, 1.0)
        if not port.fits() and zoom <= 1.0 and text_px_at(port.svg, port.fit_zoom) >= legible:
            port.zoom = port.fit_zoom  # a loop a little wider than the window: all of it
        if not port.fits() and target is not None and port.reveal(target):
            note = note_html(f"the part around {target!r} of a {port.size[0] * _PT:,.0f} × "
                             f"{port.size[1] * _PT:,.0f} px drawing; all of it: "
                             "crewbook.widgets.DrawingView(obj)")
        elif not port.fits():
            port.centre = (0.0, 0.0)  # the start of the drawing, as a scrolled box shows it
    except Exception as exc:  # a widget must keep working
        return fallback_card(dot_text, exc)
    return _frame(port.show()) + note


def _groups(model: GraphModel | None) -> set[str]:
    """The folder (group) names of `model`'s nodes: searchable like ids."""
    return {n.group for n in model.nodes.values() if n.group} if model is not None else set()


def _unknown(text: str, model: GraphModel) -> str:
    """The message for a search naming nothing: the nearest ids, labels or folders."""
    names = {*model.nodes, *(n.text for n in model.nodes.values()), *_groups(model)}
    near = closest(text, names)
    hint = f"; closest: {', '.join(repr(c) for c in near)}" if near else ""
    return (f"drawing {model.name!r} has no node {text!r}{hint}; search an id, a label or "
            "a folder name (case does not matter)")


def _frame(svg: str) -> str:
    return f"<div class='crewbook-drawing crewbook-view' style='overflow:hidden'>{svg}</div>"


class DrawingView(w.VBox):  # type: ignore[misc]
    """A drawing of `obj` (a `GraphModel` or anything with ``graph_model()``: a schema, a
    change status, a loop...) in a window: pan (arrows), zoom (slider, +/-), the whole
    drawing (fit, laid out to be legible at the window's width) or 1:1, a node searched
    by id, label or folder name whatever the case (suggestions as you type; the nearest
    names by edit distance when nothing matches), its neighbourhood within `depth`
    edges (focus), back to the overview.

    From code: `find(text)` (the search box), `focus(node_id, depth)`, `overview()`,
    `reveal(node_id)` (centre the window on a node; focuses on it when the overview has
    it folded away), `pan`, `fit`, `actual_size`.
    """

    def __init__(self, obj: Any, zoom: float | None = None, *,
                 window: tuple[int, int] = WINDOW) -> None:
        self.obj = obj
        self.window = window
        self.focused: str | None = None
        self.port: Viewport | None = None
        self.port_model: GraphModel | None = None  # the model the window draws
        self._syncing = False
        # a fraction (1.0 = 1:1) shown as a percentage, like the status line
        self.zoom = w.FloatSlider(value=1.0, min=0.01, max=3.0, step=0.01, description="zoom",
                                  readout_format=".0%", continuous_update=False)
        self.search = w.Combobox(placeholder="node id", description="node",
                                 ensure_option=False, continuous_update=False,
                                 layout=w.Layout(width="260px"))
        self.depth = w.BoundedIntText(value=2, min=0, max=20, description="depth",
                                      layout=w.Layout(width="130px"))
        buttons = {
            "left": ("◀", "pan left"), "right": ("▶", "pan right"), "up": ("▲", "pan up"),
            "down": ("▼", "pan down"), "zoom_in": ("+", "zoom in"),
            "zoom_out": ("-", "zoom out"), "fit": ("fit", "the whole drawing in the window"),
            "actual": ("1:1", "actual size"), "find": ("find", "centre on the node"),
            "focus_button": ("focus", "draw only the node's neighbourhood within depth"),
            "overview_button": ("overview", "back to the whole drawing"),
        }
        self.buttons: dict[str, w.Button] = {}
        for name, (text, tip) in buttons.items():
            self.buttons[name] = w.Button(description=text, tooltip=tip,
                                          layout=w.Layout(width="auto"))
        self.drawing = w.HTML()
        self.status = w.HTML()
        self.message = w.HTML()
        self.output = w.Output()
        guard = guarded(self.output, self.message)
        b = self.buttons
        b["left"].on_click(guard(lambda _: self.pan(-1 / 3, 0)))
        b["right"].on_click(guard(lambda _: self.pan(1 / 3, 0)))
        b["up"].on_click(guard(lambda _: self.pan(0, -1 / 3)))
        b["down"].on_click(guard(lambda _: self.pan(0, 1 / 3)))
        b["zoom_in"].on_click(guard(lambda _: self._set_zoom(self.zoom.value * 1.25)))
        b["zoom_out"].on_click(guard(lambda _: self._set_zoom(self.zoom.value / 1.25)))
        b["fit"].on_click(guard(lambda _: self.fit()))
        b["actual"].on_click(guard(lambda _: self.actual_size()))
        b["find"].on_click(guard(lambda _: self.find(self.search.value)))
        b["focus_button"].on_click(guard(lambda _: self.focus(self.resolve(self.search.value))))
        b["overview_button"].on_click(guard(lambda _: self.overview()))
        self.search.observe(guard(lambda _: self.find(self.search.value)),
                            names="value", type="change")
        self.zoom.observe(guard(lambda _: self._zoomed()), names="value")
        tools = w.HBox([b["left"], b["right"], b["up"], b["down"], b["zoom_in"], b["zoom_out"],
                        b["fit"], b["actual"], self.zoom])
        finder = w.HBox([self.search, b["find"], self.depth, b["focus_button"],
                         b["overview_button"]])
        super().__init__([tools, finder, self.message, self.drawing, self.status, self.output])
        self.add_class("crewbook-drawing-view")
        with self.output:
            self._load()
            if zoom is not None:
                self._set_zoom(zoom)

    # ------------------------------------------------------------------ model
    def model(self) -> GraphModel | None:
        """The whole model drawn (before collapsing or focusing)."""
        if isinstance(self.obj, GraphModel):
            return self.obj
        model: GraphModel | None = self.obj.graph_model()
        return model

    def shown_model(self) -> GraphModel | None:
        """The model in the window: the overview (collapsed when big) or the focus."""
        model = self.model()
        if model is None:
            return None
        if self.focused is None:  # collapsed when big, coarser while unreadable, fitted
            return overview(model, *self.window, regroup=False)
        shown = prepare(model, collapse=False, focus=self.focused, depth=self.depth.value)
        return fit_layout(shown, *self.window)  # whole and legible at the window's width

    def _load(self) -> None:
        """Render the shown model and fit it; a card instead on any error (never raises)."""
        self.message.value = ""
        dot_text: str | None = None
        self.port = None
        self.port_model = None
        try:
            model = self.model()
            shown = self.shown_model()
            ids = sorted({*(model.nodes if model is not None else ()), *_groups(model),
                          *_groups(shown)})
            if list(self.search.options) != ids:
                self.search.options = ids
            if shown is None:
                self.drawing.value = note_html("(no drawing)")
                return
            dot_text = to_dot(shown)
            self.port = Viewport(render_svg(dot_text), window=self.window)
            self.port_model = shown
        except Exception as exc:  # a widget must keep working
            self.drawing.value = fallback_card(dot_text, exc)
            return
        self.fit()

    # ---------------------------------------------------------------- actions
    def refresh(self) -> None:
        """Draw again from the object (after it changed), keeping the focus."""
        self._load()

    def fit(self) -> None:
        """The whole drawing in the window."""
        if self.port is not None:
            self.port.fit()
            self._show_zoom(self.port.zoom)

    def actual_size(self) -> None:
        """1:1 around the window's centre."""
        self._set_zoom(1.0)

    def pan(self, dx: float, dy: float) -> None:
        """Move the window by fractions of its size (negative: left / up)."""
        if self.port is not None:
            self.port.pan(dx, dy)
            self._draw()

    def focus(self, node_id: str, depth: int | None = None) -> None:
        """Draw only `node_id` and its neighbours within `depth` edges (the depth box when
        None), the node marked; an unknown id is a red line naming the closest ones."""
        if not node_id:
            return
        model = self.model()
        if model is not None and node_id not in model.nodes:
            node_id = self.resolve(node_id)
        if model is not None and node_id not in model.nodes:
            raise NotFoundError(_unknown(node_id, model))
        if depth is not None:
            self.depth.value = depth
        self.focused = node_id
        self._load()
        if self.port is not None:  # at 1:1 (readable), the window centred on the node
            self.port.zoom = 1.0
            self.port.reveal(node_id)
            self._show_zoom(1.0)

    def resolve(self, text: str) -> str:
        """The node id `text` names, case aside: an id, a label, or a folder (a group)
        name; the drawing's own nodes first (a collapsed folder's summary), then the
        whole model's. `text` itself when nothing matches (`focus` then says what is
        closest, by edit distance)."""
        text = text.strip()
        want = text.lower().rstrip("/")
        models = [m for m in (self.port_model, self.model()) if m is not None]
        keys: list[Callable[[Node], str]] = [
            lambda n: n.id.lower(), lambda n: n.text.lower().rstrip("/"),
            lambda n: (n.group or "").lower()]
        for model in models:  # exact first: ids differing only by case stay apart
            if text in model.nodes:
                return text
        for key in keys:
            for model in models:
                for node in model.sorted_nodes():
                    if key(node) == want:
                        return node.id
        return text

    def find(self, text: str) -> None:
        """Show the node `text` names (see `resolve`): its neighbourhood (`focus`), or,
        for a collapsed folder's summary, the overview centred on it."""
        node_id = self.resolve(text)
        if not node_id:
            return
        model = self.model()
        if (model is None or node_id not in model.nodes) and self.port is not None and (
                node_id in self.port.positions):
            self.message.value = ""
            self.focused = None
            self.reveal(node_id)
            return
        self.focus(node_id)

    def overview(self) -> None:
        """Back to the whole drawing, fitted to the window."""
        self.focused = None
        self._load()

    def reveal(self, node_id: str) -> None:
        """Keep `node_id` in view: centre the window on it; when the drawing does not
        show it (folded into a collapsed folder, or outside the focus), focus on it."""
        if not node_id:
            return
        if self.port is None or node_id not in self.port.positions:
            self.focus(node_id)
            return
        self.port.reveal(node_id)
        if self.port.zoom < 0.5:  # an overview's labels are too small to find a node by
            self._set_zoom(1.0)
        self._draw()

    # ---------------------------------------------------------------- drawing
    def _set_zoom(self, zoom: float) -> None:
        if self.port is None:
            return
        self.port.zoom = max(self.zoom.min, min(self.zoom.max, zoom))
        self._show_zoom(self.port.zoom)

    def _show_zoom(self, zoom: float) -> None:
        self._syncing = True
        try:
            self.zoom.value = round(max(self.zoom.min, min(self.zoom.max, zoom)), 4)
        finally:
            self._syncing = False
        if self.port is not None:
            self.port.zoom = zoom
        self._draw()

    def _zoomed(self) -> None:
        if self._syncing or self.port is None:
            return
        self.port.zoom = self.zoom.value
        self._draw()

    def _draw(self) -> None:
        if self.port is None:
            return
        self.drawing.value = _frame(self.port.show())
        size = f"{self.port.size[0] * _PT:,.0f} × {self.port.size[1] * _PT:,.0f} px"
        where = (f"around <b>{html.escape(self.focused)}</b> within {self.depth.value} edges"
                 if self.focused is not None else "overview")
        whole = "whole drawing" if self.port.fits() else "part of the drawing"
        self.status.value = (f"<div style='color:#546e7a'>{where} · {whole} ({size}) at "
                             f"{self.port.zoom:.0%}</div>")

    def __repr__(self) -> str:
        focus = f", focused on {self.focused!r}" if self.focused is not None else ""
        return f"<DrawingView of {type(self.obj).__name__} at zoom {self.zoom.value:.1f}{focus}>"
