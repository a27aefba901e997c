"""`graphviz.Digraph` objects from our DOT parts; imported only when one is asked for.

`Drawing` is a `graphviz.Digraph` the user can restyle (`g.attr(rankdir="TB")`,
`g.node_attr["fontname"] = "Courier"`, `g.node("x")`), whose notebook display keeps
crewbook's promise: it opens fitted to the cell's width (the 1:1 view one click away,
in a closed ``<details>``), and without `dot` it shows the DOT source and how to install
Graphviz instead of raising `graphviz.ExecutableNotFound`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import graphviz

from .cards import fallback_card, filter_bundle, one_to_one, overview_box, overview_note, safe_repr
from .dot import dot_parts
from .layout import fit_layout
from .model import GraphModel
from .render import render_svg


class Drawing(graphviz.Digraph):  # type: ignore[misc]  # graphviz ships no type hints
    """A `graphviz.Digraph` whose display never raises (see the module docstring)."""

    def __repr__(self) -> str:
        return f"<crewbook Drawing {self.name!r}: {len(self.body)} statements>"

    def _repr_mimebundle_(
        self, include: Iterable[str] | None = None, exclude: Iterable[str] | None = None,
        **kwargs: Any,
    ) -> Mapping[str, str]:
        bundle = {"text/plain": safe_repr(self)}
        source: str | None = None
        try:
            source = str(self.source)
            svg = render_svg(source)
        except Exception as exc:  # a display must never raise
            bundle["text/html"] = fallback_card(source, exc)
        else:
            bundle["text/html"] = overview_box(svg) + one_to_one(svg) + overview_note(svg)
            bundle["image/svg+xml"] = svg
        return filter_bundle(bundle, include, exclude)


def to_graphviz(model: GraphModel, *, fit: bool = True) -> Drawing:
    """A `Drawing` (a `graphviz.Digraph`) holding `model`, laid out to be legible at a
    cell's width when `fit` (`layout.fit_layout`: a long chain folded into rows); its
    source draws like `to_dot` of that model."""
    parts = dot_parts(fit_layout(model) if fit else model)
    return Drawing(
        name=parts.name,
        graph_attr=_plain(parts.graph_attrs),
        node_attr=_plain(parts.node_attrs),
        edge_attr=_plain(parts.edge_attrs),
        body=[f"\t{line}\n" for line in parts.body],
    )


def _plain(values: dict[str, str]) -> dict[str, str]:
    # the graphviz package quotes plain values itself (but leaves backslashes for DOT
    # escapes such as \n); our defaults hold no HTML labels
    return {key: str(value).replace("\\", "\\\\").replace("\n", "\\n")
            for key, value in values.items()}
