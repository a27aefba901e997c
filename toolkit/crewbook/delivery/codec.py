"""What can be reported to a delivery loop: the coordinator's moves, the agents' reports,
and the platform's timer (SPEC C3, C4.4).

Coordinator moves (the architect, staying on as coordinator): `Plan` (with acceptance
criteria), `Delegate` (one role, with instructions; ``fixes`` when sending work back;
``focus`` for a focused recheck), `Answer` (a decision and a reason), `Revise`,
`Finalise`, `Fail`. None of them carries a verdict (C4.1).

Agent reports: `Built` (developer: a new version and the files changed), `Judgement`
(QA or the reviewer: a verdict on one version, with findings), `Result` (the other
agents: findings), `Question` (any agent). In standard mode the architect reports its
`Plan` like any agent. The platform reports `Expire` when a wait passes its deadline.

Every report may carry measures (``duration_ms``, ``tokens_in``, ``tokens_out``,
``cost``); ``duration_ms`` moves the task's own time (see `crewbook.core.clock.ManualClock`).
`parse_report` reads any of them from JSON data, `serialize_report` writes it, and
`DeliveryCodec` also rebuilds them from the ledger events of a run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from typing import Any, Literal

from ..core.family import CodecBase, Replay
from ..core.form import refuse_unknown_keys
from ..core.measures import measures_of
from ..errors import LoopRefused, did_you_mean
from .diffstat import ChangeSummary
from .state import TaskState

DeliveryPath = Literal["full", "already-done", "quick-fix"]
PATHS: tuple[str, ...] = ("full", "already-done", "quick-fix")


@dataclass(frozen=True, kw_only=True)
class Measured:
    """Measures any report may carry."""

    duration_ms: int | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost: float | None = None


# ---------------------------------------------------------------- coordinator moves
@dataclass(frozen=True)
class Plan(Measured):
    """The plan and its acceptance criteria; `path` is how the task reaches the gates
    (``quick-fix`` names the `files` the fix may touch)."""

    criteria: tuple[str, ...]
    summary: str = ""
    path: DeliveryPath = "full"
    files: tuple[str, ...] = ()


@dataclass(frozen=True)
class Revise(Measured):
    """A revised plan (counts against the plan-revision cap)."""

    criteria: tuple[str, ...]
    summary: str = ""
    path: DeliveryPath | None = None
    files: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Delegate(Measured):
    """Hand work to one role: the goal, the criteria to watch and, when sending work
    back, the exact `fixes`. `focus` (QA only, focused recheck): start from the finding."""

    role: str
    instructions: str
    fixes: tuple[str, ...] = ()
    focus: bool = False


@dataclass(frozen=True)
class Answer(Measured):
    """The coordinator's answer to the pending question: a decision and its reason."""

    decision: str
    reason: str


@dataclass(frozen=True)
class Finalise(Measured):
    """Close the task: the code decides the outcome (pull request or already done)."""

    summary: str = ""


@dataclass(frozen=True)
class Fail(Measured):
    """End the task as failed, with the reason."""

    reason: str


# ------------------------------------------------------------------- agent reports
@dataclass(frozen=True)
class Built(Measured):
    """The developer's report: the files changed (none: no change, the version stays),
    optionally the change summary (for the risk-based review policy), the branch head
    and the steps used."""

    files: tuple[str, ...] = ()
    summary: str = ""
    change: ChangeSummary | None = None
    head: str | None = None
    steps: int | None = None
    role: str = "developer"


@dataclass(frozen=True)
class Judgement(Measured):
    """A verdict on one version: QA ``pass``/``fail``, the reviewer ``approved``/``changes``.
    `version` defaults to the version the role was launched on."""

    role: str
    verdict: str
    version: int | None = None
    findings: tuple[str, ...] = ()
    summary: str = ""


@dataclass(frozen=True)
class Result(Measured):
    """Findings of a role that gives no verdict (explorer, web tester, dependency analyser)."""

    role: str
    summary: str
    findings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Question(Measured):
    """An agent asks the coordinator; the wait pauses until the answer."""

    role: str
    text: str


@dataclass(frozen=True)
class Expire(Measured):
    """The platform's timer: the wait in progress passed its deadline."""


Move = Plan | Revise | Delegate | Answer | Finalise | Fail
AgentReport = Built | Judgement | Result | Question
DeliveryReport = Move | AgentReport | Expire
MOVES: tuple[str, ...] = ("plan", "delegate", "answer", "revise", "finalise", "fail")
_MOVE_TYPES: dict[str, type[Any]] = {
    "plan": Plan, "revise": Revise, "delegate": Delegate, "answer": Answer,
    "finalise": Finalise, "fail": Fail,
}
_AGENT_TYPES: dict[str, type[Any]] = {
    "built": Built, "judgement": Judgement, "result": Result, "question": Question,
    "expire": Expire,
}


#: The name of each move and report type (`move_name`), the first name a type has.
_NAME_OF_TYPE: dict[type[Any], str] = {}
for _name, _cls in (_MOVE_TYPES | _AGENT_TYPES).items():
    _NAME_OF_TYPE.setdefault(_cls, _name)


def move_name(report: object) -> str:
    """The move or report name of `report` (``delegate``, ``built``…)."""
    name = _NAME_OF_TYPE.get(type(report))
    return name if name is not None else type(report).__name__.lower()


def parse_report(data: Mapping[str, Any]) -> DeliveryReport:
    """A report from JSON data: ``{"move": "delegate", "role": "qa", "instructions": …}``
    for the coordinator, ``{"report": "judgement", "role": "qa", "verdict": "pass"}`` for
    an agent, ``{"report": "expire"}`` for the timer. Raises `LoopRefused` (``bad_report``).
    """
    if not isinstance(data, Mapping):
        raise LoopRefused("a report is a JSON object", code="bad_report")
    values = dict(data)
    if "move" in values:
        name, table, key = values.pop("move"), _MOVE_TYPES, "move"
        if "verdict" in values:
            raise LoopRefused("a coordinator move carries no verdict: only QA and the reviewer "
                              "give verdicts, each in its own report (C4.1)",
                              code="not_allowed")
    elif "report" in values:
        name, table, key = values.pop("report"), _AGENT_TYPES, "report"
    else:
        raise LoopRefused("a report names its kind: 'move' (plan, delegate, answer, revise, "
                          "finalise, fail) or 'report' (built, judgement, result, question, "
                          "expire)", code="bad_report")
    cls = table.get(str(name))
    if cls is None:
        raise LoopRefused(f"unknown {key} {name!r}{did_you_mean(str(name), table)}; "
                          f"{key}s: {', '.join(table)}", code="bad_report")
    refuse_unknown_keys(values, (f.name for f in fields(cls)), f"{key} {name!r}")
    for f in ("criteria", "files", "fixes", "findings"):
        if f in values and values[f] is not None:
            if not isinstance(values[f], list | tuple) or not all(
                    isinstance(x, str) for x in values[f]):
                raise LoopRefused(f"{f!r} is a list of texts", code="bad_report")
            values[f] = tuple(values[f])
    if isinstance(values.get("change"), Mapping):
        change = values["change"]
        values["change"] = ChangeSummary.of(
            {p: tuple(v) if isinstance(v, list) else v for p, v in change.get("lines", {}).items()},
            binaries=change.get("binaries", ()), symlinks=change.get("symlinks", ()),
            submodules=change.get("submodules", ()))
    try:
        report: DeliveryReport = cls(**values)
    except TypeError as exc:
        raise LoopRefused(f"{key} {name!r}: {exc}", code="bad_report") from None
    return report


def serialize_report(report: Any) -> dict[str, Any]:
    """`report` as the JSON data `parse_report` reads back (default values left out)."""
    name = move_name(report)
    if name not in _MOVE_TYPES and name not in _AGENT_TYPES:
        known = ", ".join([*_MOVE_TYPES, *_AGENT_TYPES])
        raise LoopRefused(f"a delivery report is one of {known}, not {type(report).__name__}",
                          code="bad_report")
    data: dict[str, Any] = {("move" if name in _MOVE_TYPES else "report"): name}
    for f in fields(report):
        value = getattr(report, f.name)
        if value == f.default:
            continue
        if isinstance(value, ChangeSummary):  # kept as it is: parse_report takes it back
            data[f.name] = value
            continue
        data[f.name] = list(value) if isinstance(value, tuple) else value
    return data


class DeliveryCodec(CodecBase[TaskState, DeliveryReport]):
    """Delivery reports as plain mappings, and back from a run's ledger events."""

    parse = staticmethod(parse_report)
    serialize = staticmethod(serialize_report)

    def report_of(self, event: Mapping[str, Any], replay: Replay[TaskState, DeliveryReport]
                  ) -> DeliveryReport | None:
        """The move or report that wrote `event`, or None."""
        e = event
        kind, role, p = e.get("kind"), e.get("role"), e.get("payload") or {}
        m = measures_of(e)
        if kind == "plan":
            criteria = tuple(p.get("criteria") or ())
            if p.get("revision"):
                return Revise(criteria, path=p.get("path"), files=tuple(p.get("files") or ()),
                              **m)
            return Plan(criteria, path=p.get("path") or "full",
                        files=tuple(p.get("files") or ()), summary=str(e.get("summary") or ""),
                        **m)
        if kind == "act" and p.get("by") == "architect":
            return Delegate(str(role), str(e.get("summary") or "continue"),
                            fixes=tuple(p.get("fixes") or ()), focus=bool(p.get("focus")), **m)
        if kind == "report" and role == "developer":
            steps = p.get("steps")
            return Built(tuple(p.get("files") or ()), head=p.get("head"),
                         steps=steps if isinstance(steps, int) else None, **m)
        if kind == "report" and role is not None:
            return Result(str(role), str(e.get("summary") or ""),
                          tuple(p.get("findings") or ()), **m)
        if kind == "verdict":
            return Judgement(str(role), str(e.get("verdict")), e.get("version"),
                             tuple(p.get("findings") or ()), **m)
        if kind == "question":
            return Question(str(role), str(e.get("summary") or "?"), **m)
        if kind == "answer":
            return Answer(str(p.get("decision") or "go on"), str(p.get("reason") or "-"), **m)
        if kind == "error" and p.get("reason") == "wait_expired":
            return Expire()
        if kind == "finish" and role == "architect":
            if e.get("verdict") == "failed":
                return Fail(str(e.get("summary") or "failed"), **m)
            return Finalise(**m)
        return None

    def time_of(self, event: Mapping[str, Any], report: DeliveryReport) -> datetime | None:
        """When the act started: the event's time less the act's own duration."""
        when = event.get("ts")
        if not isinstance(when, datetime):
            return None
        return when - timedelta(milliseconds=measures_of(event).get("duration_ms") or 0)
