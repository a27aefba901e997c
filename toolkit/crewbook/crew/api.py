"""The crew operations as functions on a project (D1-D6): load the persisted loop, act,
save. The CLI (`crewbook crew …`), the MCP server (`crewbook mcp`) and a notebook call
these, so they can take turns on one loop.

- `crew_init(goal, scope, max_rounds, max_epics, bar, force)` → `Status`
- `crew_step(document=None)` → `Act` (writes the prompt file; measures the bar at qa
  when the cached facts are not those of the version; called twice: the same, nothing
  new written)
- `crew_report(role, verdict, summary, payload | payload_path)` → the next `Act`
- `crew_status(full=False)` → `Status`
- `open_crew()` → the `CrewLoop` itself (stepping it saves the state file)

Files: see `crewbook.crew.model` (everything under ``_codev/crew/``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from ..artifacts.project import Project, ProjectLike, as_project
from ..core.bar import DEFAULT_TIMEOUT
from ..core.commit import StateStore
from ..core.loop import Act, Status, utc_now
from ..core.loopfiles import next_run_id, project_turn, state_store, write_prompt
from ..errors import AlreadyExistsError, CrewError, Problem, UnsafePathError
from ..ledger.writer import Ledger
from ..models import model_data, pydantic_problems
from .backlog import Backlog, slug
from .barcommands import normalise_bar
from .cascade import next_axis
from .checks import load_payload
from .contracts import crew_prompt
from .engine import CrewLoop, CrewReport
from .model import (
    CREW_LEDGER,
    PROMPTS_DIR,
    SAFE_NAME,
    STATE_FILE,
    STATUS_LAST,
    WHOLE_EPIC,
    CrewConfig,
    CrewState,
)


# ---------------------------------------------------------------------- state files
def _crew_store(proj: Project) -> StateStore[CrewState]:
    return state_store(proj, CrewState, STATE_FILE, CREW_LEDGER, "crew loop",
                  "crew_init (`crewbook crew init GOAL`)")


def open_crew(project: ProjectLike = None, *, clock: Callable[[], datetime] = utc_now,
              run_bar: bool = True) -> CrewLoop:
    """The project's crew loop, from `_codev/crew/state.json`; every accepted act and bar
    measure saves it back (and a loop whose file changed since it was opened refuses)."""
    proj = as_project(project)
    store = _crew_store(proj)
    state = store.load()
    return CrewLoop(state, project=proj, ledger=Ledger(proj.root / CREW_LEDGER, run=state.run),
                    clock=clock, run_bar=run_bar, store=store)


# ---------------------------------------------------------------------- crew loop
def crew_init(
    goal: str, scope: str = "epic", max_rounds: int = 100, max_epics: int = 3,
    bar: Mapping[str, Any] | None = None, force: bool = False, *, project: ProjectLike = None,
    epic: str | None = None, bar_timeout: float = DEFAULT_TIMEOUT,
    clock: Callable[[], datetime] = utc_now,
) -> Status:
    """Start the crew loop (D1) and write its state and ``init`` event.

    `scope` story|epic|all|workshop; `max_rounds`/`max_epics` ``0`` = unlimited; `bar`
    maps test/lint/typecheck/build to a command (at least one); an existing loop is
    overwritten only with `force` (its ledger keeps the old run). `epic` picks the change
    to start on (default: the first change with an open story; scope workshop starts on
    the first workshop axis).
    """
    proj = as_project(project)
    with project_turn(proj):
        return _crew_init(proj, goal, scope, max_rounds, max_epics, bar, force, epic,
                          bar_timeout, clock)


def _crew_init(proj: Project, goal: str, scope: str, max_rounds: int, max_epics: int,
               bar: Mapping[str, Any] | None, force: bool, epic: str | None,
               bar_timeout: float, clock: Callable[[], datetime]) -> Status:
    store = _crew_store(proj)
    store.recover()
    if store.exists() and not force:
        raise AlreadyExistsError(f"a crew loop already exists ({STATE_FILE}); pass force=True "
                                 "to start a new one over it", store.path).naming("force")
    commands = normalise_bar(bar, proj)
    try:
        config = CrewConfig(goal=goal, scope=scope, max_rounds=max_rounds,
                            max_epics=max_epics, bar=commands, bar_timeout=bar_timeout)
    except ValidationError as exc:
        raise CrewError("cannot start the crew loop", pydantic_problems(exc)) from None
    backlog = Backlog(proj)
    first, axis = _first_epic(backlog, config, epic)
    story = WHOLE_EPIC
    if axis is None:
        opened = backlog.open_stories(first, set())
        story = opened[0].title if opened else WHOLE_EPIC
    else:
        backlog.promote(axis, first)
    run = next_run_id(proj.root / CREW_LEDGER, "crew")
    state = CrewState(run=run, config=config, epic=first, epic_axis=axis, story=story,
                      promoted=(axis,) if axis else ())
    with Ledger(proj.root / CREW_LEDGER, run=run) as ledger:
        store.commit(ledger, [{"kind": "init", "loop": "crew", "ts": clock().isoformat(),
                               "run": run, "summary": f"crew loop: {config.goal}",
                               "payload": {**model_data(config), "epic": first, "story": story,
                                           "axis": axis}}], state)
    return open_crew(proj, clock=clock).status()


def _first_epic(backlog: Backlog, config: CrewConfig, epic: str | None
                ) -> tuple[str, str | None]:
    if epic is not None:
        backlog.project.change(epic)  # a clear ChangeNotFoundError with a did-you-mean
        return epic, None
    if config.scope != "workshop":
        name = backlog.first_open(set(), set())
        if name is not None:
            return name, None
    if config.scope in ("all", "workshop"):
        name, axis = next_axis(backlog, (), set())
        if name is not None:
            return name, axis
    where = {"workshop": "the workshop is empty",
             "all": "no change has an open story and the workshop is empty"}.get(
                 config.scope, "no change has an open story")
    raise CrewError("nothing to deliver", [Problem(
        "nothing_to_deliver", f"scope {config.scope}: {where}"
        + "; create a change (`crewbook new change NAME`) with tasks, or list axes under "
        "`workshop:` in _codev/crew.yaml", key="scope")])


def crew_step(document: str | None = None, *, project: ProjectLike = None,
              clock: Callable[[], datetime] = utc_now) -> Act:
    """The contract of the next act (D4); its prompt is written to ``act.prompt_path``
    (under the project, `{"prompt": ...}`). Does not advance the loop; at the qa step it
    measures the bar first when the cached facts are not those of the current version."""
    proj = as_project(project)
    with project_turn(proj):
        loop = open_crew(proj, clock=clock)
        if loop.bar_due():
            loop.measure_bar()
        act = loop.contract(document)
        _write_prompt(loop, act)
    return act


def _write_prompt(loop: CrewLoop, act: Act) -> None:
    if act.prompt_path is not None:
        folder, _, name = act.prompt_path.rpartition("/")
        if folder != PROMPTS_DIR or not SAFE_NAME.fullmatch(name):
            raise UnsafePathError(f"prompt path {act.prompt_path!r} is refused: prompts are "
                                  f"written as one file under {PROMPTS_DIR} only")
        write_prompt(loop.project.root, act.prompt_path, crew_prompt(act, loop.config.goal))


def crew_report(
    role: str, verdict: str, summary: str, payload: Mapping[str, Any] | None = None,
    payload_path: str | os.PathLike[str] | None = None, *, project: ProjectLike = None,
    duration_ms: int | None = None, tokens_in: int | None = None, tokens_out: int | None = None,
    cost: float | None = None, clock: Callable[[], datetime] = utc_now, act: int | None = None,
) -> Act:
    """Report the act of `role` (D2); returns the next act (its prompt written). A refused
    report raises `LoopRefused` or `CrewError` and writes nothing. `act` (the contract's
    `Act.act`) makes a retry idempotent: an act already accepted is not logged again."""
    proj = as_project(project)
    data = load_payload(payload, payload_path, proj)
    with project_turn(proj):
        loop = open_crew(proj, clock=clock)
        following = loop.report(CrewReport(role, verdict, summary, data, duration_ms, tokens_in,
                                           tokens_out, cost, act))
        _write_prompt(loop, following)
    return following


def crew_status(full: bool = False, *, project: ProjectLike = None,
                last: int = STATUS_LAST) -> Status:
    """The crew loop's status (D3), read-only."""
    return open_crew(project).status(full=full, last=last)


__all__ = [
    "crew_init", "crew_report", "crew_status", "crew_step", "load_payload", "next_run_id",
    "normalise_bar", "open_crew", "project_turn", "slug", "state_store",
]
