"""The pipeline loop (SPEC B3, B5–B8) on the Loop protocol of `crewbook.core.loop`.

A run sits in one stage at a time. ``contract()`` says which stage acts, the
artifacts it receives (its `needs`, with their versions), what it must produce, its
prompt, budget and attempt, the moves open to it, the feedback of its last failed
try and the decision journal. ``report(...)`` takes the stage's result:

- *refused* (`LoopRefused`, nothing changes, nothing is logged): the run has
  finished (``finished``); the report is for another stage (``wrong_stage``);
  it names an artifact the stage does not produce (``not_produced``); an artifact
  is not JSON data or the report is malformed (``bad_report``); it writes a file
  although its tools cannot write (``cannot_write``), outside the workspace
  (``unsafe_path``) or outside the stage's `writes` globs (``scope_creep``);
  with ``invalid="refuse"``, also when its work fails (``invalid_artifact``);
- *a failed try* (default ``invalid="retry"``): an artifact is missing, does not
  validate against its kind's JSON Schema, or names workspace paths that do not
  exist (``ground_references``). The errors are fed back to the next try; after
  ``max_retries`` retries (default `DEFAULT_MAX_RETRIES`) the run escalates;
- *passed*: the artifacts are stored (each with a version), then the stage's
  transitions are evaluated in file order and the first whose condition holds is
  taken. A transition that sends work back (a loop: to a stage no deeper than its
  source) counts one round for its target; past the target's ``max_retries`` the
  run escalates instead of looping. A stage whose `needs` are not all present
  cannot start: entering it escalates. ``done`` finishes the run.

Verdicts (a field an ``artifact_field_equals`` transition reads), steering and
approvals (`Steer` reports) and escalations go into the decision journal that
every contract carries (B8). Ledger events: ``init`` (with the first accepted
report), ``report``, ``verdict``, ``transition``, ``escalate``, ``finish``, and
``note`` for steering.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..core.loop import (
    Act,
    Cap,
    EventSink,
    JournalEntry,
    Loop,
    RouteSource,
    Status,
    Transition,
    utc_now,
)
from ..core.measures import copy_measures
from ..errors import ArtifactNotFoundError, LoopRefused, Problem, UsageError
from ..routing.router import Router
from .moves import Draft, Event, failed, freeze, passed
from .plan import DEFAULT_MAX_RETRIES, StagePlan, effective_retries, json_copy
from .rules import admit
from .rules import failures as work_failures
from .state import (
    InvalidPolicy,
    PipelineReport,
    PipelineState,
    StageReport,
    Steer,
    parse_report,
)

if TYPE_CHECKING:
    import pandas as pd

    from ..draw.model import GraphModel
    from .pipeline import Pipeline

__all__ = [
    "DEFAULT_MAX_RETRIES", "InvalidPolicy", "PipelineLoop", "PipelineReport", "PipelineState",
    "StageReport", "Steer", "effective_retries", "parse_report", "replay",
]



#: The state a run starts from, by start stage (states are never changed in place: one
#: is shared, as `crewbook.delivery` shares its first state).
_FIRST_STATES: dict[str, PipelineState] = {}


def _first_state(start: str) -> PipelineState:
    """The state of a run at `start`, made once per start stage."""
    state = _FIRST_STATES.get(start)
    if state is None:
        state = PipelineState(stage=start, path=(start,))
        if len(_FIRST_STATES) < 1024:
            _FIRST_STATES[start] = state
    return state


class PipelineLoop(Loop[PipelineState, PipelineReport]):
    """A run of a pipeline, stepped one report at a time (see the module docstring).

    Build it with ``pipeline.loop(workspace=...)``. `workspace` is the folder that
    ``ground_references`` paths are checked against (None: not checked, and
    ``status().details["grounded"]`` says so). `invalid` chooses what failed work
    does: ``"retry"`` (SPEC B: a failed try, fed back, capped, then escalation) or
    ``"refuse"`` (a refusal: nothing counted, nothing logged).
    """

    kind = "pipeline"
    copy_state = False
    fresh_events = True  # `transition` builds new event dicts: `report` stamps them in place

    def __init__(
        self, pipeline: Pipeline, workspace: str | Path | None = None, *,
        ledger: EventSink | None = None, run: str | None = None,
        clock: Callable[[], datetime] = utc_now, invalid: InvalidPolicy = "retry",
        state: PipelineState | None = None, acts: int = 0, router: RouteSource | None = None,
    ) -> None:
        if invalid not in ("retry", "refuse"):
            raise UsageError(f"invalid must be 'retry' or 'refuse', not {invalid!r}")
        self.pipeline = pipeline
        self.workspace = Path(workspace) if workspace is not None else None
        self.invalid: InvalidPolicy = invalid
        self._plans: dict[str, StagePlan] = pipeline.plans
        start = pipeline.model.start
        initial = state or _first_state(start)
        if router is None:
            router = Router("pipeline")
        super().__init__(initial, ledger=ledger, run=run, clock=clock, acts=acts, router=router)

    # ------------------------------------------------------------------ reading
    @property
    def artifacts(self) -> dict[str, Any]:
        """A copy of the latest artifacts, by name."""
        copied: dict[str, Any] = json_copy(dict(self._state.artifacts))
        return copied

    def artifact(self, name: str) -> Any:
        """A copy of one artifact's latest content (`ArtifactNotFoundError`, a KeyError,
        when it does not exist yet)."""
        if name not in self._state.artifacts:
            raise ArtifactNotFoundError(f"no artifact {name!r} yet; artifacts: "
                           f"{', '.join(self._state.artifacts) or 'none'}")
        return json_copy(self._state.artifacts[name])

    def contract(self) -> Act:
        """The next act; pure (called twice, returns equal Acts and writes nothing)."""
        s = self._state
        if s.finished_reason is not None or s.stage is None:
            return Act(self.kind, self._acts + 1, None, journal=s.journal, finished=True,
                       finished_reason=s.finished_reason,
                       details={"pipeline": self.pipeline.id, "reason": s.reason})
        plan = self._plans[s.stage]
        stage = plan.stage
        versions = s.versions
        return Act(
            self.kind, self._acts + 1, stage.id, stage=stage.id, receives=stage.needs,
            expects=plan.expects, prompt_path=stage.prompt,
            budget={"tokens": stage.token_budget, "retries_left": plan.retries - s.tries},
            attempt=s.attempts.get(stage.id, 0) + 1, moves=plan.moves, feedback=s.feedback,
            journal=s.journal, route=self.route_for(stage.id),
            details={
                "pipeline": self.pipeline.id,
                "inputs": {n: versions[n] for n in stage.needs if n in versions},
                "try": s.tries + 1, "round": s.path.count(stage.id), "version": s.version,
                "can_write": plan.writer,
                "writes": list(stage.writes) if stage.writes is not None else None,
                "ground_references": stage.ground_references,
            },
        )

    def status(self) -> Status:
        """Where the run is: stage, attempts, caps, how it ended, the journal."""
        s = self._state
        caps: list[Cap] = []
        if s.stage is not None:
            caps.append(Cap(f"{s.stage} retries", s.tries, self._plans[s.stage].retries))
        for t in self.pipeline.topology.loops():
            name = f"rounds back to {t.to}"
            if all(c.name != name for c in caps):
                caps.append(Cap(name, s.rounds.get(t.to, 0), self._plans[t.to].stage.max_retries))
        return Status(
            self.kind, self._acts, s.stage, s.previous, s.finished_reason is not None,
            s.finished_reason, counters=dict(s.attempts), caps=tuple(caps), journal=s.journal,
            path=s.path,
            details={"pipeline": self.pipeline.id, "artifacts": dict(s.versions),
                     "version": s.version, "reason": s.reason, "feedback": list(s.feedback),
                     "grounded": self.workspace is not None,
                     "last_transition": s.last_transition},
        )

    def is_finished(self) -> bool:
        """Whether the run reached `done` or escalated."""
        return self._state.finished_reason is not None

    # ----------------------------------------------------------------- reporting
    def report(self, report: PipelineReport | Mapping[str, Any] | None = None,
               **fields: Any) -> Act:
        """Apply a report, given as a `StageReport`, a `Steer`, JSON data, or keywords
        (``loop.report(stage="analyst", artifacts={"analysis": {...}})``)."""
        if type(report) is not StageReport and type(report) is not Steer:  # fast path first
            if report is None:
                report = fields
            elif fields:
                raise UsageError("give a report or keywords, not both")
            if isinstance(report, Mapping):
                report = parse_report(report)
        elif fields:
            raise UsageError("give a report or keywords, not both")
        return super().report(report)

    def steer(self, text: str, by: str = "human",
              kind: Literal["steering", "approval"] = "steering") -> Act:
        """Pin steering (or an approval) into the journal: ``report(Steer(...))``."""
        return self.report(Steer(text, by, kind))

    def transition(self, state: PipelineState, report: PipelineReport) -> Transition[PipelineState]:
        """The next state and events for `report`, or `LoopRefused`; pure.

        The next state is built in a draft (a plain dict of the state's fields, `d`)
        and frozen once at the end: `state` itself is never touched.
        """
        act = self._acts + 1
        events: list[Event] = []
        d: Draft = dict(state.__dict__)
        if not state.started:
            events.append(self._init_event())
            d["started"] = True
        if isinstance(report, Steer):
            entry = JournalEntry(report.kind, report.text, report.by, act)
            events.append({"kind": "note", "role": report.by, "stage": state.stage,
                           "summary": report.text,
                           "payload": {"journal": report.kind, "act": act}})
            d["journal"] = (*state.journal, entry)
            return Transition(freeze(d), events)
        if not isinstance(report, StageReport):
            raise LoopRefused(f"a pipeline report is a StageReport or Steer, not "
                              f"{type(report).__name__}", code="bad_report")
        stage_id = state.stage
        if stage_id is None:  # pragma: no cover - report() refuses finished runs first
            raise LoopRefused("the run has finished", code="finished")
        plan = self._plans[stage_id]
        if report.stage != stage_id:
            raise LoopRefused(
                f"the pipeline expects a report from stage {stage_id!r} (act {act}), not "
                f"{report.stage!r}", code="wrong_stage")
        artifacts, writes = admit(plan, report)
        failures = work_failures(plan, artifacts, self.workspace)
        if failures and self.invalid == "refuse":
            raise LoopRefused(f"stage {stage_id!r} failed: " + "; ".join(failures),
                              code="invalid_artifact")
        attempt = state.attempts.get(stage_id, 0) + 1
        base: Event = {"role": stage_id, "stage": stage_id, "attempt": attempt}
        copy_measures(report, base)
        d["attempts"] = {**state.attempts, stage_id: attempt}
        if failures:
            return failed(d, plan, report, failures, base, events, act)
        return passed(self._plans, self.pipeline.id, d, plan, report, artifacts, writes,
                      base, events, act)

    # ----------------------------------------------------------------- internals
    def _init_event(self) -> Event:
        p = self.pipeline
        return {"kind": "init", "summary": f"pipeline {p.id} starts at {p.model.start}",
                "payload": {"pipeline": p.id, "start": p.model.start,
                            "stages": list(p.topology.order),
                            "caps": {s.id: s.max_retries for s in p.model.stages}}}

    # ------------------------------------------------------------------ views
    def trail_rows(self) -> list[dict[str, Any]]:
        """The stage reports of this run as acts-frame rows (`Loop.trail_frame`)."""
        from .frames import acts, ledger_frame

        events = ledger_frame(self.ledger)
        when = dict(zip(events["seq"].tolist(), events["ts"].tolist(), strict=True)) \
            if len(events) else {}
        return [{"act": r["act"], "ts": when.get(r["seq"]), "role": r["stage"],
                 "stage": r["stage"], "move": "report", "verdict": r["verdict"],
                 "version": r["version"], "summary": r["summary"]}
                for r in acts(events).astype(object).where(lambda f: f.notna(), None)
                .to_dict("records")]

    def acts_frame(self) -> pd.DataFrame:
        """This run's reports as a DataFrame (see `crewbook.pipeline.frames.acts`)."""
        from .frames import acts, ledger_frame

        return acts(ledger_frame(self.ledger))

    def warnings(self) -> Sequence[Problem]:
        """The pipeline file's validation warnings (`Pipeline.warnings`)."""
        return self.pipeline.warnings

    def graph_model(self) -> GraphModel:
        """The pipeline's state diagram with this run on it (current stage, rounds...)."""
        from .graph import state_graph

        return state_graph(self.pipeline, self)

    def flow_model(self) -> GraphModel:
        """The artifact flow with the versions this run has produced."""
        from .graph import flow_graph

        return flow_graph(self.pipeline, self)


def replay(pipeline: Pipeline, reports: Sequence[PipelineReport | Mapping[str, Any]],
           **kwargs: Any) -> PipelineLoop:
    """A loop with `reports` applied in order (each must be accepted)."""
    loop = PipelineLoop(pipeline, **kwargs)
    for item in reports:
        loop.report(item)
    return loop
