"""The DataFrames of SPEC A: a schema's artifacts and edges, a change's status and tasks,
and the artifact × role table. Columns are documented and typed (string, category,
Int64, bool), so they group and filter without cleaning. pandas loads on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ..models import is_glob

if TYPE_CHECKING:
    import pandas as pd

    from .schema import Schema
    from .status import ChangeStatus


class SchemaFrames(NamedTuple):
    """`Schema.frames()`: one row per artifact, one per dependency edge."""

    artifacts: pd.DataFrame
    edges: pd.DataFrame


def schema_frames(schema: Schema) -> SchemaFrames:
    """`Schema.frames()`: the artifacts and the dependency edges of a schema."""
    import pandas as pd

    rank = {art_id: i for i, art_id in enumerate(schema.order)}
    arts = pd.DataFrame(
        {
            "id": pd.Series(schema.ids, dtype="string"),
            "generates": pd.Series([a.generates for a in schema.artifacts], dtype="string"),
            "is_glob": pd.Series([is_glob(a.generates) for a in schema.artifacts], dtype=bool),
            "requires": pd.Series([list(a.requires) for a in schema.artifacts], dtype=object),
            "depth": pd.Series([schema.depth[a.id] for a in schema.artifacts], dtype="Int64"),
            "role_id": pd.Series(
                [a.role.id if a.role else None for a in schema.artifacts], dtype="category"
            ),
            "has_template": pd.Series(
                [a.template is not None for a in schema.artifacts], dtype=bool
            ),
            "order": pd.Series([rank[a.id] for a in schema.artifacts], dtype="Int64"),
        }
    )
    rows = [(dep, a.id, "requires") for a in schema.artifacts for dep in a.requires]
    rows += [(dep, "apply", "apply") for dep in schema.model.apply.requires]
    edges = pd.DataFrame(rows, columns=["source", "target", "kind"]).astype(
        {"source": "string", "target": "string", "kind": "category"}
    )
    return SchemaFrames(arts, edges)


def status_frame(status: ChangeStatus) -> pd.DataFrame:
    """One row per artifact, in dependency order: id, status (category), missing,
    paths (lists), generates, role_id, n_files (Int64)."""
    import pandas as pd

    from .model import STATUS_ORDER

    df = pd.DataFrame(
        {
            "id": pd.Series([a.id for a in status.artifacts], dtype="string"),
            "status": pd.Categorical(
                [a.status for a in status.artifacts], categories=STATUS_ORDER
            ),
            "missing": pd.Series([list(a.missing) for a in status.artifacts], dtype=object),
            "paths": pd.Series([list(a.paths) for a in status.artifacts], dtype=object),
            "generates": pd.Series([a.generates for a in status.artifacts], dtype="string"),
            "role_id": pd.Series([a.role_id for a in status.artifacts], dtype="category"),
            "n_files": pd.Series([len(a.paths) for a in status.artifacts], dtype="Int64"),
        }
    )
    return df


def tasks_frame(status: ChangeStatus) -> pd.DataFrame:
    """The checklist of the `apply.tracks` file: index, id, text, done, section, line."""
    import pandas as pd

    cols = ["index", "id", "text", "done", "section", "line"]
    df = pd.DataFrame([{c: getattr(t, c) for c in cols} for t in status.tasks], columns=cols)
    return df.astype(
        {
            "index": "Int64",
            "id": "string",
            "text": "string",
            "done": bool,
            "section": "string",
            "line": "Int64",
        }
    )


def role_matrix_frame(schema: Schema) -> pd.DataFrame:
    """Artifact × role: 2 where the role writes the artifact, 1 where it reads it (a
    `requires` of its artifact), <NA> elsewhere. Rows in dependency order (Int64)."""
    import pandas as pd

    from .ranks import ranks

    rank = ranks({a.id: a.requires for a in schema.artifacts})
    position = {a.id: i for i, a in enumerate(schema.artifacts)}
    order = sorted(schema.artifacts, key=lambda a: (rank[a.id] or 0, position[a.id]))
    owners = [a for a in schema.artifacts if a.role]
    data = {
        owner.role.id: pd.array(
            [2 if art.id == owner.id else 1 if art.id in owner.requires else pd.NA
             for art in order], dtype="Int64")
        for owner in owners if owner.role
    }
    frame = pd.DataFrame(data, index=pd.Index([a.id for a in order], name="artifact"))
    frame.columns = pd.Index(list(data), name="role")
    return frame
