"""Mermaid flowchart text from a `GraphModel`, for Markdown hosts that draw it (GitHub, docs).

Node ids are encoded reversibly (`mermaid_id`) so any id is safe (mermaid chokes on
`end`, on hyphens next to arrows, on spaces); labels are quoted and escaped
(`mermaid_text`). Order is the DOT renderer's: sorted, so the text is stable.
"""

from __future__ import annotations

import re

from ..errors import UsageError
from .model import Edge, GraphModel, Node
from .style import EDGE, MERMAID_LINK_KINDS, MERMAID_SHAPE, STATUS, legend_look, node_look

_SAFE = re.compile(r"[A-Za-z0-9]")
_NAMED = {"_": "__", "-": "_d", ":": "_c", "/": "_s", ".": "_p", " ": "_w"}
_UNNAMED = {v[1]: k for k, v in _NAMED.items()}
_ARROW = {"solid": "-->", "dashed": "-.->", "dotted": "-.->", "bold": "==>"}


def mermaid_id(node_id: str) -> str:
    """A mermaid-safe id: ``n_`` then letters and digits kept, the rest escaped (`_d` for
    ``-``, ``__`` for ``_``, ``_uXXXX_`` for others); `decode_mermaid_id` reverses it."""
    out = ["n_"]
    for char in node_id:
        if _SAFE.match(char):
            out.append(char)
        elif char in _NAMED:
            out.append(_NAMED[char])
        else:
            out.append(f"_u{ord(char):x}_")
    return "".join(out)


def decode_mermaid_id(encoded: str) -> str:
    """The node id behind a `mermaid_id`."""
    if not encoded.startswith("n_"):
        raise UsageError(f"{encoded!r} is not a crewbook mermaid id")
    text, out, i = encoded[2:], [], 0
    while i < len(text):
        char = text[i]
        if char != "_":
            out.append(char)
            i += 1
            continue
        code = text[i + 1]
        if code == "u":
            end = text.index("_", i + 2)
            out.append(chr(int(text[i + 2:end], 16)))
            i = end + 1
        else:
            out.append("_" if code == "_" else _UNNAMED[code])
            i += 2
    return "".join(out)


def mermaid_text(text: str) -> str:
    """Label text for inside ``"..."``: entity-escaped, newlines as ``<br/>``."""
    text = text.replace("#", "#35;").replace('"', "#quot;").replace("`", "#96;")
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = re.sub(r"[\x00-\x1f\x7f]", lambda m: "<br/>" if m.group() == "\n" else " ",
                  text.replace("\r\n", "\n"))
    return text


def _label(node: Node) -> str:
    lines = [f"<b>{mermaid_text(node.text)}</b>"]
    if node.detail:
        lines.append(f"<small>{mermaid_text(node.detail)}</small>")
    lines += [f"<i>{mermaid_text(line)}</i>" for line in (node.badge or "").splitlines() if line]
    return "<br/>".join(lines)


def _class_of(node: Node) -> str | None:
    if node.status in STATUS:
        return f"st_{node.status}"
    if node.kind in ("missing", "gate", "summary"):
        return f"k_{node.kind}"
    return None


def _node_line(node: Node) -> str:
    open_, close = MERMAID_SHAPE.get(node.kind, MERMAID_SHAPE["artifact"])
    cls = _class_of(node)
    return f'{mermaid_id(node.id)}{open_}"{_label(node)}"{close}' + (f":::{cls}" if cls else "")


def _edge_line(edge: Edge) -> str:
    arrow = "==>" if edge.kind == "cycle" else _ARROW[edge.style]
    text = " ".join(x for x in (edge.label, f"×{edge.count}" if edge.count > 1 else "") if x)
    label = f'|"{mermaid_text(text)}"|' if text else ""
    return f"{mermaid_id(edge.source)} {arrow}{label} {mermaid_id(edge.target)}"


def _class_defs() -> list[str]:
    looks = {f"st_{name}": look for name, look in STATUS.items()}
    looks.update({f"k_{kind}": node_look(kind, None) for kind in ("missing", "gate", "summary")})
    lines = []
    for name, look in looks.items():
        dash = ",stroke-dasharray:4 3" if look.dashed else ""
        colours = f"fill:{look.fill},stroke:{look.border},color:{look.font}"
        lines.append(f"classDef {name} {colours}{dash}")
    lines.append("classDef next stroke-width:3px")
    return lines


def to_mermaid(model: GraphModel) -> str:
    """The mermaid `flowchart` of `model`; the same model always gives the same text."""
    lines = [f"flowchart {model.direction}"]
    title = " — ".join(x for x in (model.title, model.note) if x)
    if title:
        lines.append(f"%% {title.replace(chr(10), ' ')}")
    clustered: dict[str, list[Node]] = {}
    emphasised = []
    for node in model.sorted_nodes():
        if node.emphasis:
            emphasised.append(mermaid_id(node.id))
        if node.group is not None and node.group in model.clusters:
            clustered.setdefault(node.group, []).append(node)
        else:
            lines.append(f"  {_node_line(node)}")
    for group in sorted(clustered):
        label = mermaid_text(model.clusters[group])
        lines.append(f'  subgraph {mermaid_id("cluster:" + group)}["{label}"]')
        lines += [f"    {_node_line(node)}" for node in clustered[group]]
        lines.append("  end")
    edges = model.sorted_edges()
    lines += [f"  {_edge_line(edge)}" for edge in edges]
    if model.legend:
        lines.append(f'  subgraph {mermaid_id("legend:")}["legend"]')
        for key, text in model.legend:
            _look, kind = legend_look(key)
            open_, close = MERMAID_SHAPE.get(kind, MERMAID_SHAPE["artifact"])
            cls = (f"st_{key}" if key in STATUS else "k_missing" if key in ("missing", "dangling")
                   else "next" if key == "next" else None)
            lines.append(f'    {mermaid_id("legend:" + key)}{open_}"{mermaid_text(text)}"{close}'
                         + (f":::{cls}" if cls else ""))
        lines.append("  end")
    used = set(re.findall(r":::(\w+)", "\n".join(lines))) | ({"next"} if emphasised else set())
    lines += [f"  {line}" for line in _class_defs() if line.split()[1] in used]
    if emphasised:
        lines.append(f"  class {','.join(emphasised)} next")
    for index, edge in enumerate(edges):
        colour, width = EDGE.get(edge.kind, EDGE["requires"])
        if edge.kind in MERMAID_LINK_KINDS:
            lines.append(f"  linkStyle {index} stroke:{colour},stroke-width:{width:g}px")
    return "\n".join(lines) + "\n"
