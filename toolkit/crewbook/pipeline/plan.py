"""What the engine needs to know about each stage, worked out once per pipeline.

A `StagePlan` holds a stage's spec with the facts a step asks for every time (its
produced artifacts and their kinds, its transitions in file order with the ones that
send work back marked, whether it may write, its retry cap, the text of its
contract), so a step does lookups instead of recomputing them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .checks import can_write
from .kinds import FILE_WRITTEN, ArtifactKind
from .model import StageSpec, TransitionSpec

if TYPE_CHECKING:
    from .pipeline import Pipeline

#: Retries of a failed try when a stage sets no `max_retries`.
DEFAULT_MAX_RETRIES = 2


def effective_retries(stage: StageSpec) -> int:
    """The retries a stage gets after a failed try (`DEFAULT_MAX_RETRIES` when unset)."""
    return DEFAULT_MAX_RETRIES if stage.max_retries is None else stage.max_retries


@dataclass(frozen=True)
class StagePlan:
    """One stage, with what every step of it needs precomputed."""

    stage: StageSpec
    produced: Mapping[str, str]  # artifact name → kind id
    kinds: Mapping[str, ArtifactKind]  # artifact name → kind
    out: tuple[tuple[TransitionSpec, bool], ...]  # (transition, sends work back)
    writer: bool
    retries: int
    expects: str | None
    moves: tuple[str, ...]
    written: tuple[str, ...]  # names of its file_written artifacts
    judged: tuple[TransitionSpec, ...]  # first artifact_field_equals per (artifact, field)
    #: transition id → the summary its ``transition`` event carries (``t1: analysis ✓``)
    labels: Mapping[str, str] = field(default_factory=dict)


def stage_plans(pipeline: Pipeline) -> dict[str, StagePlan]:
    """A plan per stage id."""
    topo = pipeline.topology
    plans: dict[str, StagePlan] = {}
    for stage_id, stage in topo.stages.items():
        produced = {p.name: p.kind for p in stage.produces}
        judged: dict[tuple[str, str], TransitionSpec] = {}
        for t in topo.out[stage_id]:
            if t.condition_type == "artifact_field_equals" and t.condition_field is not None:
                judged.setdefault((t.condition_artifact_id, t.condition_field), t)
        plans[stage_id] = StagePlan(
            stage=stage, produced=produced,
            kinds={n: pipeline.kinds[k] for n, k in produced.items() if k in pipeline.kinds},
            out=tuple((t, topo.is_loop(t)) for t in topo.out[stage_id]),
            writer=can_write(stage.allowed_tools), retries=effective_retries(stage),
            expects=", ".join(f"{n} ({k})" for n, k in produced.items()) or None,
            moves=tuple(t.id for t in topo.out[stage_id]),
            written=tuple(n for n, k in produced.items() if k == FILE_WRITTEN),
            judged=tuple(judged.values()),
            labels={t.id: f"{t.id}: {t.describe()}" for t in topo.out[stage_id]},
        )
    return plans


_SCALARS = (str, int, bool, type(None))


def json_copy(value: Any) -> Any:
    """A deep copy of JSON data (dicts with text keys, lists, text, numbers, booleans,
    null); TypeError or ValueError for anything else (NaN and infinities included)."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is float:
        if not math.isfinite(value):
            raise ValueError(f"{value!r} is not a JSON number")
        return value
    if kind is dict:
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                raise TypeError(f"keys must be text, not {type(key).__name__}")
            out[key] = json_copy(item)
        return out
    if kind is list or kind is tuple:
        return [json_copy(item) for item in value]
    # subclasses of the JSON types (OrderedDict, IntEnum...): as json itself sees them
    return json.loads(json.dumps(value, allow_nan=False))
