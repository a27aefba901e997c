"""The graph model every drawing goes through: nodes, edges, a legend, optional clusters.

Concepts (schemas, changes, later pipelines and loops) build a `GraphModel`; the
renderers (`dot.py`, `mermaid.py`, `render.py`) only read it. The model says *what*
things are (kind, status, emphasis); the renderers decide how they look (`style.py`),
so every drawing in crewbook shares one visual language.

Order never matters: renderers sort nodes by (rank, id) and edges by their fields,
so the same model gives byte-identical text whatever order it was built in.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from ..errors import InvalidInputError, NotFoundError, UsageError

#: Node kinds the renderers know: `artifact` (one file), `collection` (a glob: many
#: files), `gate` (a condition such as `apply`), `missing` (named but not declared),
#: `summary` (collapsed members), `stage`, `role`, `note`. Others draw as `artifact`.
NodeKind = str
#: Edge kinds: `requires`, `apply`, `cycle` (part of a dependency cycle), `dangling`
#: (to or from a `missing` node), `summary` (aggregated), `flow`, and for comparisons
#: `added`, `removed`, `changed`. Others draw as `requires`.
EdgeKind = str
EdgeStyle = Literal["solid", "dashed", "dotted", "bold"]
CollapseBy = Literal["auto", "group", "rank"]

#: Kinds that `collapse` folds into summary nodes; gates and notes always stay.
COLLAPSIBLE_KINDS = frozenset({"artifact", "collection", "missing", "stage", "role"})
#: Most summary nodes a collapse by rank makes (bands of consecutive ranks).
RANK_BANDS = 40
#: Prefix of the "+N more" stub nodes `focus` adds for neighbours it leaves out.
MORE_PREFIX = "more:"
#: DOT attributes marking the focused node (on top of `emphasis`): a double border.
FOCUS_ATTRS = (("color", "#ad1457"), ("peripheries", "2"))

Attrs = tuple[tuple[str, str], ...]


def attrs(**values: object) -> Attrs:
    """Extra DOT attributes as the sorted pairs `Node.attrs` / `Edge.attrs` hold."""
    return tuple(sorted((k, str(v)) for k, v in values.items()))


@dataclass(frozen=True)
class Node:
    """One thing in a drawing.

    id: unique in the model (any text; renderers quote or encode it).
    label: the main line (defaults to the id). detail: a smaller second line (a path).
    badge: a third line (a role). status: `done`, `ready`, `blocked`, `skipped`,
    `in_progress`, `complete`, `error`, for comparisons `added`, `removed`, `changed`,
    or None. group: the folder or cluster it
    belongs to (used by `collapse` and, when declared, drawn as a box). rank: its
    topological depth (sort order; `collapse(by="rank")`). emphasis: draw it bold
    (the next step). tooltip: hover text. attrs: raw DOT attributes, applied last.
    """

    id: str
    label: str = ""
    kind: NodeKind = "artifact"
    status: str | None = None
    group: str | None = None
    detail: str | None = None
    badge: str | None = None
    rank: int | None = None
    emphasis: bool = False
    tooltip: str | None = None
    attrs: Attrs = ()

    @property
    def text(self) -> str:
        """The main line: the label, or the id."""
        return self.label or self.id

    def sort_key(self) -> tuple[bool, int, str]:
        """Ranked nodes first, by rank, then by id."""
        return (self.rank is None, self.rank or 0, self.id)


@dataclass(frozen=True)
class Edge:
    """An arrow `source → target`; for dependencies, the source is required by the target.

    count: how many edges it stands for (after `collapse`), drawn as ``×12``.
    """

    source: str
    target: str
    kind: EdgeKind = "requires"
    label: str = ""
    style: EdgeStyle = "solid"
    attrs: Attrs = ()
    count: int = 1

    def sort_key(self) -> tuple[str, str, str, str, str, Attrs, int]:
        """Every field, so sorting is total."""
        return (self.source, self.target, self.kind, self.label, self.style, self.attrs,
                self.count)


@dataclass
class GraphModel:
    """A drawing before it is drawn: `to_dot`, `to_mermaid`, `render` turn it into text or SVG.

    name: a short id (the DOT graph name). title: shown above the drawing.
    direction: `LR` (dependencies left to right) or `TB`. legend: `(key, text)` pairs,
    where key is a status, a node kind or an edge kind. clusters: group → label, for
    the groups drawn as boxes. note: a line about what the drawing leaves out.
    rows: node ids row by row, for a left-to-right drawing folded to a cell's width
    (`crewbook.draw.layout.fit_layout` sets it; empty: `dot` places every node).
    """

    name: str
    title: str = ""
    direction: Literal["LR", "TB", "RL", "BT"] = "LR"
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    legend: tuple[tuple[str, str], ...] = ()
    clusters: dict[str, str] = field(default_factory=dict)
    note: str = ""
    rows: tuple[tuple[str, ...], ...] = ()

    # ---------------------------------------------------------------- build
    def add_node(self, node: Node) -> Node:
        """Add a node; an id already present is an error (ids must be unique)."""
        if node.id in self.nodes:
            raise UsageError(f"node {node.id!r} is already in graph {self.name!r}")
        self.nodes[node.id] = node
        return node

    def add_edge(self, edge: Edge) -> Edge:
        """Add an edge (its ends may be added later)."""
        self.edges.append(edge)
        return edge

    # ---------------------------------------------------------------- views
    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator[Node]:
        return iter(self.sorted_nodes())

    def sorted_nodes(self) -> list[Node]:
        """Nodes in drawing order: by rank, then id."""
        return sorted(self.nodes.values(), key=Node.sort_key)

    def sorted_edges(self) -> list[Edge]:
        """Edges in drawing order, duplicates kept."""
        return sorted(self.edges, key=Edge.sort_key)

    def _folder_keys(
        self, foldable: list[Node], limit: int, *, acyclic: bool
    ) -> dict[str, str] | None:
        """Node id → its folder cut at the shallowest depth giving 2 to `limit` folders
        (and, when `acyclic`, no cycle between folders), or None when no depth does."""
        deepest = max((len((n.group or "").split("/")) for n in foldable), default=1)
        for depth in range(1, deepest + 1):
            keys = {n.id: _top_folder(n.group, depth) for n in foldable}
            count = len(set(keys.values()))
            if count > limit:
                return None
            if count >= 2 and not (acyclic and self._folders_cycle(keys)):
                return keys
        return None

    def _folders_cycle(self, key_of: Mapping[str, str]) -> bool:
        """Whether the edges between folders form a cycle (the picture would be a knot)."""
        after: dict[str, set[str]] = defaultdict(set)
        for e in self.edges:
            a, b = key_of.get(e.source), key_of.get(e.target)
            if a is not None and b is not None and a != b:
                after[a].add(b)
        waiting = Counter(b for targets in after.values() for b in targets)
        ready = [k for k in set(key_of.values()) if not waiting[k]]
        seen = 0
        while ready:
            key = ready.pop()
            seen += 1
            for nxt in after.get(key, ()):
                waiting[nxt] -= 1
                if not waiting[nxt]:
                    ready.append(nxt)
        return seen < len(set(key_of.values()))

    def dangling_ends(self) -> list[str]:
        """Edge ends that name no node (a renderer would invent a plain node for them)."""
        return sorted({end for e in self.edges for end in (e.source, e.target)} - set(self.nodes))

    def statuses(self) -> Counter[str]:
        """How many nodes have each status."""
        return Counter(n.status for n in self.nodes.values() if n.status)

    def __repr__(self) -> str:
        return (f"<GraphModel {self.name!r}: {len(self.nodes)} nodes, {len(self.edges)} edges"
                + (f", {'focused' if self.note.startswith('around ') else 'collapsed'} "
                   f"({self.note})" if self.note else "") + ">")

    # ----------------------------------------------------------------- focus
    def focus(self, node_id: str, depth: int = 1) -> GraphModel:
        """The neighbourhood of `node_id`: the nodes within `depth` edges of it (either
        direction), every edge among them, the node itself marked (bold, double border),
        and for each kept node whose other neighbours are left out a ``+N more`` stub.

        Like transitions' `show_roi`: a readable part of a big drawing. An unknown id
        raises `NotFoundError` naming it and the closest ids.
        """
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
            raise UsageError(f"depth must be a whole number of edges (0 or more), not {depth!r}")
        if node_id not in self.nodes:
            raise NotFoundError(self._unknown_node(node_id))
        neighbours: dict[str, set[str]] = defaultdict(set)
        for e in self.edges:
            if e.source != e.target:
                neighbours[e.source].add(e.target)
                neighbours[e.target].add(e.source)
        kept = {node_id}
        frontier = [node_id]
        for _ in range(depth):
            nxt = sorted({n for f in frontier for n in neighbours[f]} - kept)
            kept.update(nxt)
            frontier = nxt
        out = GraphModel(self.name, self.title, self.direction, legend=self.legend,
                         clusters={g: label for g, label in self.clusters.items()
                                   if any(self.nodes[k].group == g
                                          for k in kept if k in self.nodes)})
        for key in sorted(kept):
            node = self.nodes.get(key)
            if node is None:  # an edge end naming no node: renderers draw it plain
                continue
            if key == node_id:
                node = replace(node, emphasis=True, attrs=(*node.attrs, *FOCUS_ATTRS))
            out.add_node(node)
        cut_in: Counter[str] = Counter()
        cut_out: Counter[str] = Counter()
        for e in self.edges:
            if e.source in kept and e.target in kept:
                out.add_edge(e)
            elif e.target in kept:
                cut_in[e.target] += 1
            elif e.source in kept:
                cut_out[e.source] += 1
        for key, count in sorted(cut_in.items()):
            stub = out.add_node(_more_node(f"{MORE_PREFIX}{key}:in", count, "in"))
            out.add_edge(Edge(stub.id, key, "summary", style="dashed"))
        for key, count in sorted(cut_out.items()):
            stub = out.add_node(_more_node(f"{MORE_PREFIX}{key}:out", count, "out"))
            out.add_edge(Edge(key, stub.id, "summary", style="dashed"))
        shown = sum(1 for k in kept if k in self.nodes)
        left = len(self.nodes) - shown
        out.note = (f"around {node_id!r} within {depth} {'edge' if depth == 1 else 'edges'}: "
                    f"{shown:,} of {len(self.nodes):,} nodes"
                    + (f", {left:,} left out" if left else ""))
        return out

    def _unknown_node(self, node_id: str) -> str:
        close = closest(node_id, self.nodes)
        hint = (f"; closest: {', '.join(repr(c) for c in close)}" if close
                else f"; its nodes include {', '.join(repr(n.id) for n in self.sorted_nodes()[:5])}"
                if self.nodes else "; it has no nodes")
        return (f"drawing {self.name!r} has no node {node_id!r}{hint}; focus on one of its node "
                "ids (see .graph_model().nodes)")

    # -------------------------------------------------------------- collapse
    def collapse(
        self,
        *,
        by: CollapseBy = "auto",
        expand: Iterable[str] = (),
        threshold: int | None = None,
    ) -> GraphModel:
        """A smaller model where members of a folder (or of a band of ranks) become one
        summary node, with edges between summaries counted (``×12``).

        by: `group` (folders, cut at the shallowest depth that gives at least two),
        `rank` (at most `RANK_BANDS` bands of consecutive topological ranks) or `auto`
        (folders when 2 to `threshold` of them depend on each other without a cycle,
        else ranks).
        expand: summary keys to keep as individual nodes (a group name such as
        ``area-03`` or a rank band such as ``rank 10-19``, as the summary node shows);
        a key that names no summary raises `InvalidInputError` listing the keys.
        threshold: target size (default `options.collapse_threshold`).
        """
        from .settings import options

        limit = threshold if threshold is not None else options.collapse_threshold
        keep = set(expand)
        foldable = [n for n in self.nodes.values() if n.kind in COLLAPSIBLE_KINDS]
        key_of: dict[str, str] | None = None
        mode = "rank" if by == "rank" else "group"
        if by in ("group", "auto"):
            key_of = self._folder_keys(foldable, limit, acyclic=by == "auto")
            if key_of is None and by == "auto":
                mode = "rank"
            elif key_of is None:
                key_of = {n.id: _top_folder(n.group, 1) for n in foldable}
        if key_of is None:
            key_of = _rank_keys(foldable, max(1, min(RANK_BANDS, limit)))
        unknown = sorted(keep - set(key_of.values()))
        if unknown:
            known = sorted(set(key_of.values()))
            shown = ", ".join(repr(k) for k in known[:20]) + (" …" if len(known) > 20 else "")
            raise InvalidInputError(
                f"nothing to expand named {', '.join(repr(k) for k in unknown)}; this drawing "
                f"collapses by {'folder' if mode == 'group' else 'rank'} into: {shown or 'nothing'}"
            )
        key_of = {k: v for k, v in key_of.items() if v not in keep}
        members: dict[str, list[Node]] = defaultdict(list)
        for node_id, key in key_of.items():
            members[key].append(self.nodes[node_id])

        out = GraphModel(self.name, self.title, self.direction, legend=self.legend,
                         clusters=dict(self.clusters))
        summary_id = {key: f"{mode}:{key}" for key in members}
        expanded = {n.id: k for n in foldable
                    if n.id not in key_of and (k := _key_of_kept(n, keep, mode)) is not None}
        for key in sorted(set(expanded.values())):  # an expanded folder: drawn as a box
            out.clusters.setdefault(f"{key} (expanded)", f"{key}/ (expanded)")
        for node in self.nodes.values():
            if node.id in expanded:
                out.add_node(replace(node, group=f"{expanded[node.id]} (expanded)"))
            elif node.id not in key_of:
                out.add_node(node)
        internal: dict[str, Counter[str]] = defaultdict(Counter)
        counted: Counter[tuple[str, str, str, str, EdgeStyle]] = Counter()
        for edge in self.edges:
            src = summary_id[key_of[edge.source]] if edge.source in key_of else edge.source
            dst = summary_id[key_of[edge.target]] if edge.target in key_of else edge.target
            if src == dst and edge.source in key_of:
                internal[key_of[edge.source]][edge.kind] += 1
                continue
            counted[(src, dst, edge.kind, edge.label, edge.style)] += edge.count
        for key, nodes in members.items():
            out.add_node(_summary_node(summary_id[key], key, nodes, internal[key], mode))
        for (src, dst, kind, label, style), count in counted.items():
            out.add_edge(Edge(src, dst, kind, label, style, count=count))
        kept = len(self.nodes) - len(key_of)
        out.note = (f"{len(key_of):,} of {len(self.nodes):,} nodes collapsed into "
                    f"{len(members):,} {'folders' if mode == 'group' else 'rank bands'}"
                    + (f", {kept:,} shown individually" if kept else ""))
        return out


def closest(word: str, names: Iterable[str], n: int = 5) -> list[str]:
    """The `n` names nearest `word` by edit distance (case aside: one typo, such as
    ``a45O`` for ``a450``, is one edit), at most 40 % of the longer one's length away;
    nearest first, ties by name. Standard library only."""
    want = word.lower()
    scored = []
    for name in names:
        other = name.lower()
        limit = max(1, int(0.4 * max(len(want), len(other))))
        if abs(len(other) - len(want)) > limit:
            continue
        distance = edit_distance(want, other, limit)
        if distance <= limit:
            scored.append((distance, name))
    return [name for _, name in sorted(scored)[:n]]


def edit_distance(a: str, b: str, limit: int | None = None) -> int:
    """Levenshtein distance between `a` and `b` (inserts, deletes and substitutions);
    stops early with ``limit + 1`` once every path is longer than `limit`."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        current = [i]
        for j, other in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (char != other)))
        if limit is not None and min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def _more_node(node_id: str, count: int, way: str) -> Node:
    text = f"+{count:,} more"
    tip = (f"{count:,} {'edge' if count == 1 else 'edges'} "
           f"{'into' if way == 'in' else 'out of'} this node from nodes left out")
    return Node(node_id, label=text, kind="note", tooltip=tip)


def _key_of_kept(node: Node, keep: set[str], mode: str) -> str | None:
    """The expanded folder `node` belongs to (by folder only: rank bands draw no box)."""
    if mode != "group":
        return None
    group = node.group or "."
    for key in keep:
        if group == key or group.startswith(key + "/"):
            return key
    return None


def _top_folder(group: str | None, depth: int) -> str:
    return "/".join((group or ".").split("/")[:depth])


def _rank_keys(foldable: list[Node], bands: int) -> dict[str, str]:
    ranks = [n.rank for n in foldable if n.rank is not None]
    top = max(ranks, default=0) + 1
    width = math.ceil(top / min(bands, top))
    keys = {}
    for n in foldable:
        if n.rank is None:
            keys[n.id] = "unranked"
            continue
        low = (n.rank // width) * width
        high = min(low + width, top) - 1
        keys[n.id] = f"rank {low}" if low == high else f"rank {low}-{high}"
    return keys


def _summary_node(
    node_id: str, key: str, nodes: list[Node], internal: Mapping[str, int], mode: str
) -> Node:
    statuses = Counter(n.status for n in nodes if n.status)
    if len(statuses) == 1 and sum(statuses.values()) == len(nodes):
        status: str | None = next(iter(statuses))
    elif "error" in statuses:
        status = "error"
    else:
        status = None
    noun = "item" if len(nodes) == 1 else "items"
    if all(n.kind in ("artifact", "collection") for n in nodes):
        noun = "artifact" if len(nodes) == 1 else "artifacts"
    detail = f"{len(nodes):,} {noun}"
    if statuses and status is None:
        detail += ": " + ", ".join(f"{c} {s}" for s, c in sorted(statuses.items()))
    if internal.get("cycle"):
        detail += " · cycle inside"
    ranks = [n.rank for n in nodes if n.rank is not None]
    ordered = sorted(nodes, key=Node.sort_key)
    shown = ", ".join(n.id for n in ordered[:8]) + (" …" if len(ordered) > 8 else "")
    label = key if mode != "group" else "(top folder)" if key == "." else f"{key}/"
    return Node(node_id, label=label, kind="summary", status=status, group=key,
                detail=detail, rank=min(ranks) if ranks else None,
                emphasis=any(n.emphasis for n in nodes), tooltip=shown)
