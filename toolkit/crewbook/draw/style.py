"""One visual language for every drawing: status colours, node shapes, edge colours.

Colours are chosen to read on white and in print, and to stay apart for the common
forms of colour blindness by pairing hue with fill lightness and line style:

=============  ===========  ===========  =============================================
status         fill         border       meaning
=============  ===========  ===========  =============================================
done           ``#c8e6c9``  ``#2e7d32``  its file exists
ready          ``#bbdefb``  ``#1565c0``  everything it requires is done: write it now
blocked        ``#ffe0b2``  ``#e65100``  waits for an artifact that is not done
skipped        ``#eeeeee``  ``#9e9e9e``  skipped (`skip_specs`), dashed border
in_progress    ``#fff9c4``  ``#f9a825``  apply gate: some tasks ticked
complete       ``#c8e6c9``  ``#2e7d32``  apply gate: every task ticked
error          ``#ffcdd2``  ``#c62828``  a problem of the file points here
added          ``#e8f5e9``  ``#2e7d32``  a comparison: only in the second version
removed        ``#ffebee``  ``#c62828``  a comparison: only in the first, dashed border
changed        ``#fff8e1``  ``#ff8f00``  a comparison: in both, with other values
=============  ===========  ===========  =============================================

The next artifact to write is drawn with a thick border and a bold "next" line.
Edges: grey `requires`, dark `apply`, red bold `cycle`, red dashed `dangling`
(to a dashed red `missing` node); in a comparison, green `added`, red `removed` (drawn
dashed) and amber `changed`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Look:
    """How one status or kind is drawn."""

    fill: str
    border: str
    font: str = "#212121"
    dashed: bool = False


FONT = "Helvetica,Arial,sans-serif"
PLAIN = Look("#ffffff", "#546e7a")
GATE = Look("#eceff1", "#37474f")
SUMMARY = Look("#f5f5f5", "#607d8b")
MISSING = Look("#ffffff", "#c62828", font="#c62828", dashed=True)

STATUS: dict[str, Look] = {
    "done": Look("#c8e6c9", "#2e7d32"),
    "ready": Look("#bbdefb", "#1565c0"),
    "blocked": Look("#ffe0b2", "#e65100"),
    "skipped": Look("#eeeeee", "#9e9e9e", font="#757575", dashed=True),
    "in_progress": Look("#fff9c4", "#f9a825"),
    "complete": Look("#c8e6c9", "#2e7d32"),
    "error": Look("#ffcdd2", "#c62828"),
    "added": Look("#e8f5e9", "#2e7d32", font="#1b5e20"),
    "removed": Look("#ffebee", "#c62828", font="#b71c1c", dashed=True),
    "changed": Look("#fff8e1", "#ff8f00"),
}

#: DOT shape per node kind (unknown kinds draw as `artifact`).
SHAPE: dict[str, str] = {
    "artifact": "box",
    "collection": "box3d",
    "gate": "hexagon",
    "missing": "box",
    "summary": "folder",
    "stage": "box",
    "role": "ellipse",
    "note": "note",
}

#: Mermaid brackets per node kind: (open, close).
MERMAID_SHAPE: dict[str, tuple[str, str]] = {
    "artifact": ("[", "]"),
    "collection": ("[[", "]]"),
    "gate": ("{{", "}}"),
    "missing": ("[", "]"),
    "summary": ("[/", "/]"),
    "stage": ("[", "]"),
    "role": ("([", "])"),
    "note": (">", "]"),
}

#: (colour, pen width) per edge kind.
EDGE: dict[str, tuple[str, float]] = {
    "requires": ("#78909c", 1.0),
    "apply": ("#37474f", 1.4),
    "cycle": ("#d50000", 2.2),
    "dangling": ("#d50000", 1.4),
    "flow": ("#455a64", 1.2),
    "added": ("#2e7d32", 1.8),
    "removed": ("#c62828", 1.4),
    "changed": ("#ff8f00", 1.8),
}
#: Edge kinds whose colour mermaid gets through a `linkStyle` (the others stay default).
MERMAID_LINK_KINDS = frozenset({"cycle", "dangling", "added", "removed", "changed"})

DETAIL_COLOUR = "#455a64"
BADGE_COLOUR = "#6a1b9a"
#: Badge lines starting with ✖ (a problem code) are drawn in this colour.
PROBLEM_COLOUR = "#b71c1c"


def node_look(kind: str, status: str | None) -> Look:
    """The colours of a node: its status if it has one, else its kind."""
    if status in STATUS:
        return STATUS[status]
    if kind == "missing":
        return MISSING
    if kind == "gate":
        return GATE
    if kind == "summary":
        return SUMMARY
    return PLAIN


def legend_look(key: str) -> tuple[Look, str]:
    """A legend entry's look and the node kind it is drawn as."""
    if key in STATUS:
        return STATUS[key], "artifact"
    if key == "next":
        return PLAIN, "artifact"
    if key in ("missing", "dangling"):
        return MISSING, "artifact"
    if key == "cycle":
        return Look("#ffffff", "#d50000", font="#d50000"), "artifact"
    if key in SHAPE:
        return node_look(key, None), key
    return PLAIN, "artifact"
