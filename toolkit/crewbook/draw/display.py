"""The display mixin: drawing methods from one `graph_model()`, and a notebook display that
never raises.

A class that mixes in `Drawable` and implements `graph_model()` gets `dot()`,
`mermaid()`, `graph()` (a `graphviz.Digraph`), `svg()`, `save(path)` and
`_repr_mimebundle_`. The bundle always has `text/plain` (the object's `repr`) and
`text/html` (the drawing, then the object's own `_repr_html_`); `image/svg+xml` only
when `dot` ran. Without `dot`, or when anything fails, the HTML holds a card that
says why, how to install Graphviz, and the DOT source in a `<details>` block.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.atomic import write_output
from ..errors import DotError, DotNotFoundError, InvalidInputError, error_message
from .cards import (
    BOX_STYLE,
    fallback_card,
    filter_bundle,
    inline_svg,
    one_to_one,
    overview_box,
    overview_note,
    safe_repr,
    svg_box,
    svg_size,
)
from .dot import to_dot
from .layout import CELL_WIDTH, FIT_HEIGHT, MIN_TEXT_PX, fit_layout, shown_text_px
from .mermaid import to_mermaid
from .model import GraphModel
from .render import render, render_svg
from .settings import SAVE_FORMATS, options

if TYPE_CHECKING:
    import graphviz

__all__ = ["BOX_STYLE", "SAVE_FORMATS", "Drawable", "drawing_bundle", "fallback_card",
           "filter_bundle", "inline_svg", "mermaid_of", "mimebundle", "overview",
           "overview_box", "overview_note", "prepare", "safe_repr", "save", "svg_box",
           "svg_size"]

#: File extensions `save` understands, and what it writes for each.



def prepare(
    model: GraphModel, *, collapse: bool | None = None, expand: Iterable[str] = (),
    focus: str | None = None, depth: int = 1,
) -> GraphModel:
    """`model`, cut to the neighbourhood of `focus` within `depth` edges when asked
    (`GraphModel.focus`), then collapsed when asked (`collapse=True`), or when it has
    more nodes than `options.collapse_threshold` and `collapse` is not False."""
    expand = tuple(expand)
    if focus is not None:
        model = model.focus(focus, depth)
    if collapse or (collapse is None and (len(model) > options.collapse_threshold or expand)):
        return model.collapse(expand=expand)
    return model


#: Rank bands `overview` tries, fewest last, when a collapsed drawing is still not
#: legible at the cell's width.
OVERVIEW_BANDS = (20, 12, 8)


def overview(model: GraphModel, cell: float = CELL_WIDTH, tall: float = FIT_HEIGHT, *,
             regroup: bool = True) -> GraphModel:
    """What a display opens on: `prepare(model)` laid out to fit `cell` × `tall` px
    (`fit_layout`). When its text is still under `MIN_TEXT_PX` (a dense graph, or many
    folders depending on each other) and it has more than `OVERVIEW_BANDS[0]` nodes:
    collapsed into folders (when it was not, and `regroup`; `DrawingView`, which pans,
    keeps a drawing under the collapse threshold whole), then into fewer bands of ranks,
    the first legible (or the last). Needs `dot` to measure; else `prepare(model)`."""
    prepared = prepare(model)
    shown = fit_layout(prepared, cell, tall)
    if len(model) <= OVERVIEW_BANDS[0] or (prepared is model and not regroup):
        return shown
    coarser: list[Callable[[], GraphModel]] = [model.collapse] if prepared is model else []
    coarser += [partial(model.collapse, by="rank", threshold=bands) for bands in OVERVIEW_BANDS]
    try:
        for make in coarser:
            if shown_text_px(render_svg(to_dot(shown)), cell, tall) >= MIN_TEXT_PX:
                break
            shown = fit_layout(make(), cell, tall)
    except (DotError, DotNotFoundError):
        return fit_layout(prepared, cell, tall)
    return shown


def save(model: GraphModel, path: Path | str) -> Path:
    """Write `model` to `path`, the format chosen by the extension (see `SAVE_FORMATS`)."""
    target = Path(path)
    ext = target.suffix.lower()
    if ext in (".dot", ".gv"):
        data = to_dot(model).encode("utf-8")
    elif ext == ".mmd":
        data = to_mermaid(model).encode("utf-8")
    elif ext in (".svg", ".png", ".pdf"):
        data = render(to_dot(model), ext[1:])
    else:
        raise InvalidInputError(
            f"cannot tell what to write from {target.name!r}; use one of "
            + ", ".join(f"{e} ({w})" for e, w in SAVE_FORMATS.items())
        )
    write_output(target, data, what="path")  # never replaces a device, FIFO or folder
    return target


def _note(model: GraphModel) -> str:
    if not model.note:
        return ""
    return (f"<p style='color:#607d8b;font-size:90%'>{html.escape(model.note)}; expand a group "
            "with <code>.graph(expand=[...])</code>, draw all with <code>collapse=False</code>, "
            "or set <code>crewbook.draw.options.collapse_threshold</code>.</p>")


def drawing_bundle(model: GraphModel | None) -> tuple[str, str | None]:
    """(HTML of the drawing or of the fallback card, the SVG or None). Never raises."""
    if model is None:
        return "", None
    dot_text: str | None = None
    try:
        prepared = prepare(model)
        dot_text = to_dot(prepared)  # for the card, should the layout fail
        prepared = overview(model)  # a long chain folded, a knot of folders in bands
        dot_text = to_dot(prepared)
        svg = render_svg(dot_text)
    except Exception as exc:  # a display must never raise
        return fallback_card(dot_text, exc), None
    return f"{overview_box(svg)}{one_to_one(svg)}{overview_note(svg)}{_note(prepared)}", svg


def mermaid_of(model: GraphModel | None) -> str | None:
    """The mermaid text of the drawing a display shows (collapsed as it is), or None."""
    if model is None:
        return None
    try:
        return to_mermaid(prepare(model))
    except Exception:  # a display must never raise; the HTML card says why
        return None


def mimebundle(obj: object, model_of: Any, html_of: Any) -> dict[str, str]:
    """text/plain, text/html (the drawing fitted to the cell + `html_of()`), and when
    drawn image/svg+xml and text/vnd.mermaid (JupyterLab >= 4.1 draws it). Never raises."""
    bundle = {"text/plain": safe_repr(obj)}
    mermaid: str | None = None
    try:
        model = model_of()
    except Exception as exc:
        drawing, svg = fallback_card(None, exc), None
    else:
        drawing, svg = drawing_bundle(model)
        mermaid = mermaid_of(model) if svg is not None else None
    try:
        body = html_of() if html_of is not None else ""
    except Exception as exc:
        body = f"<p>(no table: {html.escape(error_message(exc))})</p>"
    bundle["text/html"] = f"<div class='crewbook-display'>{drawing}{body}</div>"
    if svg is not None:
        bundle["image/svg+xml"] = svg
    if mermaid is not None:
        bundle["text/vnd.mermaid"] = mermaid
    return bundle


class Drawable:
    """Mixin: implement `graph_model()`; get text, drawings, files and a safe rich display."""

    __slots__ = ()

    def graph_model(self) -> GraphModel:
        """The drawing before it is drawn (nodes, edges, legend)."""
        raise NotImplementedError

    def _drawing_model(self) -> GraphModel | None:
        """The model shown by the display (None: no drawing); `graph_model()` by default."""
        return self.graph_model()

    def dot(self, *, collapse: bool | None = None, expand: Iterable[str] = (),
            focus: str | None = None, depth: int = 1) -> str:
        """DOT text; identical for identical inputs (big graphs collapse, see `graph`)."""
        return to_dot(prepare(self.graph_model(), collapse=collapse, expand=expand,
                              focus=focus, depth=depth))

    def mermaid(self, *, collapse: bool | None = None, expand: Iterable[str] = (),
                focus: str | None = None, depth: int = 1) -> str:
        """Mermaid flowchart text (same arguments as `graph`)."""
        return to_mermaid(prepare(self.graph_model(), collapse=collapse, expand=expand,
                                  focus=focus, depth=depth))

    def graph(
        self, *, collapse: bool | None = None, expand: Iterable[str] = (),
        focus: str | None = None, depth: int = 1, fit: bool = True,
    ) -> graphviz.Digraph:
        """A `graphviz.Digraph` to restyle (`g.attr(rankdir="TB")`) or render; it opens
        whole at the cell's width, its 1:1 view one click away.

        `collapse=None` collapses graphs above `crewbook.draw.options.collapse_threshold`;
        `expand=["specs"]` keeps those groups' members as individual nodes;
        `focus="specs", depth=2` draws only the nodes within 2 edges of ``specs`` (marked),
        with ``+N more`` stubs where neighbours are left out (an unknown id is an error
        naming the closest ones). `fit=True` lays a drawing too wide for a cell out again
        (a long chain folded into rows, see `crewbook.draw.layout`); `fit=False` keeps
        `dot`'s own layout, as `.dot()` writes it.
        """
        from ._graphviz import to_graphviz

        return to_graphviz(prepare(self.graph_model(), collapse=collapse, expand=expand,
                                   focus=focus, depth=depth), fit=fit)

    def svg(self, *, collapse: bool | None = None, expand: Iterable[str] = (),
            focus: str | None = None, depth: int = 1) -> str:
        """SVG text rendered by `dot` (raises `DotNotFoundError` without it)."""
        return render_svg(self.dot(collapse=collapse, expand=expand, focus=focus, depth=depth))

    def save(
        self, path: Path | str, *, collapse: bool | None = None, expand: Iterable[str] = (),
        focus: str | None = None, depth: int = 1,
    ) -> Path:
        """Write `.dot`, `.mmd`, `.svg`, `.png` or `.pdf`, chosen by the extension."""
        return save(prepare(self.graph_model(), collapse=collapse, expand=expand,
                            focus=focus, depth=depth), path)

    def _repr_mimebundle_(
        self, include: Iterable[str] | None = None, exclude: Iterable[str] | None = None,
        **kwargs: Any,
    ) -> Mapping[str, str]:
        html_of = getattr(self, "_repr_html_", None)
        return filter_bundle(mimebundle(self, self._drawing_model, html_of), include, exclude)
