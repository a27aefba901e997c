"""Drawings: one graph model, renderers to DOT, mermaid and SVG, matrices, a safe display.

This package knows only its own models (`GraphModel`, `Matrix`); concepts build them
(`Schema.graph_model()`, `ChangeStatus.graph_model()`) and import `draw` inside the
method, so nothing here imports a concept. Importing it is cheap: graphviz is imported
only by `graph()` / `to_graphviz`, pandas only by the matrix functions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import DotError, DotNotFoundError
from .display import Drawable, fallback_card, prepare, save
from .dot import quote, to_dot
from .matrix import Matrix, heatmap_html, markdown_table
from .mermaid import decode_mermaid_id, mermaid_id, to_mermaid
from .model import Edge, GraphModel, Node, attrs
from .render import dot_available, find_dot, render, render_svg
from .settings import DrawOptions, options
from .table import MISSING, Readable, format_duration, readable

if TYPE_CHECKING:
    import graphviz

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
