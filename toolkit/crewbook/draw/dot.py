"""DOT text from a `GraphModel`, written by us: sorted, quoted, byte-identical for one input.

Every id and attribute value is a double-quoted DOT string (`quote`), labels are
Graphviz HTML-like labels (`<b>id</b><br/>detail`) with their text escaped
(`html_text`), so no name a user writes can break the file or inject attributes.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from itertools import pairwise

from .model import Edge, GraphModel, Node
from .style import (
    BADGE_COLOUR,
    DETAIL_COLOUR,
    EDGE,
    FONT,
    PLAIN,
    PROBLEM_COLOUR,
    SHAPE,
    legend_look,
    node_look,
)

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\ufffe\uffff]")


class Html(str):
    """An attribute value written as a DOT HTML string (`<...>`), not quoted."""

    __slots__ = ()


def quote(text: str) -> str:
    """A DOT double-quoted string: backslashes and quotes escaped, newlines as ``\\n``."""
    text = _CONTROL.sub("\N{REPLACEMENT CHARACTER}", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{text}"'


def html_text(text: str) -> str:
    """Text for inside an HTML-like label: markup characters (and ``]``) as entities,
    newlines as ``<br/>``, tabs as spaces."""
    text = _CONTROL.sub("\N{REPLACEMENT CHARACTER}", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = text.replace("\t", " ").replace("&", "&amp;").replace("<", "&lt;")
    # dot 2.43 rejects a label starting with `]`, or made of one tab
    text = text.replace(">", "&gt;").replace('"', "&quot;").replace("]", "&#93;")
    return text.replace("\n", "<br/>")


def attr_list(values: dict[str, str]) -> str:
    """`[key="value", ...]` in the dict's order (callers build it in a fixed order)."""
    parts = [f"{key}={_value(value)}" for key, value in values.items()]
    return f"[{', '.join(parts)}]"


def _value(value: str) -> str:
    return f"<{value}>" if isinstance(value, Html) else quote(value)


#: Defaults written once at the top of every drawing.
GRAPH_DEFAULTS: dict[str, str] = {
    "fontname": FONT, "fontsize": "12", "labelloc": "t", "nodesep": "0.25",
    "ranksep": "0.45",
}
NODE_DEFAULTS: dict[str, str] = {
    "shape": "box", "style": "rounded,filled", "fillcolor": PLAIN.fill, "color": PLAIN.border,
    "fontname": FONT, "fontsize": "11", "margin": "0.12,0.06",
}
EDGE_DEFAULTS: dict[str, str] = {
    "color": EDGE["requires"][0], "arrowsize": "0.7", "fontname": FONT, "fontsize": "9",
}


@dataclass
class DotParts:
    """A drawing split the way `graphviz.Digraph` holds one: default attributes and body."""

    name: str
    graph_attrs: dict[str, str] = field(default_factory=dict)
    node_attrs: dict[str, str] = field(default_factory=dict)
    edge_attrs: dict[str, str] = field(default_factory=dict)
    body: list[str] = field(default_factory=list)


def node_label(node: Node) -> Html:
    """The HTML-like label: bold main line, then detail and badge lines in small type."""
    parts = [f"<b>{html_text(node.text)}</b>"]
    if node.detail:
        parts.append(
            f'<font point-size="9" color="{DETAIL_COLOUR}">{html_text(node.detail)}</font>'
        )
    for line in (node.badge or "").splitlines():
        if line:
            colour = PROBLEM_COLOUR if line.startswith("✖") else BADGE_COLOUR
            parts.append(f'<font point-size="9" color="{colour}">{html_text(line)}</font>')
    return Html("<br/>".join(parts))


def node_attrs(node: Node) -> dict[str, str]:
    """The attributes of one node statement, in a fixed order, raw `attrs` last."""
    look = node_look(node.kind, node.status)
    shape = SHAPE.get(node.kind, "box")
    values: dict[str, str] = {"label": node_label(node)}
    if shape != "box":
        values["shape"] = shape
    style = ["rounded"] if shape == "box" else []
    if node.kind != "missing":
        style.append("filled")
    if look.dashed:
        style.append("dashed")
    if ",".join(style) != NODE_DEFAULTS["style"]:
        values["style"] = ",".join(style)
    if look.fill != PLAIN.fill and node.kind != "missing":
        values["fillcolor"] = look.fill
    if look.border != PLAIN.border:
        values["color"] = look.border
    if look.font != PLAIN.font:
        values["fontcolor"] = look.font
    if node.emphasis:
        values["penwidth"] = "3"
    if node.tooltip:
        values["tooltip"] = node.tooltip
    values.update(node.attrs)
    return values


def edge_attrs(edge: Edge) -> dict[str, str]:
    """The attributes of one edge statement, in a fixed order, raw `attrs` last."""
    colour, width = EDGE.get(edge.kind, EDGE["requires"])
    values: dict[str, str] = {}
    if colour != EDGE_DEFAULTS["color"]:
        values["color"] = colour
    if width != 1.0:
        values["penwidth"] = f"{width:g}"
    if edge.style != "solid":
        values["style"] = edge.style
    if edge.count > 1:
        values["penwidth"] = f"{width + min(3.0, 0.5 * math.log2(edge.count)):.2g}"
    loop = edge.source == edge.target
    # a blank label draws nothing, and dot 2.43 asserts (xlabels.c, lblenclosing) on a
    # zero-size loop label beside an xlabel: blank labels are left out, not written
    label = " ".join(x for x in (edge.label.strip(), f"×{edge.count}" if loop and edge.count > 1
                                 else "") if x)
    if label:
        values["label"] = label
    if edge.count > 1 and not loop:
        # xlabel: placed after layout, so thousands stay cheap (dot 2.43 asserts on a loop's)
        values["xlabel"] = f"×{edge.count}"
    if edge.kind in ("cycle", "dangling"):
        values["fontcolor"] = colour
    values.update(edge.attrs)
    return values


def _node_line(node: Node) -> str:
    return f"{quote(node.id)} {attr_list(node_attrs(node))}"


def _edge_line(edge: Edge) -> str:
    values = edge_attrs(edge)
    tail = f" {attr_list(values)}" if values else ""
    return f"{quote(edge.source)} -> {quote(edge.target)}{tail}"


def _legend_lines(model: GraphModel) -> list[str]:
    """One table-shaped node at the last rank (in the last row of a folded drawing): a
    coloured cell per legend entry."""
    if not model.legend:
        return []
    rows = ['<tr><td border="0"><font color="#607d8b">legend</font></td></tr>']
    for key, text in model.legend:
        look, _kind = legend_look(key)
        width = "3" if key == "next" else "1"
        label = html_text(text)
        if look.font != PLAIN.font:
            label = f'<font color="{look.font}">{label}</font>'
        rows.append(f'<tr><td border="{width}" color="{look.border}" bgcolor="{look.fill}">'
                    f"{label}</td></tr>")
    table = ('<table border="0" cellborder="1" cellspacing="3" cellpadding="3">'
             + "".join(rows) + "</table>")
    values = {"label": Html(table), "shape": "plaintext", "margin": "0", "fontsize": "9"}
    if model.rows:
        return [f"{quote('legend:')} {attr_list(values)}"]
    return [f"{{ rank=sink; {quote('legend:')} {attr_list(values)} }}"]


def _row_lines(model: GraphModel) -> list[str]:
    """A folded drawing's rows: each row's nodes on one rank, left to right in the order
    given (invisible edges), and the rows' first nodes one above the other."""
    rows = [[n for n in row if n in model.nodes] for row in model.rows]
    rows = [row for row in rows if row]
    if model.legend and rows:
        rows[-1].append("legend:")
    lines = [f"{{ rank=same; {'; '.join(quote(n) for n in row)} }}" for row in rows]
    hidden = attr_list({"style": "invis", "weight": "50"})
    lines += [f"{quote(a)} -> {quote(b)} {hidden}" for row in rows for a, b in pairwise(row)]
    lines += [f"{quote(a[0])} -> {quote(b[0])} {hidden}" for a, b in pairwise(rows)]
    return lines


def dot_parts(model: GraphModel) -> DotParts:
    """The drawing as defaults plus body statements (no leading tab, no newline)."""
    title = "\n".join(x for x in (model.title, model.note and f"({model.note})") if x)
    graph = {"rankdir": "TB" if model.rows else model.direction, **GRAPH_DEFAULTS}
    if model.rows:  # rows closer than ranks: an arrow between rows needs little room
        graph["newrank"] = "true"
        graph["ranksep"] = "0.3"
    if title:
        graph["label"] = title
    body: list[str] = []
    clustered: dict[str, list[Node]] = {}
    for node in model.sorted_nodes():
        if node.group is not None and node.group in model.clusters:
            clustered.setdefault(node.group, []).append(node)
        else:
            body.append(_node_line(node))
    for group in sorted(clustered):
        body.append(f"subgraph {quote('cluster_g:' + group)} {{")
        box = {"label": model.clusters[group], "style": "rounded", "color": "#b0bec5"}
        body.append(f"\tgraph {attr_list(box)}")
        body += [f"\t{_node_line(node)}" for node in clustered[group]]
        body.append("}")
    body += [_edge_line(edge) for edge in model.sorted_edges()]
    body += _legend_lines(model)
    body += _row_lines(model)
    return DotParts(model.name, graph, dict(NODE_DEFAULTS), dict(EDGE_DEFAULTS), body)


def to_dot(model: GraphModel) -> str:
    """The DOT source of `model`; the same model always gives the same bytes."""
    parts = dot_parts(model)
    lines = [f"digraph {quote(parts.name)} {{",
             f"\tgraph {attr_list(parts.graph_attrs)}",
             f"\tnode {attr_list(parts.node_attrs)}",
             f"\tedge {attr_list(parts.edge_attrs)}"]
    lines += [f"\t{line}" for line in parts.body]
    lines.append("}")
    return "\n".join(lines) + "\n"
