"""`diff_schemas(a, b)`: two artifact schemas (SPEC A) compared, and what it does to changes.

Sections of the result:

* ``artifact``: added, removed, renamed (same `generates` and `requires`), and the
  fields that changed: generates, requires, template, description, instruction,
  role (id), role_name, question, done_when;
* ``edge``: `requires` and `apply.requires` arrows added or removed;
* ``apply``: the gate's requires, tracks, instruction;
* ``order``: artifacts whose build step (topological depth, 1 = first) moved.

`consequences` evaluates every change given (or every change of `project` recorded
with schema `a`) under both schemas with the same code as `crewbook status`
(`compute_status`): an artifact that was ready and is now blocked, one no longer
generated (its files belong to no artifact of `b`), a new artifact, the apply gate.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..artifacts.change import Change, open_change
from ..artifacts.model import ArtifactSpec
from ..artifacts.project import ProjectLike, as_project
from ..artifacts.schema import Schema, load_schema
from ..artifacts.status import ChangeStatus, compute_status
from .core import DiffEntry, EdgeKey, diff_edges, diff_records, show
from .graph import overlay
from .result import Diff

if TYPE_CHECKING:
    import pandas as pd

#: Fields compared per artifact, in the order they are reported.
ARTIFACT_FIELDS: tuple[str, ...] = (
    "generates", "requires", "template", "description", "instruction", "role", "role_name",
    "question", "done_when",
)
SchemaLike = Schema | str | Path


def artifact_record(art: ArtifactSpec) -> dict[str, Any]:
    """The fields of an artifact that a comparison looks at."""
    role = art.role
    return {
        "generates": art.generates,
        "requires": tuple(art.requires),
        "template": art.template,
        "description": art.description,
        "instruction": art.instruction,
        "role": role.id if role else None,
        "role_name": role.name.en if role else None,
        "question": role.question if role else None,
        "done_when": tuple(role.done_when) if role else (),
    }


def schema_edges(schema: Schema) -> dict[EdgeKey, dict[str, Any]]:
    """`requires` edges (required → requirer) and `apply` edges (required → ``apply``)."""
    edges: dict[EdgeKey, dict[str, Any]] = {}
    for art in schema.artifacts:
        for dep in art.requires:
            edges[(dep, art.id, "requires")] = {}
    for dep in schema.model.apply.requires:
        edges[(dep, "apply", "apply")] = {}
    return edges


@dataclass(frozen=True)
class Consequence:
    """What the new schema does to one artifact (or the apply gate) of one change.

    what: ``blocked`` (was ready or done, now waits), ``unblocked``, ``new`` (an
    artifact the change did not have), ``dropped`` (no longer in the schema, nothing
    written), ``no_longer_generated`` (its files belong to no artifact of the new
    schema), ``status`` (any other status change), ``apply`` (the gate's state).
    """

    change: str
    artifact: str
    what: str
    before: str | None
    after: str | None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """`{"change", "artifact", "what", "before", "after", "note"}`."""
        return {"change": self.change, "artifact": self.artifact, "what": self.what,
                "before": self.before, "after": self.after, "note": self.note or None}

    def __str__(self) -> str:
        text = (f"{self.change}: {self.artifact} {self.what} "
                f"({show(self.before)} → {show(self.after)})")
        return text + (f": {self.note}" if self.note else "")


@dataclass(frozen=True, eq=False, repr=False)
class SchemaDiff(Diff):
    """Two schemas compared (`diff_schemas`); `consequences` for existing changes."""

    kind: ClassVar[str] = "schema"

    schema_a: Schema | None = None
    schema_b: Schema | None = None
    renames: tuple[tuple[str, str], ...] = ()
    consequences: tuple[Consequence, ...] = ()

    def consequences_frame(self) -> pd.DataFrame:
        """One row per consequence: change, artifact, what (category), before, after
        (categories of statuses), note."""
        import pandas as pd

        cols = ["change", "artifact", "what", "before", "after", "note"]
        df = pd.DataFrame([c.to_dict() for c in self.consequences], columns=cols)
        return df.astype({"change": "string", "artifact": "string", "what": "category",
                          "before": "category", "after": "category", "note": "string"})

    def frames(self) -> dict[str, pd.DataFrame]:
        """`changes` (every difference) and `consequences` (for existing changes)."""
        return {"changes": self.frame(), "consequences": self.consequences_frame()}

    def extra_dict(self) -> dict[str, Any]:
        order = {
            "a": self.schema_a.order if self.schema_a else [],
            "b": self.schema_b.order if self.schema_b else [],
        }
        return {"renames": {old: new for old, new in self.renames}, "order": order,
                "consequences": [c.to_dict() for c in self.consequences]}

    def extra_lines(self) -> list[str]:
        lines = []
        if self.schema_a is not None and self.schema_b is not None and \
                self.schema_a.chain != self.schema_b.chain:
            lines.append(f"  build order: {self.schema_a.chain}  ⇒  {self.schema_b.chain}")
        if self.consequences:
            lines.append("  consequences for existing changes:")
            lines += [f"    {c}" for c in self.consequences]
        return lines

    def extra_html(self) -> str:
        if not self.consequences:
            return ""
        rows = "".join(
            f"<tr><td>{html.escape(c.change)}</td><td><b>{html.escape(c.artifact)}</b></td>"
            f"<td>{html.escape(c.what)}</td><td>{html.escape(show(c.before))}</td>"
            f"<td>{html.escape(show(c.after))}</td><td>{html.escape(c.note)}</td></tr>"
            for c in self.consequences)
        return ("<p><b>Consequences for existing changes</b></p><table><thead><tr>"
                "<th>change</th><th>artifact</th><th>what</th><th>before</th><th>after</th>"
                f"<th>note</th></tr></thead><tbody>{rows}</tbody></table>")


def _load(schema: SchemaLike) -> Schema:
    return schema if isinstance(schema, Schema) else load_schema(schema)


def diff_schemas(
    a: SchemaLike,
    b: SchemaLike,
    *,
    changes: Iterable[Change | str | Path] | None = None,
    project: ProjectLike = None,
    labels: tuple[str, str] | None = None,
) -> SchemaDiff:
    """Compare schema `a` (before) with `b` (after): a `SchemaDiff`.

    `a` and `b` are `Schema` objects, schema folders or `schema.yaml` files.
    Consequences are computed for `changes` (names or folders, in `project`), or, when
    only `project` is given, for every change of it recorded with schema `a`'s name.
    `labels` names the two sides in text and drawings (default: the schema names).
    """
    sa, sb = _load(a), _load(b)
    label_a, label_b = labels or (sa.name, sb.name)
    if labels is None and label_a == label_b:
        label_a, label_b = f"{sa.name} (a)", f"{sb.name} (b)"
    records = diff_records({x.id: artifact_record(x) for x in sa.artifacts},
                           {x.id: artifact_record(x) for x in sb.artifacts},
                           signature=("generates", "requires"), refs=("requires",))
    renames = records.renames
    edges = diff_edges(schema_edges(sa), schema_edges(sb), renames)
    entries = records.entries("artifact")
    entries += edges.entries("edge")
    entries += _apply_entries(sa, sb, renames)
    entries += _order_entries(sa, sb, renames)
    consequences: list[Consequence] = []
    for change in _changes(changes, project, sa.name):
        consequences += change_consequences(change, sa, sb, renames)
    changed_ids: dict[str, list[str]] = {k: list(v) for k, v in records.changed.items()}
    if any(e.section == "apply" for e in entries):
        changed_ids["apply:gate"] = [e.field or "" for e in entries if e.section == "apply"]
    drawing = overlay(sa.graph_model(), sb.graph_model(), renames=renames, changed=changed_ids,
                      name=f"{sa.name}-diff", title=f"schema {label_a} → {label_b}")
    return SchemaDiff(label_a, label_b, tuple(entries), drawing, sa, sb,
                      records.renamed, tuple(consequences))


def _apply_entries(sa: Schema, sb: Schema, renames: dict[str, str]) -> list[DiffEntry]:
    before, after = sa.model.apply, sb.model.apply
    out = []
    old_requires = tuple(renames.get(r, r) for r in before.requires)
    if set(old_requires) != set(after.requires):
        out.append(DiffEntry("apply", "changed", "apply", "requires", tuple(before.requires),
                             tuple(after.requires)))
    for name in ("tracks", "instruction"):
        if getattr(before, name) != getattr(after, name):
            out.append(DiffEntry("apply", "changed", "apply", name, getattr(before, name),
                                 getattr(after, name)))
    return out


def _order_entries(sa: Schema, sb: Schema, renames: dict[str, str]) -> list[DiffEntry]:
    out = []
    depth_a = {renames.get(k, k): v for k, v in sa.depth.items()}
    for art_id in sb.order:
        if art_id in depth_a and depth_a[art_id] != sb.depth[art_id]:
            before, after = depth_a[art_id] + 1, sb.depth[art_id] + 1
            out.append(DiffEntry("order", "moved", art_id, "step", before, after,
                                 "built later" if after > before else "built earlier"))
    return out


def _changes(changes: Iterable[Change | str | Path] | None, project: ProjectLike,
             schema_name: str) -> list[Change]:
    if changes is not None:
        proj = as_project(project) if project is not None else None
        return [c if isinstance(c, Change) else open_change(c, proj) for c in changes]
    if project is None:
        return []
    return [c for c in as_project(project).changes() if c.schema_name == schema_name]


def change_consequences(change: Change, sa: Schema, sb: Schema,
                        renames: dict[str, str] | None = None) -> list[Consequence]:
    """What moving `change` from schema `sa` to `sb` does, artifact by artifact."""
    ren = renames or {}
    before = compute_status(change, sa)
    after = compute_status(change, sb)
    return consequences_of(change.name, before, after, ren)


def consequences_of(name: str, before: ChangeStatus, after: ChangeStatus,
                    renames: dict[str, str]) -> list[Consequence]:
    """The differences between two statuses of one change (`renames`: old id → new id)."""
    out: list[Consequence] = []
    old = {renames.get(s.id, s.id): s for s in before.artifacts}
    new = {s.id: s for s in after.artifacts}
    claimed = {p for s in after.artifacts for p in s.paths}
    for art_id, was in old.items():
        if art_id in new:
            continue
        lost = [p for p in was.paths if p not in claimed]
        if lost:
            out.append(Consequence(name, art_id, "no_longer_generated", was.status, None,
                                   f"{', '.join(lost)} belong to no artifact of the new "
                                   "schema"))
        else:
            out.append(Consequence(name, art_id, "dropped", was.status, None,
                                   "no longer in the schema"))
    for art_id, now in new.items():
        was_state = old.get(art_id)
        if was_state is None:
            note = (f"waits for {', '.join(now.missing)}" if now.missing
                    else f"{len(now.paths)} file(s) already there" if now.paths
                    else "can be written now")
            out.append(Consequence(name, art_id, "new", None, now.status, note))
            continue
        lost = [p for p in was_state.paths if p not in claimed]
        if lost:  # its `generates` changed: files written for it now belong to nothing
            out.append(Consequence(name, art_id, "no_longer_generated", was_state.status,
                                   now.status, f"{', '.join(lost)} belong to no artifact of "
                                   "the new schema"))
            continue
        if was_state.status == now.status:
            continue
        if now.status == "blocked":
            what, note = "blocked", f"waits for {', '.join(now.missing)}"
        elif was_state.status == "blocked":
            what, note = "unblocked", ""
        else:
            what, note = "status", ""
        out.append(Consequence(name, art_id, what, was_state.status, now.status, note))
    if before.apply.state != after.apply.state:
        note = f"waits for {', '.join(after.apply.missing)}" if after.apply.missing else ""
        out.append(Consequence(name, "apply", "apply", before.apply.state, after.apply.state,
                               note))
    return out
