"""What the crew loop shows (`crew.engine.CrewLoop`): the contract of the next act and
the status, built from the loop's working state (`crew.working.Working`). Read-only:
nothing here changes the loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..artifacts.project import Project
from ..core.acts import Act, Cap, JournalEntry, Status
from ..errors import did_you_mean
from .backlog import Epic, slug, task_text
from .cascade import echo, left
from .model import CONTRACT_TAIL, PROMPTS_DIR, STAGES, VERDICTS
from .working import Rec, Working

if TYPE_CHECKING:
    from .engine import CrewLoop


def build_contract(loop: CrewLoop, s: Working, document: str | None,
                   journal: dict[Rec, JournalEntry]) -> Act:
    """The next act of `loop` on its working state `s` (`CrewLoop.contract`): role,
    route, expected output, prompt path; `journal` remembers the entries made."""
    if s.finished_reason is not None:
        return Act(loop.kind, s.acts + 1, None, finished=True,
                   finished_reason=s.finished_reason,
                   details={"goal": s.config.goal, "epics_covered": list(s.epics_covered),
                            "stories_covered": len(s.stories_covered)})
    epic = loop.backlog.epic(s.epic) if s.epic else None
    story = epic.story(s.story) if epic else None
    task = story.next_task if story else None
    role = s.expected
    if document is not None:
        check_document(loop.project, epic, document)
    route = loop.routes.route(role, s.epic if epic and epic.exists else None, task,
                              classified=role == "developer")
    tracks = epic.tracks if epic else "tasks.md"
    suffix = f"-{slug(document)}" if document else ""
    details: dict[str, Any] = {
        "goal": s.config.goal, "scope": s.config.scope, "epic": s.epic, "axis": s.epic_axis,
        "story": s.story, "tracks": f"_codev/changes/{s.epic}/{tracks}",
        "task": {"id": task.id, "text": task_text(task)} if task else None,
        "tasks": story.rows if story else (),
        "version": s.version, "document": document,
    }
    if role == "analyst":
        receives: tuple[str, ...] = ("goal", "epic documents", tracks)
        expects = (f"story {s.story!r} framed: acceptance criteria and its tasks in {tracks}"
                   + (f" (document {document})" if document else "") + "; verdict done")
    elif role == "developer":
        receives = ("story", "tasks", "feedback") if s.feedback else ("story", "tasks")
        expects = (f"version {s.version + 1}: the story's tasks built test-first, boxes "
                   f"checked in {tracks}; verdict done")
    else:
        receives = ("story", "tasks", "bar facts")
        expects = (f"a verdict on version {s.version}: go (the story is delivered; needs a "
                   "green bar) or no-go with payload.findings")
        if s.bar is not None and s.bar.act == s.dev_act:
            details["bar"] = {"version": s.bar.version, "passed": s.bar.passed,
                              "lines": [r.line() for r in s.bar.runs],
                              # why it failed, so QA need not run the tests again
                              "tails": {r.name: r.tail[-CONTRACT_TAIL:]
                                        for r in s.bar.runs if not r.passed}}
    return Act(
        loop.kind, s.acts + 1, role, stage=STAGES[role], receives=receives, expects=expects,
        prompt_path=f"{PROMPTS_DIR}/{s.run}-act-{s.acts + 1:04d}-{role}{suffix}.json",
        budget={"rounds_left": left(s.acts, s.config.limit("rounds")),
                "epics_left": left(s.epics_started, s.config.limit("epics"))},
        attempt=s.attempt, moves=VERDICTS[role], feedback=s.feedback,
        journal=tuple(journal_entry(journal, r) for r in s.trail[-5:]),
        route=route, details=details,
    )

def journal_entry(journal: dict[Rec, JournalEntry], record: Rec) -> JournalEntry:
    """The journal entry of an accepted act (made once, kept in `journal`)."""
    entry = journal.get(record)
    if entry is None:
        entry = journal[record] = JournalEntry(
            "act", f"{record.role}: {record.verdict} — {echo(record.summary)}", record.role,
            record.act)
    return entry

def check_document(project: Project, epic: Epic | None, document: str) -> None:
    """Refuse a `document` that is not one of `epic`'s (`CrewError`, naming it)."""
    ids: list[str] = []
    if epic is not None and epic.exists:
        change = project.change(epic.name)
        ids = list(change.schema().order)
    if document not in ids:
        from ..errors import CrewError, Problem

        raise CrewError("unknown document", [Problem(
            "unknown_document", f"{document!r} is not a document of epic "
            f"{epic.name if epic else None!r}{did_you_mean(document, ids)}; documents: "
            f"{', '.join(ids) or 'none yet'}", key="document")])


def crew_status(loop: CrewLoop, s: Working, full: bool, last: int) -> Status:
    """Read-only (D3): step, expected role, pointer, counters, caps, finished reason, and
    the last `last` acts (all with ``full=True``; the others counted in
    ``details["ledger_omitted"]``)."""
    shown = s.trail if full else s.trail[-last:] if last else []
    story = loop.current_story() if s.epic else None
    task = story.next_task if story else None
    finished = s.finished_reason is not None
    return Status(
        loop=loop.kind, acts=s.acts, current=None if finished else s.expected,
        previous=s.previous, finished=finished, finished_reason=s.finished_reason,
        counters={"acts": s.acts, "version": s.version, "attempt": s.attempt,
                  "no_go": s.no_go, "stories_covered": len(s.stories_covered),
                  "epics_covered": len(s.epics_covered), "epics_started": s.epics_started,
                  "bar_runs": s.bar_runs},
        caps=(Cap("rounds", s.acts, s.config.limit("rounds")),
              Cap("epics", s.epics_started, s.config.limit("epics"))),
        path=tuple(f"{r.role}:{r.verdict}" for r in shown),
        details={
            "run": s.run, "goal": s.config.goal, "scope": s.config.scope,
            "step": None if finished else STAGES[s.expected],
            "expected_role": None if finished else s.expected,
            "pointer": {"epic": s.epic, "story": s.story, "task": task.id if task else None,
                        "axis": s.epic_axis},
            "bar": None if s.bar is None else {
                "act": s.bar.act, "version": s.bar.version, "passed": s.bar.passed,
                "lines": [r.line() for r in s.bar.runs]},
            "max_rounds": s.config.max_rounds, "max_epics": s.config.max_epics,
            "ledger": [{**r._asdict(), "summary": echo(r.summary)} for r in shown],
            "ledger_omitted": len(s.trail) - len(shown),
        },
    )


__all__ = ["build_contract", "check_document", "crew_status", "journal_entry"]
