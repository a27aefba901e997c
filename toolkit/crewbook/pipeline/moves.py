"""What a pipeline act does once its report is admitted (SPEC B5-B7), as functions of the
next state's draft (`Draft`, a plain dict of the state's fields) and the act's events:

- `failed`: a failed try, fed back to the next one, or an escalation past
  ``max_retries``;
- `passed`: the artifacts stored (each with a version), the stage's verdicts journaled
  (`verdicts`), then the first transition whose condition holds taken (`move`): to
  ``done`` (refused by the exact-version rule when the verdict is on another version),
  or to a stage, a send-back counting one round of its target; otherwise `escalate`.

`freeze` makes the state a draft describes; the engine (`pipeline.engine.PipelineLoop`)
admits the report and calls these.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.acts import JournalEntry, Transition, Verdict
from ..errors import ordinal
from .model import DONE, ESCALATED, TransitionSpec
from .plan import StagePlan
from .rules import field_value, holds
from .state import PipelineState, StageReport

Event = dict[str, Any]
#: A state being built: its fields in a plain dict (see `PipelineLoop.transition`).
Draft = dict[str, Any]


def freeze(draft: Draft) -> PipelineState:
    """The state a draft describes (no copy, no per-call introspection): the draft becomes
    the state's own fields, so nothing may change it afterwards."""
    state = object.__new__(PipelineState)
    object.__setattr__(state, "__dict__", draft)
    return state


def failed(d: Draft, plan: StagePlan, report: StageReport, failures: list[str],
           base: Event, events: list[Event], act: int) -> Transition[PipelineState]:
    """A failed try: its errors fed back to the next try, or past ``max_retries`` an
    escalation."""
    stage_id = plan.stage.id
    tries = d["tries"] + 1
    escalating = tries > plan.retries
    events.append({**base, "kind": "report", "verdict": "failed",
                   "summary": report.summary or f"{stage_id} failed: {failures[0]}",
                   "payload": {"act": act, "outcome": "failed", "errors": failures,
                               "next": ESCALATED if escalating else stage_id}})
    d["tries"] = tries
    if escalating:
        reason = (f"stage {stage_id!r} failed {tries} times (max_retries {plan.retries}): "
                  f"{failures[0]}")
        return escalate(d, reason, events, act)
    d["feedback"] = tuple(failures)
    return Transition(freeze(d), events)


def passed(plans: Mapping[str, StagePlan], name: str, d: Draft, plan: StagePlan,
           report: StageReport, artifacts: dict[str, Any], writes: list[str], base: Event,
           events: list[Event], act: int) -> Transition[PipelineState]:
    """A passed try: its artifacts stored, its verdicts journaled, then the first
    transition that holds taken (`move`), else an escalation."""
    versions = dict(d["versions"])
    for artifact in artifacts:
        versions[artifact] = versions.get(artifact, 0) + 1
    d["versions"] = versions
    everything = d["artifacts"] = {**d["artifacts"], **artifacts}
    if writes:
        d["version"] += 1
        d["writes"] = (*d["writes"], *(w for w in writes if w not in d["writes"]))
    chosen: tuple[TransitionSpec, bool] | None = None
    for candidate in plan.out:
        if holds(candidate[0], everything):
            chosen = candidate
            break
    events.append({**base, "kind": "report", "verdict": "done", "version": d["version"],
                   "summary": report.summary or produced(plan.stage.id, artifacts, versions),
                   "payload": {"act": act, "outcome": "passed",
                               "artifacts": {n: versions[n] for n in artifacts},
                               "writes": writes,
                               "next": chosen[0].to if chosen else ESCALATED}})
    if plan.judged:
        verdicts(d, plan, events, act)
    if chosen is None:
        out = [t for t, _ in plan.out]
        reason = (f"no transition out of {plan.stage.id!r} holds"
                  + (f" ({'; '.join(t.describe() for t in out)})" if out
                     else ": it has no transition out"))
        return escalate(d, reason, events, act)
    return move(plans, name, d, plan, *chosen, events, act)


def verdicts(d: Draft, plan: StagePlan, events: list[Event], act: int) -> None:
    """A ``verdict`` event and a journal entry for each field the stage's outgoing
    transitions read."""
    stage_id, version = plan.stage.id, d["version"]
    for t in plan.judged:
        if t.condition_artifact_id not in d["artifacts"] or t.condition_field is None:
            continue
        value = field_value(d["artifacts"][t.condition_artifact_id], t.condition_field)
        text = str(value).lower() if isinstance(value, bool) else str(value)
        events.append({"kind": "verdict", "role": stage_id, "stage": stage_id,
                       "verdict": text, "version": version,
                       "attempt": d["attempts"].get(stage_id, 1),
                       "summary": f"{stage_id}: {t.condition_field} = {text} on version "
                                  f"{version}",
                       "payload": {"act": act, "artifact": t.condition_artifact_id,
                                   "field": t.condition_field}})
        entry = JournalEntry("verdict", f"{t.condition_artifact_id}.{t.condition_field} = "
                             f"{text} (version {version})", stage_id, act)
        d["verdicts"] = (*d["verdicts"], Verdict(stage_id, text, version, act))
        d["journal"] = (*d["journal"], entry)


def move(plans: Mapping[str, StagePlan], name: str, d: Draft, plan: StagePlan,
         t: TransitionSpec, loops: bool, events: list[Event], act: int
         ) -> Transition[PipelineState]:
    """Take transition `t` (`loops`: it sends work back, one round of its target)."""
    stage_id = plan.stage.id
    version = d["version"]
    d["previous"], d["tries"], d["last_transition"] = stage_id, 0, t.id
    if t.to == DONE:
        given = [v for v in d["verdicts"] if v.role == stage_id]
        if given and not given[-1].covers(version):  # exact-version rule
            return escalate(d, f"{stage_id}'s verdict is on version {given[-1].version}, "
                            f"not {version}", events, act)
        events.append({"kind": "transition", "stage": DONE, "summary": plan.labels[t.id],
                       "payload": {"from": stage_id, "transition": t.id}})
        events.append({"kind": "finish", "verdict": DONE, "version": version,
                       "summary": f"pipeline {name} done",
                       "payload": {"act": act}})
        d.update(stage=None, feedback=(), finished_reason=DONE, path=(*d["path"], DONE))
        return Transition(freeze(d), events)
    target = plans[t.to].stage
    feedback: tuple[str, ...] = ()
    rounds = d["rounds"]
    if loops:
        rounds = {**rounds, t.to: rounds.get(t.to, 0) + 1}
        cap = target.max_retries
        if cap is not None and rounds[t.to] > cap:
            reason = (f"{t.id} ({t.describe()}) would send work back to {t.to!r} a "
                      f"{ordinal(rounds[t.to])} time; its max_retries allows {cap}")
            return escalate(d, reason, events, act)
        feedback = (f"sent back by {stage_id} ({t.id}: {t.describe()}), round "
                    f"{rounds[t.to] + 1}",)
    missing = [n for n in target.needs if n not in d["artifacts"]]
    if missing:
        return escalate(d, f"stage {t.to!r} cannot start: it needs "
                              f"{', '.join(map(repr, missing))}, not produced yet",
                              events, act)
    events.append({"kind": "transition", "stage": t.to,
                   "attempt": d["attempts"].get(t.to, 0) + 1,
                   "summary": plan.labels[t.id],
                   "payload": {"from": stage_id, "transition": t.id, "loop": loops,
                               "round": rounds.get(t.to, 0) + 1}})
    d.update(stage=t.to, rounds=rounds, feedback=feedback, path=(*d["path"], t.to))
    return Transition(freeze(d), events)


def escalate(d: Draft, reason: str, events: list[Event], act: int
             ) -> Transition[PipelineState]:
    """End the run escalated, for `reason` (journaled)."""
    where = d["stage"]
    events.append({"kind": "escalate", "stage": where, "summary": reason,
                   "payload": {"act": act}})
    events.append({"kind": "finish", "verdict": ESCALATED, "version": d["version"],
                   "summary": reason, "payload": {"act": act}})
    entry = JournalEntry("escalation", reason, where, act)
    d.update(stage=None, previous=where, feedback=(), finished_reason=ESCALATED,
             reason=reason, journal=(*d["journal"], entry),
             path=(*d["path"], ESCALATED))
    return Transition(freeze(d), events)


def produced(stage: str, artifacts: Mapping[str, Any], versions: Mapping[str, int]) -> str:
    """A report's default summary: what the stage produced, with versions."""
    return f"{stage} produced " + (", ".join([f"{n} v{versions[n]}" for n in artifacts])
                                   or "nothing")


__all__ = ["Draft", "Event", "escalate", "failed", "freeze", "move", "passed", "produced",
           "verdicts"]
