"""The detectors and importers of the sources that need no module of their own: crewbook
ledgers, spec-kit run folders, OTLP traces, and the detectors of Claude Code and Codex.

`REGISTRY` names these functions as ``"_builtin:name"`` texts, loaded on first use, so
the registry (read by the command line's ``--from``) imports none of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import LedgerError, Problem

if TYPE_CHECKING:
    from ..events import LedgerEvent
    from ._sniff import Sniff

__all__ = ["crewbook", "looks_like_claude_code", "looks_like_codex", "looks_like_ledger",
           "looks_like_otlp", "looks_like_speckit", "otlp", "speckit"]


def looks_like_ledger(sniff: Sniff) -> bool:
    first = sniff.first
    return isinstance(first, dict) and {"run", "seq", "kind"} <= first.keys()


def looks_like_speckit(sniff: Sniff) -> bool:
    if not sniff.is_dir:
        return False
    from ..speckit import find_speckit_runs

    return bool(find_speckit_runs(sniff.path))


def looks_like_otlp(sniff: Sniff) -> bool:
    from ..otlp import looks_like, looks_like_protobuf

    return not sniff.is_dir and (looks_like(sniff.text) or looks_like_protobuf(sniff.path))


def looks_like_claude_code(sniff: Sniff) -> bool:
    from .claude_code import looks_like

    return not sniff.is_dir and looks_like(sniff.text)


def looks_like_codex(sniff: Sniff) -> bool:
    from .codex import looks_like

    return not sniff.is_dir and looks_like(sniff.text)


def crewbook(path: Path, shown: str) -> list[LedgerEvent]:
    """A crewbook ledger, read line by line (memory bounded by the events, not the file)."""
    from ..lines import parse_line
    from ..reader import find_ledgers

    problems: list[Problem] = []
    events: list[LedgerEvent] = []
    for file, name in find_ledgers(path):
        with file.open("rb") as handle:
            for number, raw in enumerate(handle, 1):
                if raw.strip():
                    event = parse_line(raw.rstrip(b"\n"), name, number, problems,
                                       first=number == 1)
                    if event is not None:
                        events.append(event)
                if len(problems) > 20:
                    break
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise LedgerError(f"cannot import {shown}", errors)
    return events


def speckit(path: Path, shown: str) -> list[LedgerEvent]:
    from ..speckit import find_speckit_runs, speckit_events

    return [e for run in find_speckit_runs(path) for e in speckit_events(run)]


def otlp(path: Path, shown: str) -> list[LedgerEvent]:
    from ..otlp import otlp_events

    return otlp_events(path, shown)
