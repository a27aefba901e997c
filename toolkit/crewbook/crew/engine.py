"""The crew loop (SPEC D1-D5), on the `crewbook.Loop` protocol.

**Crew loop.** Three roles take turns on each story of the backlog (`crew.backlog`):
analyst (frames the story, verdict ``done``) → developer (builds a new version,
``done``) → qa (``go`` or ``no-go``). A report from any other role than the expected
one, or with a verdict that role may not give, is refused (`LoopRefused`) and nothing
is logged. After each developer report the engine measures the bar (`core.bar`) and
caches the facts for that act; qa's ``go`` is refused while the bar is red or has not
been measured on the version judged. ``no-go`` sends the story back to the developer
(attempt + 1) with qa's summary and ``payload.findings`` as feedback. ``go`` covers
the story, then the cascade moves on by scope (`crew.cascade`).

Every accepted report is one act; at ``max_rounds`` acts the loop finishes with
``rounds_exhausted`` (``0`` = unlimited, as for ``max_epics``).

The engine steps a plain working state (`crewbook.crew.working`): an act checks the
report (`crew.refusals`), looks at the tasks file once (a stat; re-read only when it
changed), builds its events and changes, commits them, and only then takes them. The
`CrewState` that ``state``, ``view``, snapshots and the state file show is made from it
when asked; the contract and the status are built by `crew.views`.

The autonomous loop (D6) is in `crewbook.autonomous`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..artifacts.project import Project
from ..core.bar import bar_event, run_bar
from ..core.clock import utc_now_text
from ..core.loop import (
    Act,
    EventSink,
    JournalEntry,
    Loop,
    Snapshot,
    Status,
    Transition,
    append_events,
    appender,
    utc_now,
)
from ..core.measures import copy_measures
from ..errors import LoopRefused
from ..routing.router import Router
from .backlog import Backlog, Epic, Story
from .cascade import MAX_FINDINGS, Event, cover, echo, finish_event, next_story
from .model import STAGES, STATUS_LAST, WHOLE_EPIC, BarFacts, CrewState
from .refusals import check_report, is_retry
from .views import build_contract, crew_status
from .working import Rec, Working

if TYPE_CHECKING:
    from ..core.commit import StateStore
    from ..draw.model import GraphModel


@dataclass(frozen=True)
class CrewReport:
    """What a role reports (D2): its role, verdict, a compact summary, an optional payload
    (a JSON object; ``findings``, a list of texts, is fed back to the developer)."""

    role: str
    verdict: str
    summary: str
    payload: Mapping[str, Any] | None = None
    duration_ms: int | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost: float | None = None
    #: The act this report is for (`Act.act` of its contract): a retry of an act already
    #: accepted returns the next contract and logs nothing; a report for another act
    #: is refused (``stale``). None: the current act, unchecked.
    act: int | None = None


class CrewLoop(Loop[CrewState, CrewReport]):
    """The crew loop on one project; see the module docstring.

    ``store`` (set by `crewbook.crew.api`, a `core.commit.StateStore`) makes every accepted
    act and bar measure one commit of the ledger and the state file, under the project's
    lock; a loop whose file another caller changed since it was read refuses (``stale``).
    ``run_bar=False`` turns bar measuring and its gate off (simulations, benchmarks).
    """

    kind = "crew"
    finished_hint = ("start a new loop with crew_init(..., force=true) (command line: "
                     "crewbook crew init ... --force)")
    copy_state = False
    _work: Working
    _view: CrewState | None
    _rev: int

    def __init__(
        self, state: CrewState, *, project: Project, ledger: EventSink | None = None,
        clock: Callable[[], datetime] = utc_now, run_bar: bool = True,
        store: StateStore[CrewState] | None = None,
    ) -> None:
        self.project = project
        self.backlog = Backlog(project)
        self.routes = Router("crew", project, by_task=True)
        self.run_bar = run_bar
        self._store = store
        self._memo: tuple[int, str | None, Act] | None = None
        self._journal: dict[Rec, JournalEntry] = {}
        self._sink: tuple[EventSink | None, Callable[[list[Event]], Any]] = (None, _no_sink)
        super().__init__(state, ledger=ledger, run=state.run, clock=clock, acts=state.acts,
                         router=self.routes)

    # ------------------------------------------------------------------ the state
    # The engine works on a `Working` (plain data, appended to in place); `_state`, which
    # `Loop` reads for ``state``, ``view`` and snapshots and sets on ``restore``, is the
    # `CrewState` of it, built when asked and kept until the next change.
    @property
    def _state(self) -> CrewState:
        view = self._view
        if view is None:
            view = self._view = self._work.state()
        return view

    @_state.setter
    def _state(self, state: CrewState) -> None:
        self._work = Working.of(state)
        self._view = state
        self._rev = getattr(self, "_rev", 0) + 1

    def _take(self, up: Mapping[str, Any], rec: Rec | None = None,
              covered: tuple[str, str] | None = None, view: CrewState | None = None) -> None:
        """Apply one committed change to the working state (`view`: its `CrewState`, when
        the store already built it)."""
        self._work.apply(up, rec, covered)
        self._view = view
        self._rev += 1

    # ------------------------------------------------------------------ reading
    @property
    def config(self) -> Any:
        """The settings `crew_init` was given (`CrewConfig`)."""
        return self._work.config

    def is_finished(self) -> bool:
        """Whether a finished reason is set."""
        return self._work.finished_reason is not None

    def current_epic(self) -> Epic | None:
        """The epic the pointer is on."""
        w = self._work
        return self.backlog.epic(w.epic) if w.epic else None

    def current_story(self) -> Story | None:
        """The story the pointer is on."""
        epic = self.current_epic()
        return epic.story(self._work.story) if epic else None

    def bar_due(self) -> bool:
        """Whether qa is expected and the cached bar facts are not those of the version."""
        w = self._work
        return (self.run_bar and w.finished_reason is None and w.expected == "qa"
                and (w.bar is None or w.bar.act != w.dev_act))

    # ------------------------------------------------------------------ acting
    @contextmanager
    def _turn(self) -> Iterator[None]:
        """The project's lock, and a check under it that the state file is still ours."""
        if self._store is None:
            with nullcontext():
                yield
            return
        with self._store.fresh_turn("open_crew()"):
            yield

    def restore_kept(self, snapshot: Snapshot[CrewState]) -> Act:
        """Rewind to `snapshot` and save the restored state in the crew's state file, under
        its lock and refused as stale when another caller moved the loop, as each act is
        (the Stepper's Rewind): `crew_status` and the next `crew_step` see the rewind."""
        with self._turn():
            act = self.restore(snapshot)
            if self._store is not None:
                self._store.save(self.view)
        return act

    def report(self, report: CrewReport) -> Act:
        """Apply a role's report (refusals change and log nothing) as one commit of the
        ledger and the state file; then create a promoted epic's change, and measure the
        bar when qa is next."""
        if self._store is None:  # a loop in memory: no lock, no state file to check
            return self._report(report)
        with self._turn():
            return self._report(report)

    def _report(self, report: CrewReport) -> Act:
        """`Loop.report` on the working state: the act's events and changes are made
        (a refusal raises before anything changed), committed (the ledger, and the state
        file with a store), and only then taken."""
        if isinstance(report, CrewReport) and report.act is not None:
            done = self._retried(report)
            if done is not None:
                return done
        w = self._work
        if w.finished_reason is not None:
            raise LoopRefused(
                f"the {self.kind} loop has finished ({w.finished_reason}); nothing more can "
                f"be reported. {self.finished_hint}", code="finished")
        events, up, rec, covered = self._step(w, report, self.run)
        self._settle()
        view = None
        if self._store is None:
            sink = self.ledger
            if sink is not self._sink[0]:  # the sink's batch method, found once
                self._sink = (sink, appender(sink))
            self._sink[1](events)
        else:
            view = w.state(up, rec, covered)
            self._store.commit(self.ledger, events, view)
        written = self._written  # `_record` and `Working.apply`, inline: every act's path
        if written is not None:
            written.extend(events)
        w.__dict__.update(up)
        w.trail.append(rec)
        if covered is not None:
            w.stories_covered.append(covered)
            w.covered.add(covered)
        self._view = view
        self._rev += 1
        self._acts += 1
        if w.epic_axis is not None and w.epic and not self.backlog.epic(w.epic).exists:
            self.backlog.promote(w.epic_axis, w.epic)
        if self.run_bar and w.expected == "qa" and self.bar_due():
            self.measure_bar()  # settles what it changes itself
        return self._new_pending()  # settled above: `next_contract` without a second look

    def _retried(self, report: CrewReport) -> Act | None:
        """The next contract when `report` repeats an accepted act (idempotent retry);
        `LoopRefused` when it names another act; None to go on (`refusals.is_retry`)."""
        if not isinstance(report, CrewReport) or report.act is None:
            return None
        if is_retry(self._work, report.act, report.role, report.verdict, report.summary):
            return self.contract()
        return None

    def measure_bar(self) -> BarFacts:
        """Run every bar command now, log one ``bar`` event each, cache the facts."""
        w = self._work
        if w.dev_act is None:
            raise LoopRefused("no version to measure yet: the developer has not reported",
                              code="no_version")
        cfg = w.config
        with self._turn():
            runs = run_bar({str(k): v for k, v in cfg.bar.items()}, root=self.project.root,
                           timeout=cfg.bar_timeout, max_output=cfg.max_output)
            ts = self.clock().isoformat()
            events = [self._stamp({**bar_event(r, act=w.dev_act, attempt=w.attempt,
                                               version=w.version), "ts": ts}, ts) for r in runs]
            facts = BarFacts(act=w.dev_act, version=w.version, runs=tuple(runs))
            up = {"bar": facts, "bar_runs": w.bar_runs + len(runs)}
            self._settle()  # a contract returned before the bar keeps showing that state
            view = None
            if self._store is None:
                append_events(self.ledger, events)
            else:
                view = w.state(up)
                self._store.commit(self.ledger, events, view)
            self._record(events)
            self._take(up, view=view)
        return facts

    def transition(self, state: CrewState, report: CrewReport) -> Transition[CrewState]:
        """The next state and events for `report`, or `LoopRefused` (nothing changed).

        The loop itself steps its working state (`_report`); this is the same rule on a
        given state, for callers of the `Loop` protocol."""
        work = Working.of(state)
        events, up, rec, covered = self._step(work, report, None)
        work.apply(up, rec, covered)
        return Transition(work.state(), [{k: v for k, v in e.items() if k != "loop"}
                                         for e in events])

    def _step(self, w: Working, report: CrewReport, run: str | None
              ) -> tuple[list[Event], dict[str, Any], Rec, tuple[str, str] | None]:
        """One act on `w`, not applied: its events (stamped with the loop, and `run` when
        given), the fields it sets, its trail record, the story it covers; or
        `LoopRefused` (then nothing was made)."""
        if not isinstance(report, CrewReport):
            raise LoopRefused(f"the crew loop takes a CrewReport, not a "
                              f"{type(report).__name__}", code="bad_report")
        role, verdict, summary = report.role, report.verdict, report.summary
        check_report(w, role, verdict, summary, self.run_bar)  # refused: nothing was made
        act = w.acts + 1
        clock = self.clock
        ts = utc_now_text() if clock is utc_now else clock().isoformat()
        epic = self.backlog.epic(w.epic) if w.epic else None  # the act's one look at the file
        story = epic.story(w.story) if epic is not None else None
        task = story.next_task if story is not None else None
        payload = report.payload
        event: Event = {  # as `Loop._stamp` orders a stamped event
            "loop": self.kind, "ts": ts, "kind": "verdict" if role == "qa" else "report",
            "role": role, "stage": STAGES[role], "verdict": verdict, "attempt": w.attempt,
            "version": w.version + 1 if role == "developer" else w.version,
            "summary": summary,
            "payload": {"act": act, "epic": w.epic, "story": w.story,
                        "task": task.id if task is not None else None,
                        "data": dict(payload) if payload else {}},
        }
        copy_measures(report, event)
        events = [event]
        rec = Rec.new(act, ts, role, verdict, summary, w.epic, w.story)
        up: dict[str, Any] = {"acts": act, "previous": role}
        covered: tuple[str, str] | None = None
        if role == "analyst":
            up["expected"] = "developer"
            if w.story == WHOLE_EPIC and epic is not None:  # the analyst may have written tasks
                first = next_story(w, epic, None, up)
                if first is not None and first.title != WHOLE_EPIC:
                    up["story"] = first.title
        elif role == "developer":
            up.update(expected="qa", version=w.version + 1, dev_act=act, bar=None)
        elif verdict == "no-go":
            findings = (payload or {}).get("findings") or []
            up.update(expected="developer", attempt=w.attempt + 1, no_go=w.no_go + 1,
                      feedback=tuple([echo(str(f)) for f in (summary,
                                                              *list(findings)[:MAX_FINDINGS])]))
        else:
            assert w.epic is not None
            assert w.story is not None
            assert epic is not None
            covered = (w.epic, w.story)
            cover(self.backlog, self.kind, w, epic, covered, up, events, ts, act)
        limit = w.rounds
        if (limit is not None and act >= limit
                and up.get("finished_reason", w.finished_reason) is None):
            up["finished_reason"] = "rounds_exhausted"
            events.append(finish_event(
                self.kind, w, up, covered, ts, act, f"{act} acts: max_rounds {limit} reached"))
        if run is not None:  # last, as `Loop._stamp` puts it
            event["run"] = run
            if len(events) > 1:
                for e in events[1:]:
                    e["run"] = run
        return events, up, rec, covered

    # ------------------------------------------------------------------ contract
    def contract(self, document: str | None = None) -> Act:
        """The next act: role, route, expected output, prompt path (pure and idempotent)."""
        memo = self._memo
        if memo is not None and memo[0] == self._rev and memo[1] == document:
            return memo[2]
        act = build_contract(self, self._work, document, self._journal)
        self._memo = (self._rev, document, act)
        return act

    # ------------------------------------------------------------------ status
    def status(self, full: bool = False, last: int = STATUS_LAST) -> Status:
        """Read-only (D3): step, expected role, pointer, counters, caps, finished reason, and
        the last `last` acts (all with ``full=True``; the others counted in
        ``details["ledger_omitted"]``)."""
        return crew_status(self, self._work, full, last)

    # ------------------------------------------------------------------ drawing
    def graph_model(self) -> GraphModel:
        """The loop's state: the three roles, the expected one highlighted, the pointer."""
        from .graph import crew_graph

        return crew_graph(self)

    def trail_rows(self) -> list[dict[str, Any]]:
        """The accepted acts as acts-frame rows (`Loop.trail_frame`)."""
        return [{"act": r.act, "ts": r.ts, "role": r.role, "stage": STAGES[r.role],
                 "move": "verdict" if r.role == "qa" else "report", "verdict": r.verdict,
                 "version": None, "summary": r.summary} for r in self.view.trail]

    def frame(self) -> Any:
        """The accepted acts: act (Int64), ts (UTC), role, verdict (category), summary,
        epic, story."""
        from .frames import acts_frame

        return acts_frame(self._state.trail)

    def __repr__(self) -> str:
        s = self._work
        where = (f"finished ({s.finished_reason})" if s.finished_reason else
                 f"expects {s.expected} on {s.epic}/{s.story}")
        return f"<CrewLoop {s.run} {where} after {s.acts} acts>"

    def _repr_html_(self) -> str:
        return self.status()._repr_html_() + self.contract()._repr_html_()


def _no_sink(events: list[Event]) -> None:
    raise AssertionError("no sink resolved")  # never called: `_sink` starts unmatched
