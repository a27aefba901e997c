"""The crew concept's rules (D1, D2), each problem a `Problem` naming its key (the rules
of `_codev/crew.yaml` are `crewbook.artifacts.crew_file.check_crew_file`):

- `load_payload`: a report's payload XOR payload_path (a JSON object, at most 4 MiB,
  inside the project: no `..` escape, no symlink leading out);
- `CREW_RULES`, the rules of the crew loop on its ledgers (given to
  `crewbook.ledger.conformance` by `crewbook.crew.family`): only qa judges, the roles
  take turns, ``max_rounds``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..artifacts.project import Project
from ..core.paths import kind_of, path_problem
from ..errors import CrewError, Problem, UnsafePathError
from ..ledger.conformance import Event, LoopRules
from ..sources import parse_json
from .model import MAX_INLINE_PAYLOAD_BYTES, MAX_PAYLOAD_BYTES, ROLES, VERDICTS


def load_payload(payload: Any, payload_path: str | os.PathLike[str] | None,
                 project: Project) -> dict[str, Any] | None:
    """The report's payload (D2): `payload` (a JSON object) XOR `payload_path` (a JSON file
    of at most 4 MiB, relative to the project or absolute under it; ``..`` escapes and
    symlinks leaving the project are refused)."""
    if payload is not None and payload_path is not None:
        raise CrewError("payload and payload_path together", [Problem(
            "payload_conflict", "give payload or payload_path, not both: payload_path is for "
            "a payload too large to send inline", key="payload_path")])
    if payload_path is None:
        if payload is None:
            return None
        if not isinstance(payload, Mapping):
            raise CrewError("the payload is not an object", [Problem(
                "payload_not_object", f"payload must be a JSON object, not "
                f"{type(payload).__name__}", key="payload")])
        size = len(json.dumps(payload, ensure_ascii=False, default=str).encode())
        if size > MAX_INLINE_PAYLOAD_BYTES:
            raise CrewError("payload too large", [Problem(
                "payload_too_large", f"the inline payload is {size} bytes, over "
                f"{MAX_INLINE_PAYLOAD_BYTES} ({MAX_INLINE_PAYLOAD_BYTES // 2**20} MiB, as for "
                "payload_path); keep the findings short", key="payload")])
        return dict(payload)
    why = path_problem(payload_path)
    if why is not None:
        raise CrewError("payload_path cannot name a file", [Problem(
            "unsafe_path", f"{why}; give a shorter path", key="payload_path")])
    root = project.root.resolve()
    raw = Path(payload_path)
    lexical = Path(os.path.normpath(raw if raw.is_absolute() else root / raw))
    if not lexical.is_relative_to(root):
        raise UnsafePathError(
            f"payload_path {str(payload_path)!r} leads outside the project ({root}); give a "
            "path relative to the project root, or an absolute path under it")
    resolved = lexical.resolve()
    if not resolved.is_relative_to(root):
        raise UnsafePathError(
            f"payload_path {str(payload_path)!r} is a symlink (or goes through one) to "
            f"{resolved}, outside the project; copy the file into the project instead")
    kind = kind_of(resolved)
    if kind not in ("file", "missing", "unreadable"):
        raise CrewError("payload_path is not a regular file", [Problem(
            "payload_not_file", f"it is a {kind}, not a file; write the JSON payload to a "
            "regular file", str(payload_path), key="payload_path")])
    if kind != "file":
        raise CrewError("payload file not found", [Problem(
            "payload_not_found", "no such file; write the JSON payload there first"
            if kind in ("missing", "unreadable") else f"it is a {kind}, not a file",
            str(payload_path), key="payload_path")])
    size = resolved.stat().st_size
    if size > MAX_PAYLOAD_BYTES:
        raise CrewError("payload file too large", [Problem(
            "payload_too_large", f"{size} bytes is over the {MAX_PAYLOAD_BYTES} bytes (4 MiB) "
            "a payload may hold; put the bulk in project files and reference their paths",
            str(payload_path), key="payload_path")])
    text = resolved.read_text("utf-8", errors="replace")
    try:  # NaN, 5,000-digit numbers, nesting 10,000 deep: problems, not tracebacks
        data = parse_json(text, str(payload_path), error_cls=CrewError)
    except CrewError as exc:
        first = exc.problems[0]
        raise CrewError("payload file is not JSON", [Problem(
            "payload_bad_json", f"{first.message}; the file must hold one JSON object",
            str(payload_path), first.line, first.column, key="payload_path")]) from None
    if not isinstance(data, dict):
        raise CrewError("payload file is not an object", [Problem(
            "payload_not_object", f"the file holds a JSON {type(data).__name__}, not an object",
            str(payload_path), 1, 1, key="payload_path")])
    return data



__all__ = ["load_payload"]


# -- the rules of the crew loop, checked on its ledgers --------------------------------------


def _crew_turns(events: Sequence[Event]) -> list[tuple[int | None, str, str]]:
    """D2 on a ledger: the roles take turns (analyst, developer, qa; qa's ``no-go``
    sends the turn back to the developer), and at most ``max_rounds`` acts (from the
    ``init`` payload; 0 means unlimited, D1). A failed ``bar`` the engine measured
    after the developer's report may also hand the turn straight back to the developer
    (ledgers of other crew tools, and the synthetic histories, do so)."""
    out: list[tuple[int | None, str, str]] = []
    expected = "analyst"
    also: str | None = None
    payload = events[0].get("payload") if events and events[0]["kind"] == "init" else None
    rounds = payload.get("max_rounds") if isinstance(payload, dict) else None
    acts = 0
    for event in events:
        if event["kind"] == "bar" and event["verdict"] == "fail" and expected == "qa":
            also = "developer"
        if event["kind"] not in ("report", "verdict"):
            continue
        acts += 1
        seq, role, verdict = int(event["seq"]), event["role"], event["verdict"]
        if role not in (expected, also):
            out.append((seq, "unexpected_role", f"a {event['kind']} from {role!r}, but the "
                        f"crew loop expected {expected!r} (D2)"))
        if role in VERDICTS and verdict not in VERDICTS[role]:
            out.append((seq, "verdict_not_allowed", f"{role} gives {' or '.join(VERDICTS[role])}"
                        f", not {verdict!r} (D2)"))
        expected = {"analyst": "developer", "developer": "qa"}.get(
            str(role), "developer" if verdict == "no-go" else "analyst")
        also = None
        if isinstance(rounds, int) and rounds > 0 and acts == rounds + 1:
            out.append((seq, "cap_exceeded", f"act {acts} where max_rounds is {rounds} (D1)"))
    return out


#: The crew loop's ledger conformance rules (`crewbook.crew.family`).
CREW_RULES = (LoopRules("crew", judges=frozenset({"qa"}), roles=frozenset(ROLES),
                        checks=(_crew_turns,)),)
