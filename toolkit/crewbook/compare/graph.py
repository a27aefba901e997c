"""The overlay drawing: two versions of a design in one `crewbook.draw.GraphModel`.

`overlay(a, b, ...)` takes the drawings each concept already makes
(`Schema.graph_model()`, `Pipeline.graph_model()`...) and returns one model: `b`'s nodes
and edges, plus `a`'s that `b` lacks. What the second adds is drawn green (status
`added`), what it removes red and dashed (`removed`), what changed amber (`changed`),
renames amber with a "renamed from" line. `draw/` only knows the three statuses and edge
kinds; it never imports this package.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from ..draw.model import Edge, GraphModel, Node
from .core import EdgeDiff, EdgeKey, Record, RecordDiff, Signature, diff_edges, diff_records

#: Legend of every overlay drawing.
DIFF_LEGEND: tuple[tuple[str, str], ...] = (
    ("added", "added"), ("removed", "removed"), ("changed", "changed or renamed"),
)


def node_record(node: Node) -> dict[str, Any]:
    """What a drawn node says (label, kind, detail, badge), for comparing drawings."""
    return {"label": node.text, "kind": node.kind, "detail": node.detail, "badge": node.badge}


def graph_records(model: GraphModel) -> tuple[dict[str, Record], dict[EdgeKey, Record]]:
    """The nodes and edges of a drawing as records (edge label and style as fields)."""
    nodes: dict[str, Record] = {n.id: node_record(n) for n in model.nodes.values()}
    edges: dict[EdgeKey, Record] = {}
    for e in model.edges:
        edges[(e.source, e.target, e.kind)] = {"label": e.label, "style": e.style}
    return nodes, edges


def diff_graphs(a: GraphModel, b: GraphModel, *, signature: Signature = None
                ) -> tuple[RecordDiff, EdgeDiff]:
    """Two drawings compared node by node and edge by edge."""
    nodes_a, edges_a = graph_records(a)
    nodes_b, edges_b = graph_records(b)
    nodes = diff_records(nodes_a, nodes_b, signature=signature)
    return nodes, diff_edges(edges_a, edges_b, nodes.renames)


def overlay(
    a: GraphModel,
    b: GraphModel,
    *,
    renames: Mapping[str, str] | None = None,
    changed: Mapping[str, Iterable[str]] | None = None,
    name: str = "diff",
    title: str = "",
) -> GraphModel:
    """Both drawings in one: `b`'s nodes and edges, plus `a`'s that `b` lacks.

    Nodes and edges only in `b` get status / kind `added` (green), only in `a`
    `removed` (red, dashed), renamed nodes and the ids in `changed` (id in `b` → the
    fields that changed, listed on the node) `changed` (amber). An edge in both whose
    label differs is `changed` and shows both labels. Everything else keeps its look.
    """
    ren = dict(renames or {})
    changes = {k: list(v) for k, v in (changed or {}).items()}
    old_name = {new: old for old, new in ren.items()}
    out = GraphModel(name, title=title, direction=b.direction, legend=DIFF_LEGEND,
                     clusters={**a.clusters, **b.clusters})
    a_ids = {ren.get(i, i) for i in a.nodes}
    for node in b.nodes.values():
        badge = [line for line in (node.badge or "").splitlines() if line]
        status = node.status
        if node.id not in a_ids:
            status = "added"
        elif node.id in old_name or node.id in changes:
            status = "changed"
            if node.id in old_name:
                badge.append(f"renamed from {old_name[node.id]}")
            if changes.get(node.id):
                badge.append("changed: " + ", ".join(changes[node.id]))
        out.add_node(dataclasses.replace(node, status=status, badge="\n".join(badge) or None,
                                         attrs=_without_colours(node.attrs, status)))
    for node in a.nodes.values():
        if ren.get(node.id, node.id) in b.nodes:
            continue
        out.add_node(dataclasses.replace(node, status="removed", emphasis=False,
                                         attrs=_without_colours(node.attrs, "removed")))

    def key(e: Edge, side_a: bool) -> tuple[str, str, str]:
        if side_a:
            return (ren.get(e.source, e.source), ren.get(e.target, e.target), e.kind)
        return (e.source, e.target, e.kind)

    a_edges: dict[tuple[str, str, str], Edge] = {key(e, True): e for e in a.edges}
    b_keys = set()
    for e in b.edges:
        k = key(e, False)
        b_keys.add(k)
        before = a_edges.get(k)
        if before is None:
            out.add_edge(dataclasses.replace(e, kind="added"))
        elif before.label != e.label:
            label = f"{e.label}\n(was: {before.label or '—'})" if e.label or before.label else ""
            out.add_edge(dataclasses.replace(e, kind="changed", label=label))
        else:
            out.add_edge(e)
    for k, e in a_edges.items():
        if k in b_keys:
            continue
        out.add_edge(dataclasses.replace(e, source=k[0], target=k[1], kind="removed",
                                         style="dashed"))
    return out


_COLOUR_ATTRS = frozenset({"fillcolor", "color", "fontcolor"})


def _without_colours(values: tuple[tuple[str, str], ...], status: str | None
                     ) -> tuple[tuple[str, str], ...]:
    """Raw colours of a node (a terminal's) give way to a diff status."""
    if status not in ("added", "removed", "changed"):
        return values
    return tuple((k, v) for k, v in values if k not in _COLOUR_ATTRS)
