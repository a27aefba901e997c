"""The autonomous loop (SPEC D6), on the `crewbook.Loop` protocol.

`AutonomousLoop.step(test_command)` advances Plan → Implementation → Recette → Delivery,
one phase per step. The recette runs the test command through the bar runner of
`crewbook.core.bar` (default: the test cycle of the first stack declared in
`_codev/crew.yaml`, `crewbook.artifacts.crew_file`; refused with
a clear message, nothing run or logged, when there is none); a failed recette goes back
to Implementation, at most ``max_recettes`` times (then ``escalate`` and
``recette_exhausted``); Delivery finishes with ``delivered``. Each phase's contract
carries the route of the crew role doing that work (`PHASE_ROLES`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..artifacts.crew_file import default_test_command
from ..artifacts.project import Project
from ..core.bar import bar_event, run_command
from ..core.loop import Act, Cap, EventSink, Loop, Snapshot, Status, Transition, utc_now
from ..core.loopfiles import MAX_SUMMARY_CHARS, PROMPTS_DIR
from ..errors import CrewError, LoopRefused
from ..models import model_data
from ..routing.router import Router
from .model import PHASE_ROLES, LoopState

if TYPE_CHECKING:
    from ..core.commit import StateStore
    from ..draw.model import GraphModel


@dataclass(frozen=True)
class LoopStep:
    """One step of the autonomous loop; at the recette, the test run it measured."""

    test: Any = None
    summary: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)


class AutonomousLoop(Loop[LoopState, LoopStep]):
    """Plan → Implementation → Recette → Delivery (D6); see the module docstring."""

    kind = "autonomous"
    finished_hint = ("start a new loop with loop_init(goal, force=true) (command line: "
                     "crewbook loop init ... --force)")
    copy_state = False

    def __init__(
        self, state: LoopState, *, project: Project, ledger: EventSink | None = None,
        clock: Callable[[], datetime] = utc_now, store: StateStore[LoopState] | None = None,
    ) -> None:
        self.project = project
        self.routes = Router("crew", project, by_task=True)
        self._store = store
        super().__init__(state, ledger=ledger, run=state.run, clock=clock, acts=state.steps,
                         router=self.routes)

    def is_finished(self) -> bool:
        """Whether a finished reason is set."""
        return self._state.finished_reason is not None

    def test_command(self, given: str | None = None) -> tuple[str, str | None]:
        """(command, cwd) the recette runs: `given`, else the first declared stack's test
        cycle; `LoopRefused` when there is neither."""
        if given is not None and given.strip():
            return given, None
        found = default_test_command(self.project.root)
        if found is None:
            raise LoopRefused(
                "the recette needs a test command: pass test_command (e.g. 'pytest -q'), or "
                "declare a stack with a test cycle in _codev/crew.yaml (stacks: [{name: "
                "python}], built-in models: python, node, pnpm, rust, go); no stack is "
                "declared, so nothing was run and nothing is logged", code="no_test_command")
        return found

    def step(self, test_command: str | None = None, summary: str = "", *,
             act: int | None = None) -> Act:
        """Advance one phase with the caller's `summary` of it (logged); at the recette,
        run the test command first (bar runner).

        `act` (the `Act.act` of the contract being stepped) makes a retry idempotent: a step
        already taken returns the current contract and runs and logs nothing."""
        with self.turn():
            s = self._state
            if act is not None and act != s.steps + 1:
                if act <= s.steps:
                    return self.contract()
                raise LoopRefused(f"this step is for act {act}, but the loop is at act "
                                  f"{s.steps + 1}; ask for the current contract", code="stale")
            if self.is_finished():
                return self.report(LoopStep())  # refused by Loop.report: it has finished
            if len(summary) > MAX_SUMMARY_CHARS:
                raise LoopRefused(f"the summary is {len(summary)} characters, over "
                                  f"{MAX_SUMMARY_CHARS}; say it in a few sentences",
                                  code="bad_report")
            test = None
            if s.phase == "recette":
                command, cwd = self.test_command(test_command)
                test = run_command(command, root=self.project.root, cwd=cwd, name="test",
                                   timeout=s.test_timeout)
            return self.report(LoopStep(test=test, summary=summary.strip()))

    @contextmanager
    def turn(self) -> Iterator[None]:
        """The state file's lock, and under it a check that the file is still this loop's
        (refused as ``stale`` when the CLI, the MCP server or another notebook acted);
        nothing for a loop in memory."""
        if self._store is None:
            yield
            return
        with self._store.fresh_turn("open_autonomous()"):
            yield

    def restore_kept(self, snapshot: Snapshot[LoopState]) -> Act:
        """Rewind to `snapshot` and save the restored state in the state file, under its
        lock (the Stepper's Rewind), so ``crewbook loop status`` sees the rewind."""
        with self.turn():
            act = self.restore(snapshot)
            if self._store is not None:
                self._store.save(self.view)
        return act

    def _commit(self, events: list[dict[str, Any]], state: LoopState) -> None:
        if self._store is None:
            super()._commit(events, state)
        else:
            self._store.commit(self.ledger, events, state)

    def transition(self, state: LoopState, step: LoopStep) -> Transition[LoopState]:
        """The next phase and its events (pure)."""
        if not isinstance(step, LoopStep):
            raise LoopRefused(f"the autonomous loop takes a LoopStep, not a "
                              f"{type(step).__name__}", code="bad_report")
        s = state
        n = s.steps + 1
        ts = self.clock().isoformat()
        attempt = s.recettes + 1
        base: dict[str, Any] = {"ts": ts, "attempt": attempt,
                                "payload": {"act": n, "phase": s.phase}}
        events: list[dict[str, Any]] = []
        up: dict[str, Any] = {"steps": n, "previous": s.phase}

        def move(to: str, why: str) -> None:
            up["phase"] = to
            events.append({**base, "kind": "transition", "stage": to, "summary": why,
                           "payload": {"act": n, "from": s.phase}})

        if s.phase == "plan":
            events.append({**base, "kind": "plan", "role": "analyst", "stage": "plan",
                           "summary": step.summary or f"plan for: {s.goal}"})
            move("implementation", "plan ready: implementation")
        elif s.phase == "implementation":
            events.append({**base, "kind": "report", "role": "developer",
                           "stage": "implementation", "verdict": "done",
                           "summary": step.summary or f"implementation, round {attempt}"})
            move("recette", "implementation done: recette")
        elif s.phase == "recette":
            run = step.test
            if run is None:
                raise LoopRefused("the recette step needs its test run (use step())",
                                  code="no_test")
            events.append({**bar_event(run, act=n, role="qa", attempt=attempt), "ts": ts})
            verdict = "pass" if run.passed else "fail"
            events.append({**base, "kind": "verdict", "role": "qa", "stage": "recette",
                           "verdict": verdict, "summary": f"recette {verdict}: {run.line()}",
                           "duration_ms": run.duration_ms})
            up.update(recettes=attempt, last_test=run)
            cap = s.max_recettes or None
            if run.passed:
                move("delivery", "recette passed: delivery")
            elif cap is not None and attempt >= cap:
                why = f"recette failed {attempt} times (max_recettes {cap}): escalated"
                events.append({**base, "kind": "escalate", "summary": why})
                events.append({**base, "kind": "finish", "verdict": "recette_exhausted",
                               "summary": why})
                up["finished_reason"] = "recette_exhausted"
            else:
                move("implementation", f"recette failed ({attempt}/{cap or '∞'}): back to "
                     "implementation")
        else:
            events.append({**base, "kind": "report", "role": "developer", "stage": "delivery",
                           "verdict": "done", "summary": step.summary or "delivered"})
            events.append({**base, "kind": "finish", "verdict": "delivered",
                           "summary": f"delivered: {s.goal}"})
            up["finished_reason"] = "delivered"
        return Transition(s.model_copy(update=up), events)

    def contract(self) -> Act:
        """The next phase, its route and what it expects."""
        s = self._state
        if s.finished_reason is not None:
            return Act(self.kind, s.steps + 1, None, finished=True,
                       finished_reason=s.finished_reason, details={"goal": s.goal})
        role = PHASE_ROLES[s.phase]
        expects = {
            "plan": "a plan for the goal, with its acceptance tests",
            "implementation": "the goal implemented; then step to the recette",
            "recette": "the test command passes (it runs at this step)",
            "delivery": "the work delivered",
        }[s.phase]
        default, problem = None, None
        if s.phase == "recette":
            try:
                default = default_test_command(self.project.root)
            except CrewError as exc:  # a broken crew.yaml: said here, refused at the step
                problem = str(exc)
        return Act(self.kind, s.steps + 1, role, stage=s.phase, expects=expects,
                   attempt=s.recettes + 1, moves=("step",),
                   prompt_path=f"{PROMPTS_DIR}/{s.run}-step-{s.steps + 1:04d}-{s.phase}.json",
                   budget={"recettes_left": Cap("recettes", s.recettes,
                                                     s.max_recettes or None).left},
                   route=self.routes.route(role),
                   details={"goal": s.goal, "phase": s.phase,
                            "default_test_command": default[0] if default else None,
                            "crew_file_problem": problem,
                            "last_test": model_data(s.last_test) if s.last_test else None})

    def status(self) -> Status:
        """Phase, steps, recettes and their cap, finished reason."""
        s = self._state
        finished = s.finished_reason is not None
        return Status(
            loop=self.kind, acts=s.steps, current=None if finished else s.phase,
            previous=s.previous, finished=finished, finished_reason=s.finished_reason,
            counters={"steps": s.steps, "recettes": s.recettes},
            caps=(Cap("recettes", s.recettes, s.max_recettes or None),),
            details={"run": s.run, "goal": s.goal, "phase": s.phase,
                     "last_test": model_data(s.last_test) if s.last_test else None},
        )

    def trail_rows(self) -> list[dict[str, Any]]:
        """The phase acts of this run (plan, implementation, recette verdicts, delivery)
        from its ledger, as acts-frame rows (`Loop.trail_frame`)."""
        reader = getattr(self.ledger, "frame", None) or getattr(self.ledger, "read", None)
        if reader is None:
            raise CrewError(f"cannot read the events of a {type(self.ledger).__name__}")
        events = reader()
        rows = []
        for e in events.astype(object).where(events.notna(), None).to_dict("records"):
            if e.get("run") != self._state.run or e.get("kind") not in (
                    "plan", "report", "verdict"):
                continue
            payload = e.get("payload") or {}
            rows.append({"act": payload.get("act"), "ts": e.get("ts"), "role": e.get("role"),
                         "stage": e.get("stage"), "move": e.get("kind"),
                         "verdict": e.get("verdict"), "version": None,
                         "summary": e.get("summary")})
        return rows

    def graph_model(self) -> GraphModel:
        """Plan → Implementation → Recette → Delivery, the current phase highlighted."""
        from .graph import autonomous_graph

        return autonomous_graph(self)

    def __repr__(self) -> str:
        s = self._state
        where = f"finished ({s.finished_reason})" if s.finished_reason else f"at {s.phase}"
        return f"<AutonomousLoop {s.run} {where} after {s.steps} steps>"

    def _repr_html_(self) -> str:
        return self.status()._repr_html_() + self.contract()._repr_html_()
