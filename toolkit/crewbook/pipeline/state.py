"""A pipeline run's state and the reports a stage hands back (with their JSON form)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from ..core.form import refuse_unknown_keys
from ..core.loop import JournalEntry, Verdict
from ..core.measures import MEASURES
from ..errors import LoopRefused

InvalidPolicy = Literal["retry", "refuse"]


@dataclass(frozen=True)
class StageReport:
    """What a stage hands back: its artifacts (name → JSON data), the files it wrote,
    a one-line summary and optional measures."""

    stage: str
    artifacts: Mapping[str, Any] = field(default_factory=dict)
    writes: tuple[str, ...] = ()
    summary: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost: float | None = None
    duration_ms: int | None = None


@dataclass(frozen=True)
class Steer:
    """A human note pinned into the decision journal: steering, or an approval."""

    text: str
    by: str = "human"
    kind: Literal["steering", "approval"] = "steering"


PipelineReport = StageReport | Steer


@dataclass(frozen=True)
class PipelineState:
    """Where a pipeline run is. Immutable: every change makes a new state."""

    stage: str | None
    previous: str | None = None
    tries: int = 0
    attempts: Mapping[str, int] = field(default_factory=dict)
    rounds: Mapping[str, int] = field(default_factory=dict)
    artifacts: Mapping[str, Any] = field(default_factory=dict)
    versions: Mapping[str, int] = field(default_factory=dict)
    version: int = 0
    feedback: tuple[str, ...] = ()
    journal: tuple[JournalEntry, ...] = ()
    verdicts: tuple[Verdict, ...] = ()
    path: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    started: bool = False
    finished_reason: str | None = None
    reason: str | None = None
    last_transition: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (`from_dict` reads it back)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PipelineState:
        """The state `to_dict` wrote."""
        values = dict(data)
        values["journal"] = tuple(JournalEntry(**j) for j in values.get("journal", ()))
        values["verdicts"] = tuple(Verdict(**v) for v in values.get("verdicts", ()))
        for key in ("feedback", "path", "writes"):
            values[key] = tuple(values.get(key, ()))
        return cls(**values)


def parse_report(data: Mapping[str, Any]) -> PipelineReport:
    """A report from JSON data: ``{"stage": ..., "artifacts": {...}, "writes": [...],
    "summary": ...}`` or ``{"steer": "text", "by": ..., "kind": "approval"}``."""
    if not isinstance(data, Mapping):
        raise LoopRefused("a report is a JSON object", code="bad_report")
    if "steer" in data:
        return _steer(data)
    refuse_unknown_keys(data, {"stage", "artifacts", "writes", "summary", *MEASURES},
                        "a stage report")
    stage, artifacts, writes = data.get("stage"), data.get("artifacts", {}), data.get("writes", [])
    if not isinstance(stage, str) or not stage:
        raise LoopRefused("a report needs 'stage': the stage it reports for", code="bad_report")
    if not isinstance(artifacts, Mapping):
        raise LoopRefused("'artifacts' maps artifact names to their JSON data",
                          code="bad_report")
    if not isinstance(writes, (list, tuple)) or not all(isinstance(w, str) for w in writes):
        raise LoopRefused("'writes' is a list of workspace-relative paths", code="bad_report")
    summary = data.get("summary")
    if summary is not None and not isinstance(summary, str):
        raise LoopRefused("'summary' is text", code="bad_report")
    measures: dict[str, Any] = {}
    for key in MEASURES:
        value = data.get(key)
        if value is not None:
            ok = isinstance(value, int | float) if key == "cost" else isinstance(value, int)
            if not ok or isinstance(value, bool) or value < 0:
                raise LoopRefused(f"{key!r} is a number of at least 0", code="bad_report")
            measures[key] = float(value) if key == "cost" else value
    return StageReport(stage, dict(artifacts), tuple(writes), summary, **measures)


def _steer(data: Mapping[str, Any]) -> Steer:
    refuse_unknown_keys(data, ("steer", "by", "kind"), "a steering report")
    text, by, kind = data.get("steer"), data.get("by", "human"), data.get("kind", "steering")
    if not isinstance(text, str) or not text.strip() or not isinstance(by, str):
        raise LoopRefused("a steering report is {\"steer\": TEXT, \"by\": WHO, \"kind\": "
                          "\"steering\" | \"approval\"}", code="bad_report")
    if kind not in ("steering", "approval"):
        raise LoopRefused(f"steering kind {kind!r} is not 'steering' or 'approval'",
                          code="bad_report")
    return Steer(text, by, kind)
