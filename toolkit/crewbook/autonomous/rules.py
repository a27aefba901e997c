"""The autonomous loop's ledger conformance rules (SPEC D6), for `check_conformance`:
only qa gives verdicts (the recette's pass or fail), the roles are the crew's, each
phase's act comes from the role of the phase it is in (plan: analyst, implementation
and delivery: developer, recette: qa), and no run holds more failed recettes than its
``max_recettes`` allows (from its ``init`` event)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ..ledger.conformance import Event, LoopRules
from .model import PHASE_ROLES, PHASES

__all__ = ["AUTONOMOUS_RULES"]


def _phases(events: Sequence[Event]) -> list[tuple[int | None, str, str]]:
    out: list[tuple[int | None, str, str]] = []
    phase: str = PHASES[0]
    for event in events:
        kind, stage, role = event["kind"], event.get("stage"), event.get("role")
        if kind == "transition" and stage in PHASES:
            phase = str(stage)
        elif kind in ("plan", "report", "verdict"):
            expected = PHASE_ROLES[phase]
            if stage != phase or role != expected:
                out.append((int(event["seq"]), "unexpected_role",
                            f"a {kind} from {role!r} for {stage!r}, but the loop was at "
                            f"{phase!r}, where {expected!r} acts"))
    return out


def _recettes(events: Sequence[Event]) -> list[tuple[int | None, str, str]]:
    init = next((e for e in events if e["kind"] == "init"), None)
    payload = (init or {}).get("payload") or {}
    limit = payload.get("max_recettes") if isinstance(payload, dict) else None
    if not isinstance(limit, int) or limit <= 0:
        return []
    failed = 0
    for event in events:
        if event["kind"] == "verdict" and event.get("stage") == "recette" \
                and event.get("verdict") == "fail":
            failed += 1
            if failed > limit:
                return [(int(event["seq"]), "cap_exceeded",
                         f"failed recettes: {failed} where the run allows {limit}")]
    return []


#: The rules of the autonomous loop (``FAMILY.rules`` of `crewbook.autonomous.family`).
AUTONOMOUS_RULES: Final = (LoopRules(
    "autonomous", judges=frozenset({"qa"}), roles=frozenset(set(PHASE_ROLES.values())),
    checks=(_phases, _recettes)),)
