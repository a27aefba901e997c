"""The autonomous loop's persisted API (SPEC D6), on a project's `_codev/crew/loop.json`:
`loop_init(goal)`, `loop_step(test_command=)`, `open_autonomous()`. The state file is in
the folder, and under the lock, of every persisted loop (`crewbook.core.loopfiles`)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from pydantic import ValidationError

from ..artifacts.project import Project, ProjectLike, as_project
from ..core.bar import DEFAULT_TIMEOUT
from ..core.commit import StateStore
from ..core.loop import Act, Status, utc_now
from ..core.loopfiles import next_run_id, project_turn, state_store
from ..errors import AlreadyExistsError, CrewError
from ..ledger.writer import Ledger
from ..models import pydantic_problems
from .engine import AutonomousLoop
from .model import DEFAULT_MAX_RECETTES, LOOP_LEDGER, LOOP_STATE_FILE, LoopState
from .prompt import write_loop_prompt

__all__ = ["loop_init", "loop_step", "open_autonomous"]


def _loop_store(proj: Project) -> StateStore[LoopState]:
    return state_store(proj, LoopState, LOOP_STATE_FILE, LOOP_LEDGER, "autonomous loop",
                       "loop_init (`crewbook loop init GOAL`)")


def open_autonomous(project: ProjectLike = None, *,
                    clock: Callable[[], datetime] = utc_now) -> AutonomousLoop:
    """The project's autonomous loop from `_codev/crew/loop.json` (each step saves it)."""
    proj = as_project(project)
    store = _loop_store(proj)
    state = store.load()
    return AutonomousLoop(state, project=proj,
                          ledger=Ledger(proj.root / LOOP_LEDGER, run=state.run), clock=clock,
                          store=store)


def loop_init(goal: str, force: bool = False, *, project: ProjectLike = None,
              max_recettes: int = DEFAULT_MAX_RECETTES, test_timeout: float = DEFAULT_TIMEOUT,
              clock: Callable[[], datetime] = utc_now) -> Status:
    """Start the autonomous loop (D6) at Plan; an existing one only with `force`."""
    proj = as_project(project)
    with project_turn(proj):
        return _loop_init(proj, goal, force, max_recettes, test_timeout, clock)


def _loop_init(proj: Project, goal: str, force: bool, max_recettes: int, test_timeout: float,
               clock: Callable[[], datetime]) -> Status:
    store = _loop_store(proj)
    store.recover()
    if store.exists() and not force:
        raise AlreadyExistsError(f"an autonomous loop already exists ({LOOP_STATE_FILE}); "
                                 "pass force=True to start a new one",
                                 store.path).naming("force")
    run = next_run_id(proj.root / LOOP_LEDGER, "loop")
    try:
        state = LoopState(run=run, goal=goal.strip(), max_recettes=max_recettes,
                          test_timeout=test_timeout)
    except ValidationError as exc:
        raise CrewError("cannot start the autonomous loop", pydantic_problems(exc)) from None
    with Ledger(proj.root / LOOP_LEDGER, run=run) as ledger:
        store.commit(ledger, [{"kind": "init", "loop": "autonomous", "ts": clock().isoformat(),
                               "run": run, "summary": f"autonomous loop: {state.goal}",
                               "payload": {"goal": state.goal, "max_recettes": max_recettes,
                                           "test_timeout": test_timeout}}], state)
    loop = open_autonomous(proj, clock=clock)
    write_loop_prompt(proj.root, loop.contract())  # the first phase's, as every step's
    return loop.status()


def loop_step(test_command: str | None = None, *, project: ProjectLike = None,
              summary: str = "", clock: Callable[[], datetime] = utc_now,
              act: int | None = None) -> Act:
    """Advance the autonomous loop one phase (D6) with a `summary` of it; returns the next
    contract, its prompt written to ``act.prompt_path`` (`{"prompt": ...}`). `act` (the
    contract's `Act.act`) makes a retry idempotent: a step already taken is not redone."""
    proj = as_project(project)
    with project_turn(proj):
        following = open_autonomous(proj, clock=clock).step(test_command, summary, act=act)
        write_loop_prompt(proj.root, following)
    return following
