"""The delivery family's form spec for the Stepper: moves (``plan``, ``delegate:qa``…) and
agent reports (``built``, ``judgement``…) as `Draft`s, built back with `parse_report`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, fields
from typing import Any

from ..core.form import Draft, FormBase, GenericForm, as_mapping, defaults_of, field_kind, jsonable
from ..core.loop import Act
from ..errors import LoopRefused
from .codec import _AGENT_TYPES, _MOVE_TYPES, MOVES, move_name, parse_report
from .players import happy_report, role_verdicts

__all__ = ["DeliveryForm"]

_VERDICT_REPORTS = ("judgement",)


class DeliveryForm(FormBase):
    """The standard and coordinator loops: moves (``plan``, ``delegate:qa``…) and agent
    reports (``built``, ``judgement``…), built with `crewbook.delivery.parse_report`."""

    def verdicts(self, loop: Any, act: Act) -> tuple[str, ...]:
        """The verdicts of the acting role (`role_verdicts`)."""
        return role_verdicts(loop, act)

    def _moves(self, act: Act) -> tuple[str, ...]:
        return act.moves

    def to_draft(self, loop: Any, act: Act, report: Any) -> Draft:
        """A report object (`Plan`, `Judgement`…) or its JSON data as a draft."""
        if isinstance(report, Mapping):
            data = dict(report)
            name = str(data.pop("move", None) or data.pop("report", None) or "")
        else:
            name = move_name(report)
            data = as_mapping(report)
        role = data.pop("role", None)
        verdict = data.pop("verdict", None)
        move = f"{name}:{role}" if name == "delegate" and role else name
        hidden = {k: data.pop(k) for k in list(data) if field_kind(data[k]) == "json"
                  and not jsonable(data[k])}
        defaults = defaults_of(report) if not isinstance(report, Mapping) else {}
        shown = {k: v for k, v in data.items()
                 if not (k in defaults and v == defaults[k] and v in (None, (), ""))
                 or k in _ALWAYS}
        # Only a judgement takes a verdict: a question or a result shows no picker.
        verdicts = self.verdicts(loop, act) if name in _VERDICT_REPORTS else ()
        return Draft(move=move, role=role if name != "delegate" else None,
                     verdict=None if verdict is None else str(verdict),
                     moves=self._moves(act), verdicts=verdicts, fields=shown, hidden=hidden)

    def build(self, loop: Any, act: Act, draft: Draft) -> Any:
        """The report object, through `parse_report` (refusals name the bad key)."""
        move = draft.move or (act.moves[0] if act.moves else "")
        name, _, target = move.partition(":")
        data: dict[str, Any] = {("move" if name in MOVES else "report"): name}
        role = target or draft.role
        if role and name not in ("plan", "revise", "answer", "finalise", "fail", "expire"):
            data["role"] = role
        if name == "built" and role == "developer":
            data.pop("role")
        if draft.verdict is not None and name in _VERDICT_REPORTS:
            data["verdict"] = draft.verdict
            _refuse_send_back_without_findings(self.verdicts(loop, act), draft)
        for key, value in draft.fields.items():
            data[key] = list(value) if isinstance(value, tuple) else value
        data.update(draft.hidden)
        return parse_report(data)

    def for_move(self, loop: Any, act: Act, move: str) -> Draft:
        """The draft of `move` (``plan``, ``delegate:qa``, ``judgement``…) picked in the
        form: the happy path's report when it is that move, else the move's report with
        its required fields empty (the role from ``delegate:ROLE`` or the contract, the
        first verdict), for the user to fill in."""
        verdicts = self.verdicts(loop, act)
        happy = happy_report(loop, act, verdicts) if not act.finished else None
        if happy is not None and self.to_draft(loop, act, happy).move == move:
            return self.to_draft(loop, act, happy)
        name, _, target = move.partition(":")
        cls = _MOVE_TYPES.get(name) or _AGENT_TYPES.get(name)
        if cls is None:
            return Draft(move=move, role=act.role, moves=self._moves(act),
                         verdicts=verdicts if name in _VERDICT_REPORTS else ())
        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.default is not MISSING or f.default_factory is not MISSING:
                continue
            if f.name == "role":
                values["role"] = target or act.role or ""
            elif f.name == "verdict":
                values["verdict"] = verdicts[0] if verdicts else ""
            else:
                values[f.name] = () if str(f.type).startswith("tuple") else ""
        return self.to_draft(loop, act, cls(**values))

    def propose(self, loop: Any, act: Act) -> Draft:
        """The happy path (`DeliveryPlayers.happy`) as a draft."""
        if act.finished:
            return Draft(moves=act.moves)
        report = happy_report(loop, act, self.verdicts(loop, act))
        if report is None:
            return GenericForm().propose(loop, act)
        return self.to_draft(loop, act, report)


def _refuse_send_back_without_findings(verdicts: tuple[str, ...], draft: Draft) -> None:
    """`LoopRefused` for a judgement that sends work back (QA ``fail``, the reviewer's
    ``changes``: any verdict but the role's first) with no findings: the developer would
    get a version to fix and nothing saying what."""
    if not verdicts or draft.verdict == verdicts[0]:
        return
    findings = draft.fields.get("findings") or ()
    if isinstance(findings, str):
        findings = (findings,)
    if not any(str(f).strip() for f in findings):
        raise LoopRefused(f"verdict {draft.verdict!r} with no findings: write what is wrong "
                          "in 'findings' (one a line), so the work sent back says what to "
                          "fix", code="no_findings")


_ALWAYS = ("criteria", "files", "instructions", "findings", "summary", "reason",
           "decision", "text", "fixes", "duration_ms")
