"""Which schemas exist: the built-in one and the project's, project first (A1, A2, A5)."""

from __future__ import annotations

import html
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.paths import kind_of, path_problem
from ..draw.display import Drawable
from ..errors import (
    InvalidInputError,
    Problem,
    SchemaError,
    SchemaNotFoundError,
    did_you_mean,
)
from ..models import KEBAB_CASE
from .project import Project, ProjectLike, project_or_none
from .schema import Schema, Source, load_schema, schema_file, validate_schema

if TYPE_CHECKING:
    import pandas as pd

    from ..draw.model import GraphModel


def builtin_folder() -> Path:
    """Where the built-in schemas are shipped."""
    return Path(str(resources.files(__package__).joinpath("builtin")))


def builtin_names() -> list[str]:
    """Names of the built-in schemas."""
    return sorted(p.name for p in builtin_folder().iterdir() if (p / "schema.yaml").is_file())


@dataclass(frozen=True)
class SchemaWarning:
    """A schema that could not be listed as is (`schema_unusable`, `schema_name_mismatch`)."""

    code: str
    schema: str
    message: str
    error: InvalidInputError | None = None

    def to_dict(self) -> dict[str, str]:
        """`{"code", "schema", "message"}` as `crewbook schemas --json` prints it."""
        return {"code": self.code, "schema": self.schema, "message": self.message}

    def __str__(self) -> str:
        return f"warning [{self.code}] {self.schema}: {self.message}"


@dataclass(frozen=True)
class SchemaListing(Drawable):
    """The usable schemas (project ones first, then built-in) and the warnings."""

    schemas: tuple[Schema, ...]
    warnings: tuple[SchemaWarning, ...]
    project: Project | None = None

    def __iter__(self) -> Iterator[Schema]:
        return iter(self.schemas)

    def graph_model(self) -> GraphModel:
        """Every schema as a box of its artifacts; unusable ones as a red node."""
        from .graph import listing_graph

        return listing_graph(self)

    def __len__(self) -> int:
        return len(self.schemas)

    def __contains__(self, name: object) -> bool:
        return any(s.name == name for s in self.schemas)

    def __getitem__(self, name: str) -> Schema:
        for schema in self.schemas:
            if schema.name == name:
                return schema
        for warning in self.warnings:
            if warning.schema == name and warning.code == "schema_unusable" and warning.error:
                raise warning.error
        names = [s.name for s in self.schemas]
        raise SchemaNotFoundError(
            f"no schema named {name!r}"
            + (did_you_mean(name, names) or f"; available: {', '.join(names)}")
        )

    @property
    def names(self) -> list[str]:
        """Names of the usable schemas."""
        return [s.name for s in self.schemas]

    def _path(self, schema: Schema) -> str:
        if schema.source == "project" and self.project:
            return self.project.relative(schema.folder)
        return f"<built-in>/{schema.name}" if schema.source == "built-in" else str(schema.folder)

    def to_dict(self) -> dict[str, Any]:
        """The shape of `crewbook schemas --json`."""
        return {
            "schemas": [
                {"name": s.name, "source": s.source, "path": self._path(s), "artifacts": s.order}
                for s in self.schemas
            ],
            "warnings": [w.to_dict() for w in self.warnings],
        }

    def frame(self) -> pd.DataFrame:
        """One row per usable schema: name, source, path, artifacts (count), chain."""
        import pandas as pd

        df = pd.DataFrame(
            [
                {
                    "name": s.name,
                    "source": s.source,
                    "path": self._path(s),
                    "artifacts": len(s.artifacts),
                    "chain": s.chain,
                }
                for s in self.schemas
            ],
            columns=["name", "source", "path", "artifacts", "chain"],
        )
        return df.astype(
            {
                "name": "string",
                "source": "category",
                "path": "string",
                "artifacts": "Int64",
                "chain": "string",
            }
        )

    def __str__(self) -> str:
        lines = ["Available schemas:"]
        for s in self.schemas:
            lines += [f"  {s.name} ({s.source})", f"    {s.chain}"]
        lines += [str(w) for w in self.warnings]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"<SchemaListing {len(self.schemas)} schemas ({', '.join(self.names)}), "
            f"{len(self.warnings)} warnings>"
        )

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td><b>{html.escape(s.name)}</b></td><td>{s.source}</td>"
            f"<td><code>{html.escape(s.chain)}</code></td></tr>"
            for s in self.schemas
        )
        warns = "".join(
            f"<li>⚠ <code>{w.code}</code> <b>{html.escape(w.schema)}</b>: "
            f"<pre style='display:inline;white-space:pre-wrap'>{html.escape(w.message)}</pre></li>"
            for w in self.warnings
        )
        return (
            "<div class='crewbook-schemas'><table><thead><tr><th>schema</th><th>source</th>"
            f"<th>artifacts</th></tr></thead><tbody>{rows}</tbody></table>"
            + (f"<ul>{warns}</ul>" if warns else "")
            + "</div>"
        )


def list_schemas(project: ProjectLike = None) -> SchemaListing:
    """Every usable schema with its source; broken ones become warnings (A5).

    With `project=None` the project is found by walking up from the current folder;
    outside any project only the built-in schemas are listed.
    """
    proj = project_or_none(project)
    schemas: list[Schema] = []
    warnings: list[SchemaWarning] = []
    seen: set[str] = set()
    if proj and proj.schemas_folder.is_dir():
        for folder in sorted(p for p in proj.schemas_folder.iterdir() if p.is_dir()):
            if folder.name.startswith("."):
                continue
            loaded = _load_listed(folder, "project", proj, warnings)
            if loaded:
                schemas.append(loaded)
            seen.add(folder.name)
    for name in builtin_names():
        if name not in seen:
            loaded = _load_listed(builtin_folder() / name, "built-in", None, warnings)
            if loaded:
                schemas.append(loaded)
    return SchemaListing(tuple(schemas), tuple(warnings), proj)


def _load_listed(
    folder: Path, source: Source, proj: Project | None, warnings: list[SchemaWarning]
) -> Schema | None:
    name = folder.name
    if not KEBAB_CASE.match(name):
        warnings.append(
            SchemaWarning(
                "schema_unusable",
                name,
                f"folder name {name!r} is not kebab-case, and a schema's name is its folder; "
                "rename the folder (lowercase letters, digits, hyphens)",
            )
        )
        return None
    if not (folder / "schema.yaml").is_file():
        warnings.append(
            SchemaWarning(
                "schema_unusable",
                name,
                f"{folder.name}/ holds no schema.yaml; add one or remove the folder",
            )
        )
        return None
    try:
        schema = load_schema(
            folder, name=name, source=source, display_root=proj.root if proj else None
        )
    except SchemaError as exc:
        warnings.append(SchemaWarning("schema_unusable", name, str(exc), exc))
        return None
    for problem in schema.warnings:
        if problem.code == "schema_name_mismatch":
            warnings.append(SchemaWarning("schema_name_mismatch", name, str(problem)))
    return schema


def get_schema(name: str, project: ProjectLike = None) -> Schema:
    """The schema `name`: the project's if it has one, else the built-in (A2).

    Only that schema is read; a broken one raises its `SchemaError`.
    """
    proj = project_or_none(project)
    why = path_problem(name) or ("it holds a '/'" if "/" in name or name in (".", "..")
                                 else None)
    if why is not None:
        raise SchemaNotFoundError(f"no schema named {name[:60]!r}: {why}, so it cannot name a "
                                  "schema folder; use a schema name such as 'spec-driven'")
    if proj and kind_of(proj.schemas_folder / name) == "folder":
        return load_schema(
            proj.schemas_folder / name, name=name, source="project", display_root=proj.root
        )
    if name in builtin_names():
        return load_schema(builtin_folder() / name, name=name, source="built-in")
    names = sorted(
        set(builtin_names())
        | {
            p.name
            for p in (
                proj.schemas_folder.iterdir() if proj and proj.schemas_folder.is_dir() else []
            )
            if p.is_dir()
        }
    )
    raise SchemaNotFoundError(
        f"no schema named {name!r}"
        + (did_you_mean(name, names) or f"; available: {', '.join(names)}")
    )


def _schema_source(folder: Path) -> tuple[Source, Path | None]:
    """("project", project root) for `_codev/schemas/<name>/`, ("built-in", None) for a
    shipped schema, else ("file", None)."""
    if folder.parent.name == "schemas" and folder.parent.parent.name == "_codev":
        return "project", folder.parent.parent.parent
    if folder.parent.resolve() == builtin_folder().resolve():
        return "built-in", None
    return "file", None


def schema_path_graph(path: Path) -> tuple[GraphModel, tuple[Problem, ...]]:
    """The drawing of the schema at `path` (a folder or its schema.yaml) and its errors.

    A valid schema draws as `Schema.graph_model()` does; a broken one from its raw data
    (`broken_schema_graph`). Raises `SchemaError` only when the file holds no YAML mapping
(unreadable, empty, malformed, or a list).
    """
    from .graph import report_graph

    file = schema_file(path)
    source, root = _schema_source(file.parent.resolve())
    report = validate_schema(file, display_root=root)
    if report.valid:
        schema = load_schema(file, source=source, display_root=root)
        return schema.graph_model(), ()
    model = report_graph(report)
    if model is None:
        raise SchemaError(f"cannot draw {report.subject}: the file holds no YAML mapping "
                          "to draw from",
                          report.errors)
    return model, tuple(report.errors)
