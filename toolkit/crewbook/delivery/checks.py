"""The rules of SPEC C on files, as problems: only the developer writes (C1), only QA and
the reviewer give verdicts (C4.1). `load_catalogue` raises with every problem found."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..errors import Problem, did_you_mean
from ..sources import SourceDoc
from .model import DEVELOPER, JUDGES, CatalogueFile, ToolSpec


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
