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

import base64
import html
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DotNotFoundError, InvalidInputError
from .dot import to_dot
from .mermaid import to_mermaid
from .model import GraphModel
from .render import INSTALL_HINTS, render, render_svg
from .settings import options

if TYPE_CHECKING:
    import graphviz

#: File extensions `save` understands, and what it writes for each.
SAVE_FORMATS = {".dot": "DOT text", ".gv": "DOT text", ".mmd": "mermaid text",
                ".svg": "SVG (needs dot)", ".png": "PNG (needs dot)", ".pdf": "PDF (needs dot)"}
_PROLOG = re.compile(r"\A(?:\s*<\?xml[^>]*\?>|\s*<!DOCTYPE[^>]*>|\s*<!--.*?-->)*\s*", re.S)


def prepare(
    model: GraphModel, *, collapse: bool | None = None, expand: Iterable[str] = ()
) -> GraphModel:
    """`model`, collapsed when asked (`collapse=True`), or when it has more nodes than
    `options.collapse_threshold` and `collapse` is not False."""
    expand = tuple(expand)
    if collapse or (collapse is None and (len(model) > options.collapse_threshold or expand)):
        return model.collapse(expand=expand)
    return model


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
    target.write_bytes(data)
    return target


_SIZE = re.compile(r'<svg\b[^>]*?\swidth="([\d.]+)(pt|px)?"[^>]*?\sheight="([\d.]+)(pt|px)?"', re.S)
#: CSS of the box a drawing sits in: at most the cell's width and 80% of the window's
#: height, scrolled beyond (a wide or tall drawing stays at 1:1, legible).
BOX_STYLE = "overflow:auto;max-width:100%;max-height:80vh;border:0"


def svg_size(svg: str) -> tuple[float, float] | None:
    """(width, height) of an SVG made by `dot`, in CSS pixels (1 pt = 4/3 px), or None."""
    found = _SIZE.search(svg)
    if found is None:
        return None
    scale = 4 / 3 if found.group(2) in (None, "pt") else 1.0
    return float(found.group(1)) * scale, float(found.group(3)) * scale


def inline_svg(svg: str, zoom: float = 1.0) -> str:
    """The SVG as an `<img>` with a data URI, at its own size times `zoom`.

    An `<img>` rather than inline `<svg>`: JupyterLab sanitises the HTML of notebooks
    it does not trust (any notebook opened from disk), and strips inline SVG down to
    its text; an image with a data URI survives, and keeps the drawing's ids apart
    from the page's. The width is set in pixels (never squeezed to the cell): a wide
    drawing scrolls in its `svg_box` instead of shrinking to unreadable text.
    """
    data = base64.b64encode(_PROLOG.sub("", svg, count=1).encode("utf-8")).decode("ascii")
    size = svg_size(svg)
    width = f" width='{round(size[0] * zoom)}'" if size else ""
    style = "max-width:none" if size else "max-width:100%"
    return (f"<img alt='drawing'{width} style='{style}' "
            f"src='data:image/svg+xml;base64,{data}'>")


def svg_box(svg: str, zoom: float = 1.0, *, inline: bool = False) -> str:
    """The drawing in a scrolling box (`BOX_STYLE`): an `<img>` (survives untrusted
    notebooks), or with `inline=True` the `<svg>` itself, scaled by `zoom`, so that node
    tooltips work (for widgets, whose HTML is not sanitised)."""
    if not inline:
        body = inline_svg(svg, zoom)
    else:
        body = _PROLOG.sub("", svg, count=1)
        size = svg_size(body)
        if size is not None:
            body = re.sub(r'(<svg\b[^>]*?\s)width="[^"]*"', rf'\g<1>width="{size[0] * zoom:.0f}px"',
                          body, count=1, flags=re.S)
            body = re.sub(r'(<svg\b[^>]*?\s)height="[^"]*"',
                          rf'\g<1>height="{size[1] * zoom:.0f}px"', body, count=1, flags=re.S)
    return f"<div class='crewbook-drawing' style='{BOX_STYLE}'>{body}</div>"


def fallback_card(dot_text: str | None, error: BaseException | None = None) -> str:
    """The HTML shown instead of a drawing: why, how to install Graphviz, the DOT source."""
    if error is None or isinstance(error, DotNotFoundError):
        hints = " · ".join(f"<code>{html.escape(h)}</code>" for h in INSTALL_HINTS)
        why = (f"<p><b>No drawing</b>: the Graphviz <code>{html.escape(options.dot_program)}"
               f"</code> program was not found on PATH. Install it ({hints}) and run the cell "
               "again; meanwhile, here is the DOT source (paste it into any Graphviz viewer).</p>")
    else:
        why = (f"<p><b>No drawing</b>: {html.escape(type(error).__name__)}: "
               f"{html.escape(str(error))}</p>")
    source = ""
    if dot_text is not None:
        source = (f"<details><summary>DOT source ({dot_text.count(chr(10))} lines)</summary>"
                  f"<pre style='white-space:pre-wrap'>{html.escape(dot_text)}</pre></details>")
    return ("<div class='crewbook-nodraw' style='border:1px solid #b0bec5;border-radius:4px;"
            f"padding:0.4em 0.8em;margin:0.4em 0'>{why}{source}</div>")


def _note(model: GraphModel) -> str:
    if not model.note:
        return ""
    return (f"<p style='color:#607d8b;font-size:90%'>{html.escape(model.note)}; expand a group "
            "with <code>.graph(expand=[...])</code>, draw all with <code>collapse=False</code>, "
            "or set <code>crewbook.draw.options.collapse_threshold</code>.</p>")


#: Drawings wider than this (CSS px) get a line saying how to see them whole.
WIDE = 1000


def wide_note(svg: str) -> str:
    """A line under a drawing wider than `WIDE`: it is at 1:1, scroll or zoom it."""
    size = svg_size(svg)
    if size is None or size[0] <= WIDE:
        return ""
    return (f"<p style='color:#607d8b;font-size:90%'>{size[0]:,.0f} px wide, shown at 1:1: "
            "scroll it, or zoom it with <code>crewbook.widgets.DrawingView(obj)</code>.</p>")


def drawing_bundle(model: GraphModel | None) -> tuple[str, str | None]:
    """(HTML of the drawing or of the fallback card, the SVG or None). Never raises."""
    if model is None:
        return "", None
    dot_text: str | None = None
    try:
        prepared = prepare(model)
        dot_text = to_dot(prepared)
        svg = render_svg(dot_text)
    except Exception as exc:  # a display must never raise
        return fallback_card(dot_text, exc), None
    return f"{svg_box(svg)}{wide_note(svg)}{_note(prepared)}", svg


def safe_repr(obj: object) -> str:
    """`repr(obj)`, or a plain one when that fails."""
    try:
        return repr(obj)
    except Exception:
        return f"<{type(obj).__name__} object>"


def filter_bundle(
    bundle: dict[str, str], include: Iterable[str] | None, exclude: Iterable[str] | None
) -> dict[str, str]:
    """Keep the mime types IPython asked for."""
    if include is not None:
        wanted = set(include)
        bundle = {k: v for k, v in bundle.items() if k in wanted}
    if exclude is not None:
        unwanted = set(exclude)
        bundle = {k: v for k, v in bundle.items() if k not in unwanted}
    return bundle


def mimebundle(obj: object, model_of: Any, html_of: Any) -> dict[str, str]:
    """text/plain, text/html (drawing + `html_of()`), image/svg+xml when drawn. Never raises."""
    bundle = {"text/plain": safe_repr(obj)}
    try:
        model = model_of()
    except Exception as exc:
        drawing, svg = fallback_card(None, exc), None
    else:
        drawing, svg = drawing_bundle(model)
    try:
        body = html_of() if html_of is not None else ""
    except Exception as exc:
        body = f"<p>(no table: {html.escape(type(exc).__name__)}: {html.escape(str(exc))})</p>"
    bundle["text/html"] = f"<div class='crewbook-display'>{drawing}{body}</div>"
    if svg is not None:
        bundle["image/svg+xml"] = svg
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

    def dot(self, *, collapse: bool | None = None, expand: Iterable[str] = ()) -> str:
        """DOT text; identical for identical inputs (big graphs collapse, see `collapse`)."""
        return to_dot(prepare(self.graph_model(), collapse=collapse, expand=expand))

    def mermaid(self, *, collapse: bool | None = None, expand: Iterable[str] = ()) -> str:
        """Mermaid flowchart text."""
        return to_mermaid(prepare(self.graph_model(), collapse=collapse, expand=expand))

    def graph(
        self, *, collapse: bool | None = None, expand: Iterable[str] = ()
    ) -> graphviz.Digraph:
        """A `graphviz.Digraph` to restyle (`g.attr(rankdir="TB")`) or render.

        `collapse=None` collapses graphs above `crewbook.draw.options.collapse_threshold`;
        `expand=["specs"]` keeps those groups' members as individual nodes.
        """
        from ._graphviz import to_graphviz

        return to_graphviz(prepare(self.graph_model(), collapse=collapse, expand=expand))

    def svg(self, *, collapse: bool | None = None, expand: Iterable[str] = ()) -> str:
        """SVG text rendered by `dot` (raises `DotNotFoundError` without it)."""
        return render_svg(self.dot(collapse=collapse, expand=expand))

    def save(
        self, path: Path | str, *, collapse: bool | None = None, expand: Iterable[str] = ()
    ) -> Path:
        """Write `.dot`, `.mmd`, `.svg`, `.png` or `.pdf`, chosen by the extension."""
        return save(prepare(self.graph_model(), collapse=collapse, expand=expand), path)

    def _repr_mimebundle_(
        self, include: Iterable[str] | None = None, exclude: Iterable[str] | None = None,
        **kwargs: Any,
    ) -> Mapping[str, str]:
        html_of = getattr(self, "_repr_html_", None)
        return filter_bundle(mimebundle(self, self._drawing_model, html_of), include, exclude)
