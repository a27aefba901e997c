"""The crew family's form spec for the Stepper: a `CrewReport` (role, verdict among the
role's, summary, payload, measures) as a `Draft` and back."""

from __future__ import annotations

from typing import Any

from ..core.form import Draft, FormBase, as_mapping
from ..core.loop import Act, Snapshot
from ..core.measures import MEASURES
from ..errors import InvalidInputError, LoopRefused
from .engine import CrewReport
from .model import VERDICTS

__all__ = ["CrewForm"]


class CrewForm(FormBase):
    """The crew loop: a `CrewReport` (role, verdict among the role's, summary, payload)."""

    def verdicts(self, loop: Any, act: Act) -> tuple[str, ...]:
        """The verdicts the expected role may give (D2)."""
        return tuple(VERDICTS.get(act.role or "", ()))

    def to_draft(self, loop: Any, act: Act, report: Any) -> Draft:
        """A `CrewReport` or its JSON data as a draft."""
        data = as_mapping(report)
        fields_ = {"summary": data.get("summary") or "",
                   "payload": dict(data.get("payload") or {})}
        fields_.update({k: data[k] for k in MEASURES if data.get(k) is not None})
        return Draft(role=data.get("role", act.role), verdict=data.get("verdict"),
                     verdicts=self.verdicts(loop, act), fields=fields_)

    def build(self, loop: Any, act: Act, draft: Draft) -> Any:
        """The `CrewReport` (the loop refuses a wrong role or verdict itself; an empty
        role is refused here rather than taken for the expected one)."""
        if not (draft.role or "").strip():
            raise LoopRefused("the role is empty: type the role that reports"
                              + (f" (the loop expects {act.role!r})" if act.role else ""),
                              code="no_role")
        values = dict(draft.fields)
        payload = values.get("payload") or None
        if payload is not None and not isinstance(payload, dict):
            raise InvalidInputError(_payload_message(payload))
        return CrewReport(str(draft.role), str(draft.verdict or ""),
                          str(values.get("summary") or ""), payload,
                          **{k: values[k] for k in MEASURES if values.get(k) is not None})

    def propose(self, loop: Any, act: Act) -> Draft:
        """The role's positive verdict (``done``, ``go``) with a summary."""
        if act.finished or act.role is None:
            return Draft()
        verdicts = self.verdicts(loop, act)
        return Draft(role=act.role, verdict=verdicts[0] if verdicts else None,
                     verdicts=verdicts, fields={"summary": f"{act.stage or act.role} done",
                                                "payload": {}})

    def restore(self, loop: Any, snapshot: Snapshot[Any]) -> Act:
        """Rewind to `snapshot` (the Stepper's Rewind) and save the restored state in the
        crew's state file, under its lock and refused as stale when another caller moved
        the loop, as each act is: `crew_status` and the next `crew_step` see the rewind."""
        act: Act = loop.restore_kept(snapshot)
        return act


def _payload_message(payload: object) -> str:
    """What is wrong with a payload that is not a JSON object, and what to write: D2's
    payload is a JSON object (qa's no-go lists its ``findings`` there)."""
    import json

    what = {str: "a string", list: "a list", bool: "true/false", int: "a number",
            float: "a number"}.get(type(payload), type(payload).__name__)
    if isinstance(payload, str):
        example = json.dumps({"findings": [payload]}, ensure_ascii=False)
    elif isinstance(payload, list) and all(isinstance(v, str) for v in payload):
        example = json.dumps({"findings": payload}, ensure_ascii=False)
    else:
        example = '{"findings": ["..."]}'
    return (f"field 'payload' must be a JSON object (names and values in braces), not "
            f"{what}: write {example} to give findings, or put plain text in 'summary'")
