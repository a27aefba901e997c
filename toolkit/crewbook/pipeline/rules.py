"""The rules a stage report goes through, as plain functions of a `StagePlan`:

- `admit`: the report's artifacts as JSON data and the files it writes, or a refusal
  (`not_produced`, `bad_report`, `cannot_write`, `unsafe_path`, `scope_creep`);
- `failures`: why the work failed (a missing artifact, one that does not validate
  against its kind, workspace paths that do not exist);
- `holds`: whether a transition's condition holds for the artifacts.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import LoopRefused, did_you_mean
from ..models import path_defect
from .grounding import in_scope, missing_paths, named_paths
from .model import TransitionSpec
from .plan import StagePlan, json_copy
from .state import StageReport


def admit(plan: StagePlan, report: StageReport) -> tuple[dict[str, Any], list[str]]:
    """The report's artifacts as plain JSON data and every file it writes; refusals."""
    stage, produced = plan.stage, plan.produced
    artifacts: dict[str, Any] = {}
    for name, content in report.artifacts.items():
        if name not in produced:
            raise LoopRefused(
                f"stage {stage.id!r} does not produce {name!r}"
                + (did_you_mean(name, produced)
                   or f"; it produces {', '.join(produced) or 'nothing'}"),
                code="not_produced")
        try:
            artifacts[name] = json_copy(content)
        except (TypeError, ValueError) as exc:
            raise LoopRefused(f"artifact {name!r} is not JSON data: {exc}",
                              code="bad_report") from None
    writes = list(report.writes)
    for name in plan.written:
        content = artifacts.get(name)
        files = content.get("files") if isinstance(content, dict) else None
        if isinstance(files, list):
            writes += [f for f in files if isinstance(f, str) and f not in writes]
    if writes:
        check_writes(plan, writes)
        for name in plan.written:
            if name not in artifacts and report.writes:
                artifacts[name] = {"files": list(report.writes)}
    return artifacts, writes


def check_writes(plan: StagePlan, writes: list[str]) -> None:
    """Refuse writes a stage may not make (no write tool, unsafe path, scope creep)."""
    stage = plan.stage
    if not plan.writer:
        raise LoopRefused(
            f"stage {stage.id!r} may not write files (allowed_tools: "
            f"{', '.join(stage.allowed_tools) or 'none'}), yet the report writes "
            f"{writes[0]!r}", code="cannot_write")
    for path in writes:
        defect = path_defect(path)
        if defect:
            raise LoopRefused(f"write {path!r} refused: {defect}", code="unsafe_path")
        if stage.writes is not None and not in_scope(path, stage.writes):
            raise LoopRefused(
                f"write {path!r} is outside stage {stage.id!r}'s writes "
                f"({', '.join(stage.writes) or 'none'}): blocked as scope creep",
                code="scope_creep")


def failures(plan: StagePlan, artifacts: Mapping[str, Any],
             workspace: Path | None) -> list[str]:
    """Why the stage's work failed: missing or invalid artifacts, ground misses."""
    out: list[str] = []
    for name, kind in plan.kinds.items():
        if name not in artifacts:
            out.append(f"no {name!r} artifact was reported")
        elif not kind.is_valid(artifacts[name]):
            out += [f"{name} {e}" for e in kind.errors(artifacts[name])]
    if plan.stage.ground_references and workspace is not None and not out:
        for content in artifacts.values():
            out += [f"ground_references: {m}"
                    for m in missing_paths(workspace, named_paths(content))]
    return out


def holds(t: TransitionSpec, artifacts: Mapping[str, Any]) -> bool:
    """Whether transition `t`'s condition holds for these artifacts."""
    if t.condition_artifact_id not in artifacts:
        return False
    if t.condition_type == "artifact_validated":
        return True  # stored artifacts validated against their kind when reported
    value = field_value(artifacts[t.condition_artifact_id], t.condition_field or "")
    equal = value == t.condition_value and type(value) is type(t.condition_value)
    return equal if t.condition_operator == "eq" else not equal


def field_value(content: Any, dotted: str) -> Any:
    """The value at a dotted field path of an artifact, or None."""
    for part in dotted.split("."):
        if not isinstance(content, dict) or part not in content:
            return None
        content = content[part]
    return content
