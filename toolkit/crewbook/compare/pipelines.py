"""`diff_pipelines(a, b)`: two role pipelines (SPEC B) compared, drawn on one state diagram.

Sections of the result:

* ``pipeline``: its id and start stage;
* ``stage``: stages added, removed, renamed (same `needs` and `produces`), and the fields
  that changed: prompt, needs, produces (``name:kind``), allowed_tools,
  ground_references, token_budget, max_retries, writes;
* ``transition``: by id, added, removed, renamed (same from, to and condition), and
  changes of from, to, the condition (``verdict != approved``) and its parts;
* ``kind``: artifact kinds added, removed, or whose JSON Schema or `llm_emitted` changed.

Stage renames are applied to the transitions' `from`/`to` before they are compared, so
renaming a stage does not also report every transition through it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, ClassVar

from ..pipeline.model import StageSpec, TransitionSpec
from ..pipeline.pipeline import Pipeline, load_pipeline
from .core import DiffEntry, diff_records
from .graph import overlay
from .result import Diff

PipelineLike = Pipeline | str | Path


def stage_record(stage: StageSpec) -> dict[str, Any]:
    """The fields of a stage that a comparison looks at."""
    return {
        "prompt": stage.prompt,
        "needs": tuple(stage.needs),
        "produces": tuple(f"{p.name}:{p.kind}" for p in stage.produces),
        "allowed_tools": tuple(stage.allowed_tools),
        "ground_references": stage.ground_references,
        "token_budget": stage.token_budget,
        "max_retries": stage.max_retries,
        "writes": tuple(stage.writes) if stage.writes is not None else None,
    }


def transition_record(t: TransitionSpec) -> dict[str, Any]:
    """The fields of a transition that a comparison looks at (`condition` as text)."""
    return {
        "from": t.from_,
        "to": t.to,
        "condition": t.describe(),
        "condition_type": t.condition_type,
        "condition_artifact_id": t.condition_artifact_id,
        "condition_field": t.condition_field,
        "condition_value": t.condition_value,
        "condition_operator": t.condition_operator,
    }


def kind_record(pipeline: Pipeline, kind_id: str) -> dict[str, Any]:
    """An artifact kind: a digest of its JSON Schema and whether a model emits it."""
    kind = pipeline.kinds[kind_id]
    text = json.dumps(kind.schema, sort_keys=True, ensure_ascii=False)
    return {"schema_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()[:12],
            "llm_emitted": kind.llm_emitted}


class PipelineDiff(Diff):
    """Two pipelines compared (`diff_pipelines`)."""

    kind: ClassVar[str] = "pipeline"


def _load(pipeline: PipelineLike) -> Pipeline:
    return pipeline if isinstance(pipeline, Pipeline) else load_pipeline(pipeline)


def diff_pipelines(a: PipelineLike, b: PipelineLike, *,
                   labels: tuple[str, str] | None = None) -> PipelineDiff:
    """Compare pipeline `a` (before) with `b` (after): a `PipelineDiff`.

    `a` and `b` are `Pipeline` objects or pipeline `.toml` files (checked as
    `load_pipeline` does, with the kinds config next to each).
    """
    pa, pb = _load(a), _load(b)
    label_a, label_b = labels or (pa.id, pb.id)
    if labels is None and label_a == label_b:
        label_a, label_b = f"{pa.id} (a)", f"{pb.id} (b)"
    stages = diff_records({s.id: stage_record(s) for s in pa.stages},
                          {s.id: stage_record(s) for s in pb.stages},
                          signature=("needs", "produces"))
    ren = stages.renames
    entries: list[DiffEntry] = []
    if pa.id != pb.id:
        entries.append(DiffEntry("pipeline", "changed", "pipeline", "id", pa.id, pb.id))
    if ren.get(pa.start, pa.start) != pb.start:
        entries.append(DiffEntry("pipeline", "changed", "pipeline", "start", pa.start, pb.start))
    entries += stages.entries("stage")
    old_transitions = {}
    for t in pa.transitions:
        rec = transition_record(t)
        rec["from"], rec["to"] = ren.get(t.from_, t.from_), ren.get(t.to, t.to)
        old_transitions[t.id] = rec
    transitions = diff_records(old_transitions,
                               {t.id: transition_record(t) for t in pb.transitions},
                               signature=("from", "to", "condition"))
    entries += transitions.entries("transition")
    kinds = diff_records({k: kind_record(pa, k) for k in sorted(pa.kinds)},
                         {k: kind_record(pb, k) for k in sorted(pb.kinds)})
    entries += kinds.entries("kind")
    drawing = overlay(pa.graph_model(), pb.graph_model(), renames=ren,
                      changed={k: list(v) for k, v in stages.changed.items()},
                      name=f"{pb.id}-diff", title=f"pipeline {label_a} → {label_b}")
    return PipelineDiff(label_a, label_b, tuple(entries), drawing)
