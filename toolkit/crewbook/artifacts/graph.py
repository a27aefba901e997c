"""Graph models and matrices of SPEC A: a schema, a change's status, a broken schema, a listing.

What a drawing shows: artifacts as nodes (a glob output is a 3-D box, its path on the
second line), `requires` as edges from the required artifact to the one that needs
it (so dependencies read left to right, by topological rank), the `apply` gate as a
hexagon fed by `apply.requires`, role badges; for a change, status colours with a
legend and the next artifact emphasised; for a broken schema, the artifacts a problem
points at in red, cycle edges red, and dangling `requires` to a dashed "missing" node.

Imported only by the methods that draw (`Schema.graph_model()` ...), never at import.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from ..draw.matrix import Matrix
from ..draw.model import Edge, GraphModel, Node
from ..errors import Problem, SchemaError
from ..models import is_glob
from ..sources import read_yaml
from .checks import find_cycles
from .ranks import ranks

if TYPE_CHECKING:

    from ..report import ValidationReport
    from .registry import SchemaListing
    from .schema import Schema
    from .status import ChangeStatus

#: Node id of the apply gate (artifact ids are kebab-case, so they never contain ':').
GATE_ID = "apply:gate"
#: Legend of a change drawing.
STATUS_LEGEND: tuple[tuple[str, str], ...] = (
    ("done", "done"), ("ready", "ready"), ("blocked", "blocked"), ("skipped", "skipped"),
    ("next", "next to write"),
)
_APPLY_STATUS = {"blocked": "blocked", "ready": "ready", "in_progress": "in_progress",
                 "complete": "complete"}
_ARTIFACT_KEY = re.compile(r"^artifacts\[(\d+)\]")


def folder_of(generates: str) -> str | None:
    """The folder an output lives in, up to the first glob part (``specs/**/*.md`` → ``specs``)."""
    parts: list[str] = []
    for part in PurePosixPath(generates).parts[:-1]:
        if is_glob(part):
            break
        parts.append(part)
    return "/".join(parts) or None


def _gate_rank(rank: Mapping[str, int | None], deps: Sequence[str]) -> int | None:
    known = [r for d in deps if (r := rank.get(d)) is not None]
    return max(known) + 1 if known else None


def schema_graph(schema: Schema, status: ChangeStatus | None = None) -> GraphModel:
    """The drawing of a valid schema; with `status`, coloured by where the change stands."""
    rank = ranks({a.id: a.requires for a in schema.artifacts})
    states = {s.id: s for s in status.artifacts} if status else {}
    nxt = status.next if status else None
    if status is None:
        title = f"schema {schema.name} ({schema.source})"
    else:
        title = (f"change {status.change} · schema {schema.name}"
                 + (f" · next: {nxt}" if nxt else ""))
    model = GraphModel(schema.name if status is None else f"{status.change}",
                       title=title, legend=STATUS_LEGEND if status else ())
    for art in schema.artifacts:
        state = states.get(art.id)
        badge = [f"role: {art.role.name.en}"] if art.role else []
        if art.id == nxt:
            badge.append("next")
        detail = art.generates
        if state is not None and len(state.paths) > 1:
            detail += f" ({len(state.paths)} files)"
        model.add_node(Node(
            art.id, kind="collection" if is_glob(art.generates) else "artifact",
            status=state.status if state else None, group=folder_of(art.generates),
            detail=detail, badge="\n".join(badge) or None, rank=rank[art.id],
            emphasis=art.id == nxt, tooltip=art.description,
        ))
        for dep in art.requires:
            model.add_edge(Edge(dep, art.id, "requires"))
    apply = schema.model.apply
    detail = f"tracks {apply.tracks}"
    gate_status = None
    if status is not None:
        detail += f" · {status.apply.done}/{status.apply.total} tasks"
        gate_status = _APPLY_STATUS.get(status.apply.state)
    model.add_node(Node(GATE_ID, label="apply", kind="gate", status=gate_status, detail=detail,
                        rank=_gate_rank(rank, apply.requires), tooltip=apply.instruction))
    for dep in apply.requires:
        model.add_edge(Edge(dep, GATE_ID, "apply"))
    return model


def status_graph(status: ChangeStatus) -> GraphModel:
    """The drawing of a change: its schema coloured done / ready / blocked / skipped."""
    return schema_graph(status.schema, status)


def _str_list(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def broken_schema_graph(
    data: Any, problems: Sequence[Problem] = (), *, name: str
) -> GraphModel:
    """The drawing of a schema from its raw YAML data, valid or not.

    Artifacts a problem points at (by key path) are red with the problem codes; the
    edges of each dependency cycle are red; a `requires` naming no artifact leads from
    a dashed red "missing" node. Problems with no artifact are counted in the title.
    """
    data = data if isinstance(data, dict) else {}
    items = data.get("artifacts") if isinstance(data.get("artifacts"), list) else []
    errors = [p for p in problems if p.severity == "error"]
    by_index: dict[int, list[Problem]] = defaultdict(list)
    on_apply: list[Problem] = []
    for problem in errors:
        match = _ARTIFACT_KEY.match(problem.key or "")
        if match:
            by_index[int(match.group(1))].append(problem)
        elif (problem.key or "").startswith("apply"):
            on_apply.append(problem)
    node_of: dict[int, str] = {}
    seen: set[str] = set()
    for index, item in enumerate(items):
        art_id = item.get("id") if isinstance(item, dict) else None
        node_id = art_id if isinstance(art_id, str) and art_id else f"artifacts[{index}]"
        if node_id in seen:
            node_id = f"{node_id} (#{index + 1})"
        seen.add(node_id)
        node_of[index] = node_id
    first = {node_id: index for index, node_id in reversed(node_of.items())}
    declared = {str(items[i]["id"]) for i in node_of if isinstance(items[i], dict)
                and isinstance(items[i].get("id"), str)}
    requires = {node_of[i]: _str_list(items[i].get("requires")) if isinstance(items[i], dict)
                else [] for i in node_of}
    cycle_edges: set[tuple[str, str]] = set()
    graph = {node: [d for d in deps if d in declared and d in first]
             for node, deps in requires.items()}
    for cycle in find_cycles(graph):
        for i, node in enumerate(cycle):
            cycle_edges.add((cycle[(i + 1) % len(cycle)], node))
    rank = ranks(graph)
    orphan = len(errors) - sum(len(v) for v in by_index.values()) - len(on_apply)
    verdict = f"invalid: {len(errors)} problem{'s' if len(errors) != 1 else ''}" if errors else ""
    model = GraphModel(name, title=f"schema {name}" + (f" — {verdict}" if verdict else "")
                       + (f" ({orphan} not shown on a node)" if orphan else ""))
    missing: set[str] = set()

    def add_missing(target: str) -> str:
        node_id = f"missing:{target}"
        if target not in missing:
            missing.add(target)
            model.add_node(Node(node_id, label=target, kind="missing", detail="not declared",
                                tooltip=f"{target!r} is named in a `requires` but no artifact "
                                        "has this id"))
        return node_id

    for index, node_id in node_of.items():
        item = items[index] if isinstance(items[index], dict) else {}
        generates = item.get("generates")
        found = by_index.get(index, [])
        codes = sorted({p.code for p in found})
        model.add_node(Node(
            node_id, kind="collection" if isinstance(generates, str) and is_glob(generates)
            else "artifact", status="error" if found else None,
            group=folder_of(generates) if isinstance(generates, str) else None,
            detail=generates if isinstance(generates, str) else "no generates",
            badge="\n".join(f"✖ {c}" for c in codes) or None, rank=rank.get(node_id),
            tooltip="\n".join(f"{p.location}: {p.message}" for p in found) or None,
        ))
        for dep in requires[node_id]:
            if dep in first:
                kind = "cycle" if (dep, node_id) in cycle_edges else "requires"
                model.add_edge(Edge(dep, node_id, kind, "cycle" if kind == "cycle" else "",
                                    "bold" if kind == "cycle" else "solid"))
            else:
                model.add_edge(Edge(add_missing(dep), node_id, "dangling", style="dashed"))
    apply = data.get("apply")
    if isinstance(apply, dict):
        deps = _str_list(apply.get("requires"))
        tracks = apply.get("tracks")
        model.add_node(Node(
            GATE_ID, label="apply", kind="gate", status="error" if on_apply else None,
            detail=f"tracks {tracks}" if isinstance(tracks, str) else None,
            badge="\n".join(f"✖ {c}" for c in sorted({p.code for p in on_apply})) or None,
            rank=_gate_rank(rank, [d for d in deps if d in first]),
            tooltip="\n".join(f"{p.location}: {p.message}" for p in on_apply) or None,
        ))
        for dep in deps:
            if dep in first:
                model.add_edge(Edge(dep, GATE_ID, "apply"))
            else:
                model.add_edge(Edge(add_missing(dep), GATE_ID, "dangling", style="dashed"))
    legend = []
    if any(n.status == "error" for n in model.nodes.values()):
        legend.append(("error", "has a problem"))
    if missing:
        legend.append(("missing", "not declared"))
    if cycle_edges:
        legend.append(("cycle", "red arrows: cycle"))
    model.legend = tuple(legend)
    return model


def report_graph(report: ValidationReport) -> GraphModel | None:
    """The drawing of the schema a report is about, from its raw data (None if unreadable)."""
    file: Path | None = getattr(report, "file", None)
    if file is None:
        return None
    try:
        doc = read_yaml(file, error_cls=SchemaError)
    except SchemaError:
        return None
    return broken_schema_graph(doc.data, report.problems, name=file.parent.name)


def listing_graph(listing: SchemaListing) -> GraphModel:
    """Every schema of a listing as a box of its artifacts; unusable ones as a red node."""
    project = listing.project.root.name if listing.project else None
    model = GraphModel("schemas", title="schemas" + (f" of {project}" if project else ""))
    for schema in listing.schemas:
        model.clusters[schema.name] = f"{schema.name} ({schema.source})"
        inner = schema_graph(schema)
        for node in inner.nodes.values():
            model.add_node(Node(
                f"{schema.name}/{node.id}", label=node.text, kind=node.kind,
                group=schema.name, detail=node.detail, badge=node.badge, rank=node.rank,
                tooltip=node.tooltip,
            ))
        for edge in inner.edges:
            model.add_edge(Edge(f"{schema.name}/{edge.source}", f"{schema.name}/{edge.target}",
                                edge.kind, edge.label, edge.style))
    for warning in listing.warnings:
        if warning.code != "schema_unusable" or warning.schema in model.clusters:
            continue
        count = len(warning.error.codes) if warning.error else 0
        model.clusters[warning.schema] = f"{warning.schema} (unusable)"
        model.add_node(Node(
            f"{warning.schema}/unusable", label=warning.schema, status="error",
            group=warning.schema, tooltip=warning.message,
            detail=f"unusable: {count} problem{'s' if count != 1 else ''}" if count else "unusable",
        ))
    return model


def role_matrix(schema: Schema) -> Matrix:
    """The artifact × role table as a heatmap (`writes` / `reads`)."""
    from .frames import role_matrix_frame

    return Matrix(role_matrix_frame(schema), title=f"schema {schema.name}: artifact × role",
                  labels={2: "writes", 1: "reads"}, vmin=0, vmax=2)
