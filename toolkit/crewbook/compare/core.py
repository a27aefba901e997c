"""The one graph-diff core every comparison uses: records, edges, an overlay drawing, a result.

A design is compared as *records* (nodes: id → field values) and *edges*
(``(source, target, kind)`` → field values):

* `diff_records(a, b, signature=..., refs=...)`: ids added, removed, renamed and the
  fields that changed. A removed id and an added id with the same *signature* (for a
  schema artifact: the same `generates` and `requires`) and no other candidate are a
  rename. Fields listed in `refs` hold ids of the same records (`requires`): the old
  side is read through the renames found, so renaming `brief` does not also report
  every artifact that requires it as changed. Renames are found again until none is
  new, so a chain of renamed artifacts is found whole.
* `diff_edges(a, b, renames)`: edges added, removed and changed, the old side's ends
  read through the renames.
* `overlay(a, b, ...)`: one `crewbook.draw.GraphModel` holding both versions: what the
  second adds drawn green (status `added`), what it removes red and dashed (`removed`),
  what changed amber (`changed`), renames amber with a "renamed from" line.
* `DiffEntry` (one difference) and `Diff` (the result every `diff_*` returns: frames,
  text, JSON, a drawing and a rich display).

The diff is symmetric: what `diff(a, b)` adds, `diff(b, a)` removes (a hypothesis
property test checks it), and `diff(a, a)` is empty.
"""

from __future__ import annotations

import dataclasses
import html
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ..draw.display import Drawable
from ..draw.model import Edge, GraphModel, Node

if TYPE_CHECKING:
    import pandas as pd

#: Kinds of difference, in the order they are listed.
CHANGES: tuple[str, ...] = ("added", "removed", "renamed", "changed", "moved")
#: Legend of every overlay drawing.
DIFF_LEGEND: tuple[tuple[str, str], ...] = (
    ("added", "added"), ("removed", "removed"), ("changed", "changed or renamed"),
)

Record = Mapping[str, Any]
EdgeKey = tuple[str, str, str]
Signature = Callable[[Record], Hashable] | Sequence[str] | None


def jsonable(value: Any) -> Any:
    """`value` with tuples and sets as lists (sets sorted), for JSON and frames."""
    if isinstance(value, tuple | list):
        return [jsonable(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(jsonable(v) for v in value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    return value


def show(value: Any) -> str:
    """A value as one short line: lists joined by commas, None as an em dash."""
    if value is None:
        return "—"
    if isinstance(value, tuple | list | set | frozenset):
        items = sorted(value) if isinstance(value, set | frozenset) else value
        return "[" + ", ".join(show(v) for v in items) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# -- records -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordDiff:
    """How two sets of records differ.

    added / removed: ids only in the second / first. renamed: (old id, new id) pairs.
    changed: new id → field → (before, after), for records in both (renamed included).
    """

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()
    changed: Mapping[str, Mapping[str, tuple[Any, Any]]] = field(default_factory=dict)

    @property
    def renames(self) -> dict[str, str]:
        """Old id → new id."""
        return dict(self.renamed)

    @property
    def empty(self) -> bool:
        """True when both sides hold the same records."""
        return not (self.added or self.removed or self.renamed or self.changed)

    def entries(self, section: str, *, describe: Callable[[str], str] | None = None
                ) -> list[DiffEntry]:
        """One `DiffEntry` per difference, under `section` (``artifact``, ``stage``...)."""
        note = describe or (lambda _id: "")
        out = [DiffEntry(section, "added", i, None, None, None, note(i)) for i in self.added]
        out += [DiffEntry(section, "removed", i, None, None, None, note(i)) for i in self.removed]
        out += [DiffEntry(section, "renamed", new, "id", old, new) for old, new in self.renamed]
        for item in sorted(self.changed):
            for name, (before, after) in self.changed[item].items():
                out.append(DiffEntry(section, "changed", item, name, before, after))
        return out


def _signature_of(signature: Signature) -> Callable[[Record], Hashable] | None:
    if signature is None or callable(signature):
        return signature
    names = tuple(signature)
    return lambda rec: tuple(_hashable(rec.get(n)) for n in names)


def _hashable(value: Any) -> Hashable:
    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, set | frozenset):
        return frozenset(_hashable(v) for v in value)
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _hashable(v)) for k, v in value.items()))
    return value  # type: ignore[no-any-return]


def translate(record: Record, refs: Iterable[str], renames: Mapping[str, str]) -> dict[str, Any]:
    """`record` with the ids held in fields `refs` read through `renames` (old → new)."""
    out = dict(record)
    for name in refs:
        value = out.get(name)
        if isinstance(value, str):
            out[name] = renames.get(value, value)
        elif isinstance(value, list | tuple):
            out[name] = type(value)(renames.get(v, v) if isinstance(v, str) else v
                                    for v in value)
    return out


def diff_records(
    a: Mapping[str, Record],
    b: Mapping[str, Record],
    *,
    signature: Signature = None,
    refs: Sequence[str] = (),
) -> RecordDiff:
    """Records `a` (before) and `b` (after) compared: added, removed, renamed, changed.

    `signature` (field names, or a function of a record) pairs a removed id with an
    added one as a rename when exactly one of each has it; None finds no renames.
    `refs` names the fields holding ids of these same records (read through renames).
    """
    sig = _signature_of(signature)
    renames: dict[str, str] = {}
    while sig is not None:
        gone = [i for i in a if i not in b and i not in renames]
        new = [i for i in b if i not in a and i not in renames.values()]
        by_sig: dict[Hashable, tuple[list[str], list[str]]] = defaultdict(lambda: ([], []))
        for old_id in gone:
            by_sig[sig(translate(a[old_id], refs, renames))][0].append(old_id)
        for new_id in new:
            by_sig[sig(b[new_id])][1].append(new_id)
        found = {olds[0]: news[0] for olds, news in by_sig.values()
                 if len(olds) == 1 and len(news) == 1}
        if not found:
            break
        renames.update(found)
    mapped = {renames.get(i, i): translate(rec, refs, renames) for i, rec in a.items()}
    changed: dict[str, dict[str, tuple[Any, Any]]] = {}
    for new_id, after in b.items():
        before = mapped.get(new_id)
        if before is None:
            continue
        fields = {}
        for name in dict.fromkeys([*before, *after]):
            old, cur = before.get(name), after.get(name)
            if _hashable(old) != _hashable(cur):
                fields[name] = (old, cur)
        if fields:
            changed[new_id] = fields
    return RecordDiff(
        added=tuple(sorted(i for i in b if i not in mapped)),
        removed=tuple(sorted(i for i in a if i not in renames and i not in b)),
        renamed=tuple(sorted(renames.items())),
        changed=changed,
    )


# -- edges ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class EdgeDiff:
    """Edges only in the second (added), only in the first (removed, ends already read
    through the renames) and in both with other fields (changed: key → field → pair)."""

    added: tuple[EdgeKey, ...] = ()
    removed: tuple[EdgeKey, ...] = ()
    changed: Mapping[EdgeKey, Mapping[str, tuple[Any, Any]]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        """True when both sides have the same edges."""
        return not (self.added or self.removed or self.changed)

    def entries(self, section: str = "edge") -> list[DiffEntry]:
        """One `DiffEntry` per edge difference; the item is ``source → target``."""
        def name(key: EdgeKey) -> str:
            return f"{key[0]} → {key[1]}" + (f" ({key[2]})" if key[2] else "")

        out = [DiffEntry(section, "added", name(k), None, None, None) for k in self.added]
        out += [DiffEntry(section, "removed", name(k), None, None, None) for k in self.removed]
        for key in sorted(self.changed):
            for fname, (before, after) in self.changed[key].items():
                out.append(DiffEntry(section, "changed", name(key), fname, before, after))
        return out


def diff_edges(
    a: Mapping[EdgeKey, Record] | Iterable[EdgeKey],
    b: Mapping[EdgeKey, Record] | Iterable[EdgeKey],
    renames: Mapping[str, str] | None = None,
) -> EdgeDiff:
    """Edges `a` (before) and `b` (after) compared, `a`'s ends read through `renames`."""
    ren = renames or {}
    left = a if isinstance(a, Mapping) else {key: {} for key in a}
    right = b if isinstance(b, Mapping) else {key: {} for key in b}
    mapped = {(ren.get(s, s), ren.get(t, t), k): rec for (s, t, k), rec in left.items()}
    changed: dict[EdgeKey, dict[str, tuple[Any, Any]]] = {}
    for key, after in right.items():
        before = mapped.get(key)
        if before is None:
            continue
        fields = {n: (before.get(n), after.get(n)) for n in dict.fromkeys([*before, *after])
                  if _hashable(before.get(n)) != _hashable(after.get(n))}
        if fields:
            changed[key] = fields
    return EdgeDiff(
        added=tuple(sorted(k for k in right if k not in mapped)),
        removed=tuple(sorted(k for k in mapped if k not in right)),
        changed=changed,
    )


# -- graph models --------------------------------------------------------------------------


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


# -- the result ----------------------------------------------------------------------------


@dataclass(frozen=True)
class DiffEntry:
    """One difference: in `section` (``artifact``, ``edge``, ``stage``...), a `change`
    (added, removed, renamed, changed, moved) of `item`, and for a changed field its
    name, value `before` and value `after`; `note` says more in words."""

    section: str
    change: str
    item: str
    field: str | None = None
    before: Any = None
    after: Any = None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """`{"section", "change", "item", "field", "before", "after", "note"}`."""
        return {"section": self.section, "change": self.change, "item": self.item,
                "field": self.field, "before": jsonable(self.before),
                "after": jsonable(self.after), "note": self.note or None}

    def __str__(self) -> str:
        mark = {"added": "+", "removed": "-", "renamed": "~", "changed": "~", "moved": ">"}
        text = f"{mark.get(self.change, '*')} {self.section}"
        text += "" if self.item == self.section else f" {self.item}"
        if self.change == "renamed":
            text += f": renamed from {self.before}"
        elif self.field is not None:
            text += f" {self.field}: {show(self.before)} → {show(self.after)}"
        elif self.change in ("added", "removed"):
            text += f" {self.change}"
        return text + (f"  ({self.note})" if self.note else "")


@dataclass(frozen=True, eq=False)
class Diff(Drawable):
    """What two versions of a design differ in; every `diff_*` returns a subclass.

    `entries`: every difference (`frame()` for pandas, `to_dict()` for JSON, `text()`
    for terminals); `empty`: no difference; `graph_model()`: both versions in one
    drawing (added green, removed red dashed, changed amber), so `dot()`, `svg()`,
    `save()` and the notebook display come from `crewbook.draw.Drawable`.
    """

    kind: ClassVar[str] = "design"

    a: str
    b: str
    entries: tuple[DiffEntry, ...]
    drawing: GraphModel | None = field(default=None, repr=False)

    @property
    def empty(self) -> bool:
        """True when the two versions do not differ."""
        return not self.entries

    def counts(self) -> dict[str, int]:
        """How many entries of each change (added, removed, renamed, changed, moved...)."""
        out: dict[str, int] = {}
        for entry in self.entries:
            out[entry.change] = out.get(entry.change, 0) + 1
        return dict(sorted(out.items(), key=lambda kv: _change_rank(kv[0])))

    def section(self, name: str) -> list[DiffEntry]:
        """The entries of one section."""
        return [e for e in self.entries if e.section == name]

    def frame(self) -> pd.DataFrame:
        """One row per difference: section, change (categories), item, field, before,
        after (objects: lists stay lists), note."""
        import pandas as pd

        rows = [e.to_dict() for e in self.entries]
        cols = ["section", "change", "item", "field", "before", "after", "note"]
        df = pd.DataFrame(rows, columns=cols)
        return df.astype({"section": "category", "change": "category", "item": "string",
                          "field": "string", "before": object, "after": object,
                          "note": "string"})

    def frames(self) -> dict[str, pd.DataFrame]:
        """Every table of the comparison by name; `changes` is `frame()`."""
        return {"changes": self.frame()}

    def extra_dict(self) -> dict[str, Any]:
        """What a subclass adds to `to_dict()`."""
        return {}

    def to_dict(self) -> dict[str, Any]:
        """`{"kind", "a", "b", "empty", "counts", "changes": [...]}` plus the kind's own keys
        (the shape of `crewbook diff --json`)."""
        return {"kind": self.kind, "a": self.a, "b": self.b, "empty": self.empty,
                "counts": self.counts(), "changes": [e.to_dict() for e in self.entries],
                **self.extra_dict()}

    def extra_lines(self) -> list[str]:
        """What a subclass adds to `text()` after the entries."""
        return []

    def headline(self) -> str:
        """One line: what was compared and how many differences."""
        if self.empty:
            return f"{self.kind} {self.a} → {self.b}: no differences"
        counts = ", ".join(f"{n} {c}" for c, n in self.counts().items())
        return f"{self.kind} {self.a} → {self.b}: {counts}"

    def text(self) -> str:
        """The comparison for a terminal: a headline, then the entries by section."""
        lines = [self.headline()]
        current = None
        for entry in self.entries:
            if entry.section != current:
                current = entry.section
                lines.append(f"  {current}:")
            lines.append(f"    {entry}")
        lines += self.extra_lines()
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        counts = ", ".join(f"{n} {c}" for c, n in self.counts().items()) or "no differences"
        return f"<{type(self).__name__} {self.a!r} → {self.b!r}: {counts}>"

    def graph_model(self) -> GraphModel:
        """Both versions in one drawing: added green, removed red dashed, changed amber."""
        if self.drawing is None:
            return GraphModel(f"{self.kind}-diff", title=f"{self.kind} {self.a} → {self.b}",
                              legend=DIFF_LEGEND)
        return self.drawing

    def extra_html(self) -> str:
        """What a subclass adds to the notebook display after the table."""
        return ""

    def _repr_html_(self) -> str:
        head = f"<p><b>{html.escape(self.headline())}</b></p>"
        if self.empty:
            return f"<div class='crewbook-diff'>{head}{self.extra_html()}</div>"
        colour = {"added": "#2e7d32", "removed": "#c62828", "renamed": "#ff8f00",
                  "changed": "#ff8f00", "moved": "#1565c0"}
        rows = "".join(
            f"<tr><td>{html.escape(e.section)}</td>"
            f"<td style='color:{colour.get(e.change, '#212121')}'>{html.escape(e.change)}</td>"
            f"<td><b>{html.escape(e.item)}</b></td><td>{html.escape(e.field or '')}</td>"
            f"<td><code>{html.escape(show(e.before)) if e.field or e.before else ''}</code></td>"
            f"<td><code>{html.escape(show(e.after)) if e.field or e.after else ''}</code></td>"
            f"<td>{html.escape(e.note)}</td></tr>"
            for e in self.entries
        )
        table = ("<table><thead><tr><th>section</th><th>change</th><th>item</th><th>field</th>"
                 "<th>before</th><th>after</th><th>note</th></tr></thead>"
                 f"<tbody>{rows}</tbody></table>")
        return f"<div class='crewbook-diff'>{head}{table}{self.extra_html()}</div>"


def _change_rank(change: str) -> tuple[int, str]:
    return (CHANGES.index(change) if change in CHANGES else len(CHANGES), change)
