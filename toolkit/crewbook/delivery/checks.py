"""The rules of SPEC C on files, as problems: only the developer writes (C1), only QA and
the reviewer give verdicts (C4.1). `load_catalogue` raises with every problem found.

Also the rules of the standard and coordinator loops on their ledgers (registered with
`crewbook.ledger.conformance`): verdicts only from QA and the reviewer, each report from
the role last launched, finalising only a version QA passed, launches, plan revisions
and steps within the task's limits."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from ..errors import Problem, did_you_mean
from ..ledger.conformance import Event, LoopRules, count_cap
from ..sources import SourceDoc
from .model import (
    DEVELOPER,
    JUDGES,
    QA,
    REVIEWER,
    ROLE_IDS,
    CatalogueFile,
    Limits,
    ToolSpec,
)


def catalogue_problems(model: CatalogueFile, doc: SourceDoc) -> list[Problem]:
    """Every C1 / C4.1 problem of a catalogue file: duplicate roles, unknown tools, a
    role other than the developer that writes, a role other than QA and the reviewer
    that judges."""
    problems: list[Problem] = []
    seen: set[str] = set()
    for i, r in enumerate(model.roles):
        if r.id in seen:
            problems.append(doc.problem("duplicate_id", f"role {r.id!r} is declared twice",
                                        ("roles", i, "id")))
        seen.add(r.id)
        for j, tool in enumerate(r.tools):
            if tool not in model.tools:
                problems.append(doc.problem(
                    "unknown_tool", f"unknown tool {tool!r}{did_you_mean(tool, model.tools)}",
                    ("roles", i, "tools", j)))
        problems += rule_problems(r.id, r.writes, bool(r.verdicts), r.tools, model.tools, doc,
                                   ("roles", i))
        if r.writes and r.id != DEVELOPER:
            problems.append(doc.problem(
                "write_not_allowed", f"role {r.id!r} is marked `writes: true`; only the "
                "developer may change the code (SPEC C1)", ("roles", i, "writes")))
        if r.verdicts and r.id not in JUDGES:
            problems.append(doc.problem(
                "verdict_not_allowed", f"role {r.id!r} lists verdicts; only QA and the reviewer "
                "give verdicts (SPEC C4.1)", ("roles", i, "verdicts")))
    return problems


def rule_problems(role_id: str, writes: bool, judges: bool, tools: Sequence[str],
                   specs: Mapping[str, ToolSpec], doc: SourceDoc,
                   where: tuple[str | int, ...]) -> list[Problem]:
    """The C1 / C4.1 rules on one role's tool set."""
    problems: list[Problem] = []
    writing = [t for t in tools if t in specs and specs[t].writes]
    judging = [t for t in tools if t in specs and specs[t].judges]
    if writing and not writes:
        problems.append(doc.problem(
            "write_not_allowed",
            f"role {role_id!r} may not change the code, yet it would get "
            f"{', '.join(map(repr, writing))}, which write to the repository: only the developer "
            "may write (SPEC C1). Give read-only tools instead, or give this work to the developer",
            (*where, "tools")))
    if judging and not judges:
        problems.append(doc.problem(
            "verdict_not_allowed",
            f"role {role_id!r} would get {', '.join(map(repr, judging))}: only QA and the "
            "reviewer give verdicts (SPEC C4.1)", (*where, "tools")))
    if writes and not writing:
        problems.append(doc.problem(
            "developer_cannot_write",
            f"role {role_id!r} must keep at least one tool that writes "
            f"({', '.join(t for t, s in specs.items() if s.writes)}): it builds every version",
            (*where, "tools")))
    return problems


# -- the rules of the delivery loops, checked on their ledgers -----------------------------


def _caps(events: Sequence[Event]) -> list[tuple[int | None, str, str]]:
    """C4.3 on a ledger: launches per role, plan revisions and steps within the task's
    limits (from the ``init`` payload; a ledger without them is not checked)."""
    payload = events[0].get("payload") if events and events[0]["kind"] == "init" else None
    raw = payload.get("limits") if isinstance(payload, dict) else None
    if not isinstance(raw, dict):
        return []
    try:
        limits = Limits.model_validate(raw)
    except ValueError:
        return []
    out: list[tuple[int | None, str, str]] = []
    for role in sorted({str(e["role"]) for e in events if e["kind"] == "act" and e["role"]}):
        out += count_cap(events, what=f"{role} launched", limit=limits.launch_limit(role),
                         match=_launch_of(role))
    out += count_cap(events, what="plan revisions", limit=limits.plan_revisions,
                     match=lambda e: e["kind"] == "plan" and _revision(e) > 0)
    if limits.steps is not None:  # at the cap only finalise or fail remain (one more act)
        for event in events:
            act = (event.get("payload") or {}).get("act")
            if isinstance(act, int) and act > limits.steps and event["kind"] not in (
                    "finish", "escalate", "error"):
                out.append((int(event["seq"]), "cap_exceeded",
                            f"act {act} where the task allows {limits.steps} steps; at the "
                            "cap only finalise or fail remain (C4.3)"))
                break
    return out


def _launch_of(role: str) -> Callable[[Event], bool]:
    def match(event: Event) -> bool:
        return bool(event["kind"] == "act" and event["role"] == role)

    return match


def _revision(event: Event) -> int:
    value = (event.get("payload") or {}).get("revision", 0)
    return value if isinstance(value, int) else 0


def _limits(events: Sequence[Event]) -> Limits | None:
    payload = events[0].get("payload") if events and events[0]["kind"] == "init" else None
    raw = payload.get("limits") if isinstance(payload, dict) else None
    try:
        return Limits.model_validate(raw) if isinstance(raw, dict) else None
    except ValueError:
        return None


def _waits(events: Sequence[Event]) -> list[tuple[int | None, str, str]]:
    """C4.4 on a ledger: an agent's report, verdict or question comes before its wait's
    deadline (its launch, or the coordinator's answer, plus ``wait_minutes``)."""
    limits = _limits(events)
    if limits is None:
        return []
    deadline: dict[str, Any] = {}
    latest: Any = None  # a clock going backwards is `time_backwards`, not this rule's
    for event in events:
        kind, role, ts = event["kind"], event["role"], event["ts"]
        payload = event.get("payload") or {}
        if ts is None:
            continue
        latest = ts if latest is None or ts > latest else latest
        if kind == "act" and role:
            deadline[str(role)] = latest + limits.wait
        elif kind == "answer" and isinstance(payload, dict) and payload.get("to"):
            deadline[str(payload["to"])] = latest + limits.wait
        elif kind in ("report", "verdict", "question") and role in deadline:
            if ts > deadline[str(role)]:
                return [(int(event["seq"]), "wait_expired",
                         f"a {kind} from {role!r} at {ts} although its wait ended at "
                         f"{deadline[str(role)]} ({limits.wait_minutes} min, C4.4); the "
                         "platform records the expiry and the report is refused")]
            if kind != "question":
                del deadline[str(role)]
        elif kind == "error" and isinstance(payload, dict) and \
                payload.get("reason") == "wait_expired" and role:
            deadline.pop(str(role), None)
    return []


def _shipping(events: Sequence[Event]) -> list[tuple[int | None, str, str]]:
    """C6 and C7 on a ledger: ``already_done`` only while no version was built; a pull
    request whose review decision says required carries the reviewer's approval of
    that exact version."""
    out: list[tuple[int | None, str, str]] = []
    built = 0
    approved: set[int] = set()
    for event in events:
        kind, version = event["kind"], event["version"]
        number = int(version) if version is not None else None
        if kind == "report" and event["role"] == DEVELOPER and number:
            built = max(built, number)
        if kind == "verdict" and event["role"] == REVIEWER and number is not None:
            if event["verdict"] == "approved":
                approved.add(number)
            else:
                approved.discard(number)
        if kind != "finish":
            continue
        if event["verdict"] == "already_done" and (built or number):
            out.append((int(event["seq"]), "path_closed",
                        f"the run finished 'already_done' although version "
                        f"{max(built, number or 0)} was built: once the run changes the "
                        "code, the already-done path is closed (C6)"))
        payload = event.get("payload") or {}
        review = payload.get("review") if isinstance(payload, dict) else None
        if event["verdict"] == "pull_request" and isinstance(review, dict) and \
                review.get("required") and number not in approved:
            out.append((int(event["seq"]), "review_missing",
                        f"a pull request of version {number} although the review decision "
                        "says the reviewer is required, and the reviewer did not approve "
                        "that version (C7)"))
    return out


#: Who may give a verdict in the standard and coordinator loops (C4.1), and who acts.
DELIVERY_RULES: Final = tuple(
    LoopRules(loop, judges=frozenset(JUDGES), roles=frozenset(ROLE_IDS), turns="act",
              shipping=frozenset({"pull_request", "already_done"}), qa=QA,
              checks=(_caps, _waits, _shipping))
    for loop in ("standard", "coordinator"))
