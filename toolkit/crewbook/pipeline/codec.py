"""The pipeline family's codec: stage reports to and from plain mappings, and back from
the ledger events a run wrote; the example artifacts of each stage (from its kinds'
JSON Schemas) that simulate and replay use."""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..core.examples import example_of
from ..core.examples import plain_copy as _copy
from ..core.family import CodecBase, Replay
from ..core.measures import measures_of
from ..errors import SimulationError
from .kinds import FILE_WRITTEN
from .state import PipelineReport, PipelineState, StageReport, Steer, parse_report

__all__ = ["PipelineCodec", "judged_fields", "serialize_report", "templates"]

#: id(pipeline) → (a weak reference to it, its templates): pipelines are frozen, so the
#: cache lives here rather than on them.
_TEMPLATES: dict[int, tuple[weakref.ref[Any], dict[str, dict[str, Any]]]] = {}


def serialize_report(report: Any) -> dict[str, Any]:
    """A `StageReport` or `Steer` as the JSON data `parse_report` reads back."""
    if isinstance(report, Steer):
        return {"steer": report.text, "by": report.by, "kind": report.kind}
    if not isinstance(report, StageReport):
        raise SimulationError(f"a pipeline report is a StageReport or a Steer, not "
                              f"{type(report).__name__}")
    data: dict[str, Any] = {"stage": report.stage, "artifacts": _copy(dict(report.artifacts))}
    if report.writes:
        data["writes"] = list(report.writes)
    if report.summary is not None:
        data["summary"] = report.summary
    data.update(measures_of({k: getattr(report, k) for k in ("duration_ms", "tokens_in",
                                                             "tokens_out", "cost")}))
    return data


class PipelineCodec(CodecBase[PipelineState, PipelineReport]):
    """Stage reports and steering notes as plain mappings, and back from ledger events."""

    parse = staticmethod(parse_report)
    serialize = staticmethod(serialize_report)

    def report_of(self, event: Mapping[str, Any],
                  replay: Replay[PipelineState, PipelineReport]) -> PipelineReport | None:
        """The stage report (its artifacts rebuilt from the verdicts that follow it) or
        the steering note that wrote `event`."""
        e = event
        kind = e.get("kind")
        if kind == "note" and isinstance(e.get("payload"), Mapping) and \
                e["payload"].get("journal") in ("steering", "approval"):
            return Steer(str(e.get("summary") or ""), str(e.get("role") or "human"),
                         e["payload"]["journal"])
        if kind != "report":
            return None
        pipeline = replay.loop.pipeline  # type: ignore[attr-defined]
        made = templates(pipeline)
        stage = str(e.get("stage"))
        payload = e.get("payload") or {}
        measures = measures_of(e)
        if payload.get("outcome") == "failed" or stage not in pipeline.plans:
            return StageReport(stage, {}, summary=e.get("summary"), **measures)
        artifacts = {n: _copy(v) for n, v in made.get(stage, {}).items()
                     if n in payload.get("artifacts", made.get(stage, {}))}
        for later in replay.after():
            if later.get("kind") != "verdict" or later.get("stage") != stage:
                break
            lp = later.get("payload") or {}
            name, field = lp.get("artifact"), lp.get("field")
            if name in artifacts and isinstance(field, str):
                _set_field(artifacts[name], field, _typed(later.get("verdict"),
                                                          pipeline, stage, name, field))
        writes = tuple(str(w) for w in payload.get("writes") or ())
        return StageReport(stage, artifacts, writes, e.get("summary"), **measures)

    def time_of(self, event: Mapping[str, Any], report: PipelineReport) -> datetime | None:
        """The event's ``ts`` as recorded."""
        when: datetime | None = event.get("ts")
        return when


def templates(pipeline: Any) -> dict[str, dict[str, Any]]:
    """Stage id → artifact name → a valid example artifact (cached on the pipeline)."""
    key = id(pipeline)
    cached = _TEMPLATES.get(key)
    if cached is not None and cached[0]() is pipeline:
        return cached[1]

    out: dict[str, dict[str, Any]] = {}
    for stage_id, plan in pipeline.plans.items():
        made: dict[str, Any] = {}
        for name, kind_id in plan.produced.items():
            if kind_id == FILE_WRITTEN:
                continue  # reported through `writes`
            kind = plan.kinds.get(name)
            if kind is None:
                made[name] = {}
                continue
            example = example_of(kind.schema)
            if not kind.is_valid(example):
                raise SimulationError(
                    f"cannot make a valid {kind_id!r} artifact for stage {stage_id!r} from its "
                    f"JSON Schema ({'; '.join(kind.errors(example)[:2])}); simulate this "
                    "pipeline with a scripted or callable policy")
            made[name] = example
        out[stage_id] = made
    _TEMPLATES[key] = (weakref.ref(pipeline), out)
    return out


def judged_fields(pipeline: Any) -> dict[str, dict[str, Any]]:
    """Stage id → ``artifact.field`` → the transition that reads it."""
    out: dict[str, dict[str, Any]] = {}
    for stage_id, plan in pipeline.plans.items():
        for t in plan.judged:
            out.setdefault(stage_id, {})[f"{t.condition_artifact_id}.{t.condition_field}"] = t
    return out


def _set_field(content: Any, dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    for part in parts[:-1]:
        if not isinstance(content, dict):
            return
        content = content.setdefault(part, {})
    if isinstance(content, dict):
        content[parts[-1]] = value


def _typed(text: Any, pipeline: Any, stage: str, artifact: str, field: str) -> Any:
    """A verdict text as the type the transitions compare with (bool, int or text)."""
    t = judged_fields(pipeline).get(stage, {}).get(f"{artifact}.{field}")
    wanted = getattr(t, "condition_value", None)
    if isinstance(wanted, bool):
        return str(text).lower() == "true"
    if isinstance(wanted, int):
        try:
            return int(str(text))
        except ValueError:
            return text
    return text
