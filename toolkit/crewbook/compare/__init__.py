"""Compare two designs side by side: schemas, pipelines, runs and routing profiles.

Every comparison goes through one graph-diff core (`core.py`: records and edges added,
removed, renamed, changed; `graph.py`: one overlay drawing) and returns a `Diff`
(`result.py`) with `frame()` / `frames()`, `text()`, `to_dict()`, `empty`, a rich
display and a drawing of both versions (added green, removed red dashed, changed amber):

* `diff_schemas(a, b, project=...)`: artifacts, edges, the apply gate, build order, and
  what the new schema does to existing changes;
* `diff_pipelines(a, b)`: stages, transitions, conditions, retries, needs/produces, kinds;
* `diff_runs(ledger_a, run_a, ledger_b, run_b)`: the first differing act, stages side by side;
* `diff_profiles(a, b, change=...)`: routing cells, roles, and the tasks routed differently;
* `diff(a, b)`: any of these, the kind picked from the paths (`crewbook diff A B`);
  `diff_at_revision(rev, path)`: a file against its version at a git revision.

docs/compare.md has the whole story. Importing this package loads no pandas.
"""

from .core import DiffEntry, EdgeDiff, RecordDiff, diff_edges, diff_records
from .graph import diff_graphs, overlay
from .paths import InputKind, diff, diff_at_revision, input_kind
from .pipelines import PipelineDiff, diff_pipelines
from .profiles import ProfileDiff, diff_profiles
from .result import Diff
from .runs import RunDiff, diff_runs
from .schemas import Consequence, SchemaDiff, diff_schemas

__all__ = [
    "Consequence",
    "Diff",
    "DiffEntry",
    "EdgeDiff",
    "InputKind",
    "PipelineDiff",
    "ProfileDiff",
    "RecordDiff",
    "RunDiff",
    "SchemaDiff",
    "diff",
    "diff_at_revision",
    "diff_edges",
    "diff_graphs",
    "diff_pipelines",
    "diff_profiles",
    "diff_records",
    "diff_runs",
    "diff_schemas",
    "input_kind",
    "overlay",
]
