"""DataFrames of a pipeline (stages, transitions, artifact kinds) and of a run's acts.

Columns (stable, typed):

stages
    ``id`` string, ``order`` Int64 (file order), ``prompt`` string, ``needs`` and
    ``produces`` (lists of artifact names), ``kinds`` (list, parallel to produces),
    ``allowed_tools`` (list), ``can_write`` bool (derived from the tools),
    ``ground_references`` bool, ``token_budget`` Int64, ``max_retries`` Int64 (<NA>:
    unset), ``writes`` (list, or None: anywhere), ``reachable`` bool, ``loop_target``
    bool, ``unreceived`` (list: artifacts produced upstream it does not need, B5).
transitions
    ``id`` string, ``order`` Int64, ``from`` / ``to`` category, ``condition_type``
    category, ``artifact`` string, ``field`` string, ``operator`` category, ``value``
    object, ``condition`` string (as drawn), ``loop`` bool (sends work back).
kinds
    ``id`` string, ``builtin`` bool, ``schema_path`` string, ``llm_emitted`` bool,
    ``used_by`` (list of stages), ``fields`` (list of property paths).
acts (one row per stage report of a run's ledger)
    ``act`` Int64, ``seq`` Int64, ``stage`` category, ``attempt`` Int64, ``outcome``
    category (passed/failed), ``verdict`` category (the judging field, if any),
    ``version`` Int64, ``next`` category (the stage entered, done, escalated, or the
    same stage to retry), ``errors`` (list), ``summary`` string, ``tokens_in``,
    ``tokens_out``, ``duration_ms`` Int64, ``cost`` float64.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import UsageError
from .checks import can_write

if TYPE_CHECKING:
    import pandas as pd

    from .pipeline import Pipeline


class PipelineFrames(NamedTuple):
    """`Pipeline.frames()`."""

    stages: pd.DataFrame
    transitions: pd.DataFrame
    kinds: pd.DataFrame


def pipeline_frames(pipeline: Pipeline) -> PipelineFrames:
    """The three frames of a loaded pipeline (see the module docstring)."""
    import pandas as pd

    topo = pipeline.topology
    stages = pipeline.model.stages
    loop_targets = {t.to for t in topo.loops()}
    missing = pipeline.unreceived()
    st = pd.DataFrame({
        "id": pd.Series([s.id for s in stages], dtype="string"),
        "order": pd.Series(range(len(stages)), dtype="Int64"),
        "prompt": pd.Series([s.prompt for s in stages], dtype="string"),
        "needs": pd.Series([list(s.needs) for s in stages], dtype=object),
        "produces": pd.Series([[p.name for p in s.produces] for s in stages], dtype=object),
        "kinds": pd.Series([[p.kind for p in s.produces] for s in stages], dtype=object),
        "allowed_tools": pd.Series([list(s.allowed_tools) for s in stages], dtype=object),
        "can_write": pd.Series([can_write(s.allowed_tools) for s in stages], dtype=bool),
        "ground_references": pd.Series([s.ground_references for s in stages], dtype=bool),
        "token_budget": pd.Series([s.token_budget for s in stages], dtype="Int64"),
        "max_retries": pd.Series([s.max_retries for s in stages], dtype="Int64"),
        "writes": pd.Series([list(s.writes) if s.writes is not None else None
                             for s in stages], dtype=object),
        "reachable": pd.Series([s.id in topo.depth for s in stages], dtype=bool),
        "loop_target": pd.Series([s.id in loop_targets for s in stages], dtype=bool),
        "unreceived": pd.Series([missing.get(s.id, []) for s in stages], dtype=object),
    })
    ts = pipeline.model.transitions
    stage_ids = [*topo.order, "done"]
    tr = pd.DataFrame({
        "id": pd.Series([t.id for t in ts], dtype="string"),
        "order": pd.Series(range(len(ts)), dtype="Int64"),
        "from": pd.Categorical([t.from_ for t in ts], categories=_cats(stage_ids, ts, "from_")),
        "to": pd.Categorical([t.to for t in ts], categories=_cats(stage_ids, ts, "to")),
        "condition_type": pd.Categorical(
            [t.condition_type for t in ts],
            categories=["artifact_validated", "artifact_field_equals"]),
        "artifact": pd.Series([t.condition_artifact_id for t in ts], dtype="string"),
        "field": pd.Series([t.condition_field for t in ts], dtype="string"),
        "operator": pd.Categorical(
            [t.condition_operator if t.condition_type == "artifact_field_equals" else None
             for t in ts], categories=["eq", "neq"]),
        "value": pd.Series([t.condition_value for t in ts], dtype=object),
        "condition": pd.Series([t.describe() for t in ts], dtype="string"),
        "loop": pd.Series([topo.is_loop(t) for t in ts], dtype=bool),
    })
    used: dict[str, list[str]] = {}
    for s in stages:
        for p in s.produces:
            used.setdefault(p.kind, [])
            if s.id not in used[p.kind]:
                used[p.kind].append(s.id)
    kinds = sorted(pipeline.kinds.values(), key=lambda k: (not k.builtin, k.id))
    root = pipeline.kinds_config.parent if pipeline.kinds_config else None
    kd = pd.DataFrame({
        "id": pd.Series([k.id for k in kinds], dtype="string"),
        "builtin": pd.Series([k.builtin for k in kinds], dtype=bool),
        "schema_path": pd.Series(
            [None if k.path is None else
             (k.path.relative_to(root).as_posix() if root else k.path.as_posix())
             for k in kinds], dtype="string"),
        "llm_emitted": pd.Series([k.llm_emitted for k in kinds], dtype=bool),
        "used_by": pd.Series([used.get(k.id, []) for k in kinds], dtype=object),
        "fields": pd.Series([k.fields() for k in kinds], dtype=object),
    })
    return PipelineFrames(st, tr, kd)


def _cats(ids: list[str], ts: Any, attr: str) -> list[str]:
    extra = [getattr(t, attr) for t in ts if getattr(t, attr) not in ids]
    return ids + sorted(set(extra))


def ledger_frame(ledger: Any) -> pd.DataFrame:
    """The events of a loop's ledger as the `read_ledger` frame: a `crewbook.Ledger` is
    read from its file, a `MemoryLedger` from memory (same columns and dtypes)."""
    for method in ("read", "frame"):
        if callable(getattr(ledger, method, None)):
            frame: pd.DataFrame = getattr(ledger, method)()
            return frame
    raise UsageError(f"cannot read events from {type(ledger).__name__}; give a "
                     "crewbook.Ledger or a MemoryLedger")


ACT_COLUMNS = ("act", "seq", "stage", "attempt", "outcome", "verdict", "version", "next",
               "errors", "summary", "tokens_in", "tokens_out", "duration_ms", "cost")


def acts(events: pd.DataFrame, run: str | None = None) -> pd.DataFrame:
    """One row per stage report of a pipeline run (see the module docstring).

    `events` is a ledger frame (`read_ledger`, `ledger_frame`); `run` picks one run
    when it holds several (default: its last run). A rewound run keeps every act it
    logged, before and after the rewind.
    """
    import pandas as pd

    df = events
    if "loop" in df.columns:
        df = df[df["loop"].astype(object) == "pipeline"]
    if "run" in df.columns and len(df):
        chosen = run if run is not None else df["run"].astype(object).iloc[-1]
        df = df[df["run"].astype(object) == chosen]
    kinds = df["kind"].astype(object) if "kind" in df.columns else pd.Series(dtype=object)
    reports = df[kinds == "report"]
    # a verdict belongs to the report just before it (acts repeat after a rewind)
    verdict_of: dict[Any, Any] = {}
    last_report: Any = None
    for index, kind, verdict in zip(df.index, kinds, df.get("verdict", kinds), strict=True):
        if kind == "report":
            last_report = index
        elif kind == "verdict" and last_report is not None:
            verdict_of[last_report] = None if _na(verdict) else verdict

    def col(name: str) -> list[Any]:
        if name not in reports.columns:
            return [None] * len(reports)
        return [None if _na(v) else v for v in reports[name].tolist()]

    payloads = [p if isinstance(p, dict) else {} for p in col("payload")]
    act_ids = [p.get("act") for p in payloads]
    out = pd.DataFrame({
        "act": pd.Series(act_ids, dtype="Int64"),
        "seq": pd.Series(col("seq"), dtype="Int64"),
        "stage": pd.Series(col("stage"), dtype="category"),
        "attempt": pd.Series(col("attempt"), dtype="Int64"),
        "outcome": pd.Categorical([p.get("outcome") for p in payloads],
                                  categories=["passed", "failed"]),
        "verdict": pd.Series([verdict_of.get(i) for i in reports.index], dtype="category"),
        "version": pd.Series(col("version"), dtype="Int64"),
        "next": pd.Series([p.get("next") for p in payloads], dtype="category"),
        "errors": pd.Series([list(p.get("errors", [])) for p in payloads], dtype=object),
        "summary": pd.Series(col("summary"), dtype="string"),
        "tokens_in": pd.Series(col("tokens_in"), dtype="Int64"),
        "tokens_out": pd.Series(col("tokens_out"), dtype="Int64"),
        "duration_ms": pd.Series(col("duration_ms"), dtype="Int64"),
        "cost": pd.Series(col("cost"), dtype="float64"),
    })
    return out.reset_index(drop=True)


def _na(value: Any) -> bool:
    import pandas as pd

    if value is None:
        return True
    if isinstance(value, (list, dict, tuple)):
        return False
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False
