"""Drawings: one graph model, renderers to DOT, mermaid and SVG, matrices, a safe display.

This package knows only its own models (`GraphModel`, `Matrix`); concepts build them
(`Schema.graph_model()`, `ChangeStatus.graph_model()`) and import `draw` inside the
method, so nothing here imports a concept. Importing it is cheap: each name loads its
module on first use, graphviz is imported only by `graph()` / `to_graphviz`, pandas
only by the matrix functions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_names
from ..errors import DotError, DotNotFoundError

# loaded now: `render` is also a module's name, which a lazy name would lose to once
# anything imports that module
from .render import dot_available, find_dot, render, render_svg

#: The public names by module, loaded on first use: `crewbook.draw.settings` (the
#: command line's choices) loads without the renderers.
_LAZY: dict[str, tuple[str, ...]] = {
    "display": ("Drawable", "fallback_card", "prepare", "save"),
    "dot": ("quote", "to_dot"),
    "matrix": ("Matrix", "heatmap_html", "markdown_table"),
    "mermaid": ("decode_mermaid_id", "mermaid_id", "to_mermaid"),
    "model": ("Edge", "GraphModel", "Node", "attrs"),
    "settings": ("DrawOptions", "options"),
    "table": ("MISSING", "Readable", "format_duration", "readable"),
}
__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())

if TYPE_CHECKING:
    import graphviz

    from .display import Drawable, fallback_card, prepare, save
    from .dot import quote, to_dot
    from .matrix import Matrix, heatmap_html, markdown_table
    from .mermaid import decode_mermaid_id, mermaid_id, to_mermaid
    from .model import Edge, GraphModel, Node, attrs
    from .settings import DrawOptions, options
    from .table import MISSING, Readable, format_duration, readable

__all__ = [
    "MISSING",
    "DotError",
    "DotNotFoundError",
    "DrawOptions",
    "Drawable",
    "Edge",
    "GraphModel",
    "Matrix",
    "Node",
    "Readable",
    "attrs",
    "decode_mermaid_id",
    "dot_available",
    "fallback_card",
    "find_dot",
    "format_duration",
    "heatmap_html",
    "markdown_table",
    "mermaid_id",
    "options",
    "prepare",
    "quote",
    "readable",
    "render",
    "render_svg",
    "save",
    "to_dot",
    "to_graphviz",
    "to_mermaid",
]


def to_graphviz(model: GraphModel, *, fit: bool = True) -> graphviz.Digraph:
    """A `graphviz.Digraph` (crewbook's `Drawing`) for `model`, laid out to fit a cell's
    width when `fit` (`crewbook.draw.layout`); imports graphviz now."""
    from ._graphviz import to_graphviz as convert

    return convert(model, fit=fit)
