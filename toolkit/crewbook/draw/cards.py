"""The HTML pieces of a drawing's display: the scrolling box an SVG sits in, the card
shown instead when `dot` is missing or fails, the wide-drawing note, and the helpers of
a mime bundle. Pure text: both the display mixin (`display`) and the graphviz objects
(`_graphviz`) use them, so neither imports the other."""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterable, Sequence
from typing import TypeVar

from ..errors import DotNotFoundError, error_message
from .layout import CELL_WIDTH, FIT_HEIGHT
from .render import INSTALL_HINTS
from .settings import options

__all__ = ["BOX_STYLE", "CELL_WIDTH", "FIT_HEIGHT", "HEAD_ROWS", "TAIL_ROWS",
           "fallback_card", "filter_bundle", "fit_width", "head_tail", "inline_svg", "more_row",
           "one_to_one", "overview_box", "overview_note", "safe_repr", "short_list", "svg_box",
           "svg_size"]

T = TypeVar("T")
#: Rows a big table shows: the first `HEAD_ROWS` and the last `TAIL_ROWS`, with a row
#: saying how many are left out between them.
HEAD_ROWS = 10
TAIL_ROWS = 5

_PROLOG = re.compile(r"\A(?:\s*<\?xml[^>]*\?>|\s*<!DOCTYPE[^>]*>|\s*<!--.*?-->)*\s*", re.S)
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


def overview_box(svg: str) -> str:
    """The drawing shrunk to fit the cell: at most its own size, `CELL_WIDTH` wide and
    `FIT_HEIGHT` tall, aspect kept (an `<img>` with a data URI, like `inline_svg`;
    CSS width and ``max-width:100%``, which JupyterLab's sanitiser keeps)."""
    data = base64.b64encode(_PROLOG.sub("", svg, count=1).encode("utf-8")).decode("ascii")
    size = svg_size(svg)
    width = f"width:{fit_width(size)}px;" if size else ""
    return (f"<div class='crewbook-drawing crewbook-overview'><img alt='drawing' "
            f"style='{width}max-width:100%;height:auto' "
            f"src='data:image/svg+xml;base64,{data}'></div>")


def fit_width(size: tuple[float, float]) -> int:
    """The width (CSS px) at which a drawing of `size` is at most 1:1, `CELL_WIDTH` wide
    and `FIT_HEIGHT` tall."""
    return max(1, round(min(size[0], CELL_WIDTH, size[0] * FIT_HEIGHT / size[1])))


#: Largest SVG (bytes) whose 1:1 view is kept beside its overview (it doubles the
#: output); bigger drawings name `DrawingView` for it instead (`overview_note`).
ONE_TO_ONE_BYTES = 64_000


def one_to_one(svg: str) -> str:
    """For a drawing the overview shrinks: a closed ``<details>`` holding it at 1:1 in a
    scrolling box (one click away, no script); nothing when the overview is at 1:1 or
    the SVG is over `ONE_TO_ONE_BYTES`."""
    size = svg_size(svg)
    if size is None or fit_width(size) >= round(size[0]) or len(svg) > ONE_TO_ONE_BYTES:
        return ""
    return ("<details class='crewbook-one-to-one'><summary style='color:#607d8b;"
            f"font-size:90%'>1:1 ({size[0]:,.0f} × {size[1]:,.0f} px)</summary>"
            f"<div class='crewbook-full-size' style='{BOX_STYLE}'>{inline_svg(svg)}</div>"
            "</details>")


def overview_note(svg: str) -> str:
    """A line under an overview too big for the cell at 1:1: how to see it at 1:1, pan,
    zoom, search and focus."""
    size = svg_size(svg)
    if size is None or (size[0] <= CELL_WIDTH and size[1] <= FIT_HEIGHT):
        return ""
    scale = fit_width(size) / size[0]
    whole = ("“1:1” above" if len(svg) <= ONE_TO_ONE_BYTES
             else "<code>obj.save(\"drawing.svg\")</code>")
    return (f"<p style='color:#607d8b;font-size:90%'>Overview of a {size[0]:,.0f} × "
            f"{size[1]:,.0f} px drawing (at {scale:.0%} on a {CELL_WIDTH:,} px cell). At 1:1: "
            f"{whole}; around one node: <code>obj.graph(focus=\"id\", "
            "depth=2)</code>; pan, zoom, search and focus: "
            "<code>crewbook.widgets.DrawingView(obj)</code>.</p>")


def head_tail(items: Sequence[T], head: int = HEAD_ROWS,
              tail: int = TAIL_ROWS) -> tuple[list[T], int, list[T]]:
    """(the first `head` items, how many are left out, the last `tail`); all of them
    in the first list when there are not more than `head + tail` (+1: never "1 more")."""
    if len(items) <= head + tail + 1:
        return list(items), 0, []
    return list(items[:head]), len(items) - head - tail, list(items[len(items) - tail:])


def more_row(hidden: int, columns: int, noun: str = "rows") -> str:
    """The table row standing for `hidden` rows left out of a big table."""
    if not hidden:
        return ""
    return (f"<tr class='crewbook-more'><td colspan='{columns}' style='text-align:center;"
            f"color:#607d8b'>… {hidden:,} more {html.escape(noun)} …</td></tr>")


def short_list(names: Sequence[str], sep: str = ", ", head: int = 8, tail: int = 3) -> str:
    """`names` joined by `sep`, the middle of a long list replaced by ``… (N more) …``."""
    first, hidden, last = head_tail(names, head, tail)
    if not hidden:
        return sep.join(first)
    return sep.join([*first, f"… ({hidden:,} more) …", *last])


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
        why = f"<p><b>No drawing</b>: {html.escape(error_message(error))}</p>"
    source = ""
    if dot_text is not None:
        source = (f"<details><summary>DOT source ({dot_text.count(chr(10))} lines)</summary>"
                  f"<pre style='white-space:pre-wrap'>{html.escape(dot_text)}</pre></details>")
    return ("<div class='crewbook-nodraw' style='border:1px solid #b0bec5;border-radius:4px;"
            f"padding:0.4em 0.8em;margin:0.4em 0'>{why}{source}</div>")


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
