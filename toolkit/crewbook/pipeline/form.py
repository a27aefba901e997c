"""The pipeline family's form spec for the Stepper: a stage report as a `Draft` (the
verdict is the artifact field a transition reads) and back; the happy-path proposal."""

from __future__ import annotations

import json
from typing import Any

from ..core.examples import example_of
from ..core.form import Draft, FormBase, as_mapping
from ..core.loop import Act
from ..core.paths import path_in
from ..errors import InvalidInputError, LoopRefused

__all__ = ["PipelineForm"]


class PipelineForm(FormBase):
    """The pipeline loop: a stage report (artifacts, writes, summary); the verdict is the
    field an ``artifact_field_equals`` transition of the stage reads."""

    def _judged(self, loop: Any, act: Act) -> tuple[Any, ...]:
        if act.stage is None:
            return ()
        plan = loop.pipeline.plans[act.stage]
        return tuple(plan.judged)

    def verdicts(self, loop: Any, act: Act) -> tuple[str, ...]:
        """The values the stage's transitions compare the verdict field with, then the
        other values the artifact kind's JSON Schema allows there (its ``enum``)."""
        judged = self._judged(loop, act)
        if not judged:
            return ()
        first = judged[0]
        plan = loop.pipeline.plans[act.stage]
        values: list[str] = []
        for t, _ in plan.out:
            if (t.condition_artifact_id, t.condition_field) == (
                    first.condition_artifact_id, first.condition_field) \
                    and str(t.condition_value) not in values:
                values.append(str(t.condition_value))
        kind = plan.kinds.get(first.condition_artifact_id)
        if kind is not None and first.condition_field is not None:
            spec: Any = kind.schema
            for part in first.condition_field.split("."):
                spec = spec.get("properties", {}).get(part, {}) if isinstance(spec, dict) else {}
            for value in spec.get("enum", ()) if isinstance(spec, dict) else ():
                if str(value) not in values:
                    values.append(str(value))
        return tuple(values)

    def to_draft(self, loop: Any, act: Act, report: Any) -> Draft:
        """A `StageReport` or its JSON data as a draft (the verdict lifted out)."""
        data = as_mapping(report)
        stage = data.pop("stage", act.stage)
        artifacts = json.loads(json.dumps(dict(data.pop("artifacts", {}) or {})))
        verdict = None
        judged = self._judged(loop, act)
        if judged:
            t = judged[0]
            holder = artifacts.get(t.condition_artifact_id)
            if isinstance(holder, dict) and t.condition_field in holder:
                verdict = str(holder.pop(t.condition_field))
        values: dict[str, Any] = {"artifacts": artifacts,
                                  "writes": tuple(data.pop("writes", ()) or ()),
                                  "summary": data.pop("summary", None) or ""}
        values.update({k: v for k, v in data.items() if v is not None})
        return Draft(move=None, role=stage, verdict=verdict, verdicts=self.verdicts(loop, act),
                     fields=values)

    def build(self, loop: Any, act: Act, draft: Draft) -> Any:
        """The report's JSON data (the pipeline parses and checks it)."""
        values = dict(draft.fields)
        artifacts = json.loads(json.dumps(values.pop("artifacts", {}) or {}))
        if not isinstance(artifacts, dict):
            raise InvalidInputError("field 'artifacts' is a JSON object: artifact name → data")
        judged = self._judged(loop, act)
        if judged and draft.verdict is not None:
            t = judged[0]
            holder = artifacts.setdefault(t.condition_artifact_id, {})
            if isinstance(holder, dict):
                written = holder.get(t.condition_field, draft.verdict)
                if str(written) != draft.verdict:
                    raise LoopRefused(
                        f"the verdict picker says {draft.verdict!r} but field 'artifacts' "
                        f"says {t.condition_artifact_id}.{t.condition_field} = {written!r}: "
                        f"make them agree (or delete {t.condition_field!r} from the JSON: "
                        "the picker fills it in)", code="verdict_mismatch")
                holder[t.condition_field] = draft.verdict
        report: dict[str, Any] = {"stage": draft.role or act.stage, "artifacts": artifacts}
        if values.get("writes"):
            report["writes"] = list(values.pop("writes"))
        values.pop("writes", None)
        if values.get("summary"):
            report["summary"] = values.pop("summary")
        values.pop("summary", None)
        report.update({k: v for k, v in values.items() if v is not None})
        return report

    def propose(self, loop: Any, act: Act) -> Draft:
        """Artifacts that validate against their kinds (smallest instances), the verdict
        that moves forward, and a file inside the stage's `writes` when it may write."""
        if act.stage is None:
            return Draft(role=None)
        plan = loop.pipeline.plans[act.stage]
        artifacts: dict[str, Any] = {}
        for name in plan.produced:
            kind = plan.kinds.get(name)
            if name in plan.written or kind is None:
                continue
            artifacts[name] = example_of(kind.schema)
        verdicts = self.verdicts(loop, act)
        verdict = None
        if verdicts:
            forward = [t for t, back in plan.out if not back
                       and t.condition_type == "artifact_field_equals"
                       and t.condition_operator == "eq"]
            verdict = str(forward[0].condition_value) if forward else verdicts[0]
        writes: tuple[str, ...] = ()
        if plan.writer:
            writes = (path_in(plan.stage.writes or ("src/**",)),)
        draft = Draft(role=act.stage, verdict=verdict, verdicts=verdicts,
                      fields={"artifacts": artifacts, "writes": writes,
                              "summary": f"{act.stage} done"})
        # The verdict lives in the picker only (as `to_draft` shows a report): the JSON
        # and the picker can then never say two things.
        return self.to_draft(loop, act, self.build(loop, act, draft)) if verdicts else draft
