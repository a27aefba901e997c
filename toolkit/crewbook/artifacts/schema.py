"""A loaded, valid schema (`Schema`): loading and checking schema folders."""

from __future__ import annotations

import graphlib
import heapq
import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..core.gc_pause import paused_gc
from ..draw.cards import short_list
from ..draw.display import Drawable
from ..errors import (
    ArtifactNotFoundError,
    Problem,
    SchemaError,
    did_you_mean,
    problems_html,
)
from ..models import contained
from ..report import ValidationReport
from ..sources import MAX_TEXT_BYTES, read_text, read_yaml
from .checks import check_schema
from .frames import SchemaFrames
from .model import ArtifactSpec, SchemaFile

if TYPE_CHECKING:

    from ..draw.matrix import Matrix
    from ..draw.model import GraphModel

Source = Literal["project", "built-in", "file"]


@dataclass(frozen=True, eq=False)
class Schema(Drawable):
    """A valid artifact schema: its model, where it came from, and views of it.

    Drawing (from `Drawable`): `dot()`, `mermaid()`, `graph()`, `svg()`, `save(path)`.
    """

    name: str
    source: Source
    folder: Path
    model: SchemaFile
    warnings: tuple[Problem, ...] = ()
    display_folder: str = field(default="", compare=False)

    # ----------------------------------------------------------------- views
    @property
    def artifacts(self) -> tuple[ArtifactSpec, ...]:
        """The artifacts in declaration order."""
        return self.model.artifacts

    @property
    def ids(self) -> list[str]:
        """Artifact ids in declaration order."""
        return [a.id for a in self.model.artifacts]

    def artifact(self, artifact_id: str) -> ArtifactSpec:
        """The artifact `artifact_id`, or an error naming the nearest one."""
        found = self._by_id.get(artifact_id)
        if found is not None:
            return found
        raise ArtifactNotFoundError(
            f"schema {self.name!r} has no artifact {artifact_id!r}"
            + (did_you_mean(artifact_id, self.ids) or f"; artifacts: {', '.join(self.ids)}")
        )

    @cached_property
    def _by_id(self) -> dict[str, ArtifactSpec]:
        return {a.id: a for a in self.model.artifacts}

    @cached_property
    def order(self) -> list[str]:
        """Artifact ids in topological order, ties broken by declaration order."""
        position = {a.id: i for i, a in enumerate(self.model.artifacts)}
        sorter = graphlib.TopologicalSorter({a.id: a.requires for a in self.model.artifacts})
        sorter.prepare()
        ready: list[tuple[int, str]] = []
        done: list[str] = []
        while sorter.is_active():
            for art_id in sorter.get_ready():
                heapq.heappush(ready, (position[art_id], art_id))
            _, art_id = heapq.heappop(ready)
            done.append(art_id)
            sorter.done(art_id)
        return done

    @cached_property
    def depth(self) -> dict[str, int]:
        """Artifact id → length of its longest chain of `requires` (roots are 0)."""
        depth: dict[str, int] = {}
        requires = {a.id: a.requires for a in self.model.artifacts}
        for art_id in self.order:
            deps = requires[art_id]
            depth[art_id] = 1 + max((depth[d] for d in deps), default=-1)
        return depth

    @property
    def chain(self) -> str:
        """The artifact chain as the listing shows it: ``brief → specs → tasks``."""
        return " → ".join(self.order)

    @property
    def template_folder(self) -> Path:
        """The schema's `templates/` folder."""
        return self.folder / "templates"

    def template_text(self, artifact_id: str) -> str | None:
        """The template of an artifact, or None when it declares none."""
        name = self.artifact(artifact_id).template
        if not name:
            return None
        target = contained(self.template_folder, name)
        if target is None:
            raise SchemaError(f"template {name!r} of {artifact_id!r} is missing", [Problem(
                "missing_template", f"template {name!r} is not in the schema's templates/ "
                "folder", path=str(self.template_folder / name))])
        return read_text(target, error_cls=SchemaError, max_bytes=MAX_TEXT_BYTES)

    def roles(self) -> dict[str, ArtifactSpec]:
        """Role id → the artifact it is in charge of."""
        return {a.role.id: a for a in self.model.artifacts if a.role}

    def frames(self) -> SchemaFrames:
        """DataFrames of artifacts and of dependency edges (`source` is required by `target`).

        artifacts: id, generates, is_glob (bool), requires (list), depth (Int64),
        role_id (category), has_template (bool), order (Int64: topological rank).
        edges: source, target, kind (`requires` or `apply`; target `apply` for the gate).
        """
        from .frames import schema_frames

        return schema_frames(self)

    def graph_model(self) -> GraphModel:
        """The drawing: artifacts, `requires` edges, the apply gate, role badges."""
        from .graph import schema_graph

        return schema_graph(self)

    def role_matrix(self) -> Matrix:
        """The artifact × role table (`writes` / `reads`) as a heatmap; `.frame` for pandas."""
        from .graph import role_matrix

        return role_matrix(self)

    # --------------------------------------------------------------- display
    def __repr__(self) -> str:
        return (f"<Schema {self.name!r} ({self.source}), {len(self.artifacts)} artifacts: "
                f"{short_list(self.order, ' → ')}>")

    def _repr_html_(self) -> str:
        from ..draw.cards import head_tail, more_row

        rank = {art_id: i for i, art_id in enumerate(self.order)}
        ordered = sorted(self.artifacts, key=lambda a: rank[a.id])
        first, hidden, last = head_tail(ordered)
        rows = [self._row_html(art) for art in first]
        rows.append(more_row(hidden, 5, "artifacts"))
        rows += [self._row_html(art) for art in last]
        warn = problems_html(self.warnings) if self.warnings else ""
        desc = html.escape(self.model.description or "")
        shown = (f"the first {len(first)} and last {len(last)} of {len(ordered):,} artifacts in "
                 "topological order; all of them: <code>.frames().artifacts</code>"
                 if hidden else "")
        return (
            f"<div class='crewbook-schema'><p><b>Schema {html.escape(self.name)}</b> "
            f"<i>({self.source})</i> v{self.model.version}: {desc}</p>"
            f"<p><code>{html.escape(short_list(self.order, ' → '))}</code> → apply "
            f"(needs {html.escape(short_list(self.model.apply.requires) or 'nothing')}; "
            f"tracks <code>{html.escape(self.model.apply.tracks)}</code>)</p>"
            + (f"<p style='color:#607d8b;font-size:90%'>{shown}</p>" if shown else "")
            + "<table><thead><tr><th>artifact</th><th>generates</th><th>requires</th>"
            f"<th>role</th><th>description</th></tr></thead><tbody>{''.join(rows)}</tbody>"
            f"</table>{warn}</div>"
        )

    @staticmethod
    def _row_html(art: ArtifactSpec) -> str:
        role = html.escape(f"{art.role.name.en} ({art.role.id})") if art.role else ""
        return (f"<tr><td><b>{html.escape(art.id)}</b></td><td><code>{html.escape(art.generates)}"
                f"</code></td><td>{html.escape(', '.join(art.requires))}</td><td>{role}</td>"
                f"<td>{html.escape(art.description or '')}</td></tr>")


def schema_file(path: Path) -> Path:
    """`path` itself if a file, else `path/schema.yaml`."""
    return path / "schema.yaml" if path.is_dir() else path


def check_schema_folder(
    path: Path | str, *, name: str | None = None, display_root: Path | None = None
) -> tuple[SchemaFile | None, list[Problem]]:
    """Read and check a schema folder (or its schema.yaml): the model or None, and problems."""
    file = schema_file(Path(path))
    folder = file.parent
    shown = _display(file, display_root)
    doc = read_yaml(file, error_cls=SchemaError, display_path=shown)
    with paused_gc():  # a big schema is many acyclic objects: no collections meanwhile
        return check_schema(doc, folder, schema_name=name or folder.resolve().name)


def load_schema(
    path: Path | str,
    *,
    name: str | None = None,
    source: Source = "file",
    display_root: Path | None = None,
) -> Schema:
    """Load a schema folder or its `schema.yaml`; raise `SchemaError` listing every problem.

    The schema is named after its folder (A1), unless `name` is given.
    """
    file = schema_file(Path(path))
    folder = file.parent
    model, problems = check_schema_folder(file, name=name, display_root=display_root)
    if model is None:
        raise SchemaError(f"schema {name or folder.resolve().name!r} is invalid", problems)
    return Schema(
        name=name or folder.resolve().name,
        source=source,
        folder=folder,
        model=model,
        warnings=tuple(p for p in problems if p.severity == "warning"),
        display_folder=_display(folder, display_root),
    )


def validate_schema(path: Path | str, *, display_root: Path | None = None) -> ValidationReport:
    """Check a schema without raising: a report of every problem (read errors included)."""
    file = schema_file(Path(path))
    try:
        _, problems = check_schema_folder(file, display_root=display_root)
    except SchemaError as exc:
        problems = list(exc.problems)
    return ValidationReport(tuple(problems), subject=_display(file, display_root),
                            file=file.resolve(), drawing=_report_drawing)


def _report_drawing(report: ValidationReport) -> GraphModel | None:
    from .graph import report_graph

    return report_graph(report)


def _display(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return str(path)


def sorted_problems(problems: Sequence[Problem]) -> list[Problem]:
    """Problems by file, then line."""
    return sorted(problems, key=lambda p: (p.path or "", p.line or 0, p.column or 0))
