"""`import_runs`: run history from the agent tools people already run, as one ledger frame.

Sources (``source=``, or ``--from`` on the command line), detected from content with
``"auto"``: ``otlp`` (OpenTelemetry GenAI spans, OTLP JSON), ``openhands`` (event
lists), ``swe-agent`` (``.traj`` trajectories), ``aider`` (``.aider.chat.history.md``),
``claude-code`` (Claude Code session transcripts), ``codex`` (Codex CLI rollouts),
``speckit`` (spec-kit workflow run folders) and ``crewbook`` (crewbook's own ledgers,
and the output of ``crewbook ledger import``). Each module says how its log maps onto
ledger events; docs/ledger.md has the table of what each source gives and lacks.
An event with tokens but no cost gets an estimate from the price table
(`crewbook.ledger.prices`), marked in ``payload.cost_estimate``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ...errors import LedgerError, Problem, UsageError
from ..events import LedgerEvent
from ..import_sources import DESCRIPTIONS, SOURCES
from . import aider, claude_code, codex, openhands, sweagent

if TYPE_CHECKING:
    import pandas as pd

Importer = Callable[[Path, str], list[LedgerEvent]]

#: The column added to the ledger's columns.
SOURCE_COLUMN: Final = "source"
#: File names looked at inside a folder (other files are not run logs).
_SUFFIXES: Final = (".json", ".jsonl", ".traj", ".md")
_SNIFF: Final = 1 << 20
#: Bytes of imported ledger lines parsed at a time into the frame.
_CHUNK: Final = 16 << 20


def detect(path: str | os.PathLike[str]) -> str:
    """The source of one file or folder, from its content; `LedgerError` naming every
    source tried when it is none of them."""
    path = Path(path)
    if path.is_dir():
        from ..speckit import find_speckit_runs

        if find_speckit_runs(path):
            return "speckit"
        raise _unknown(path, "a folder that is not a spec-kit run")
    try:
        with path.open("rb") as handle:
            head = handle.read(_SNIFF).decode("utf-8-sig", errors="replace")
    except OSError as exc:
        raise LedgerError(f"cannot import {path}", [Problem(
            "file_not_found" if isinstance(exc, FileNotFoundError) else "unreadable",
            f"cannot read it: {exc.strerror}", str(path))]) from None
    stripped = head.lstrip()
    from .. import otlp

    if otlp.looks_like(stripped) or otlp.looks_like_protobuf(path):
        return "otlp"
    if _ledger_line(stripped.split("\n", 1)[0]):
        return "crewbook"
    for name, module in (("claude-code", claude_code), ("codex", codex)):
        if module.looks_like(stripped):
            return name
    if stripped.startswith(("[", "{")):
        value = _json(path)
        if openhands.looks_like(value):
            return "openhands"
        if sweagent.looks_like(value):
            return "swe-agent"
    if aider.looks_like(head):
        return "aider"
    raise _unknown(path, "its content")


def _ledger_line(text: str) -> bool:
    """Whether a line is a crewbook ledger event (an object with run, seq, kind)."""
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and {"run", "seq", "kind"} <= value.keys()


def _json(path: Path) -> object:
    from ._common import MAX_BYTES

    try:
        if path.stat().st_size > MAX_BYTES:
            return None
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None


def _unknown(path: Path, what: str) -> LedgerError:
    tried = "; ".join(f"{name}: {text}" for name, text in DESCRIPTIONS.items())
    return LedgerError(f"cannot tell which tool wrote {path}", [Problem(
        "import_unknown_source", f"from {what}, it is none of the sources crewbook imports "
        f"(tried {tried}); check the path, or name the source with source=/--from",
        str(path))])


def find_sources(src: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]
                 ) -> list[Path]:
    """The files and run folders `src` designates: a folder is walked (sorted) for
    spec-kit runs and for ``.json``, ``.jsonl``, ``.traj`` and ``.md`` files."""
    items = [src] if isinstance(src, str | os.PathLike) else list(src)
    found: list[Path] = []
    missing: list[Problem] = []
    for item in items:
        path = Path(item)
        if not path.exists():
            missing.append(Problem("file_not_found", "no such file or folder; check the path",
                                   str(item)))
        elif path.is_file() or ((path / "log.jsonl").is_file() and (path / "state.json").is_file()):
            found.append(path)
        else:
            from ..speckit import find_speckit_runs

            runs = find_speckit_runs(path)
            found.extend(runs)
            inside = [p for p in sorted(path.rglob("*")) if p.is_file()
                      and p.suffix in _SUFFIXES and not p.name.startswith("README")
                      and not any(p.is_relative_to(r) for r in runs)]
            found.extend(inside)
    if missing:
        raise LedgerError("cannot import", missing)
    return found


def import_events(path: Path, source: str = "auto") -> tuple[str, list[LedgerEvent]]:
    """(source, events) of one file or run folder; an event with tokens but no cost is
    priced from the price table (`crewbook.ledger.prices`), or marked unpriced."""
    if source == "auto":
        source = detect(path)
    elif source not in SOURCES:
        raise UsageError(f"source must be 'auto' or one of {', '.join(SOURCES)}, "
                         f"not {source!r}")
    events = _IMPORTERS[source](path, str(path))
    if source != "crewbook":  # a crewbook ledger's costs are its writer's; others get priced
        from ..prices import estimate_costs

        events = estimate_costs(events)
    return source, events


def import_runs(src: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
                source: str = "auto") -> pd.DataFrame:
    """Runs of other tools (and crewbook's) as one ledger frame: the columns and dtypes
    of `read_ledger` plus ``source`` (category: which tool wrote the run).

    `src` is a file, a run folder, a folder of logs (walked), or a list of these.
    `source` is ``"auto"`` (detected from each file's content) or one of `SOURCES`.
    Raises `LedgerError` naming the file (and line or record) of anything it cannot
    import, and, for a file of no known source, every source it tried.
    """
    import pandas as pd

    from ..parse import parse_bytes
    from ..reader import build_frame

    if source != "auto" and source not in SOURCES:
        raise UsageError(f"source must be 'auto' or one of {', '.join(SOURCES)}, "
                         f"not {source!r}")
    # Each file's events (validated by the importer) go into the frame as ledger lines,
    # parsed `_CHUNK` bytes at a time into compact Arrow parts: never all events as
    # objects nor all lines as text at once, so a gigabyte of logs imports in a fraction
    # of a gigabyte (benchmarks/claude_import.py).
    chunk = bytearray()
    parts = []
    sources: list[str] = []
    for path in find_sources(src):
        name, found = import_events(path, source)
        for event in found:
            chunk += event.to_line().encode("utf-8")
            chunk += b"\n"
        sources.extend(_source_of(e, name) for e in found)
        if len(chunk) >= _CHUNK:
            parts.append(parse_bytes(bytes(chunk), str(src)))
            chunk.clear()
    if chunk or not parts:
        parts.append(parse_bytes(bytes(chunk), str(src)))
    frame = build_frame(parts, "dict")
    frame[SOURCE_COLUMN] = pd.Categorical(sources, categories=sorted(set(sources)))
    return frame


def _source_of(event: LedgerEvent, found: str) -> str:
    """An event's source: what its origin says (a ledger written by an import keeps
    it), else the source of the file it was read from."""
    origin = event.payload.get("origin")
    if isinstance(origin, dict) and isinstance(origin.get("source"), str):
        return str(origin["source"])
    return found


def _crewbook(path: Path, shown: str) -> list[LedgerEvent]:
    from ..lines import parse_line
    from ..reader import find_ledgers

    problems: list[Problem] = []
    events: list[LedgerEvent] = []
    for file, name in find_ledgers(path):
        data = file.read_bytes()
        for number, raw in enumerate(data.split(b"\n"), 1):
            if raw.strip():
                event = parse_line(raw, name, number, problems, first=number == 1)
                if event is not None:
                    events.append(event)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise LedgerError(f"cannot import {shown}", errors)
    return events


def _speckit(path: Path, shown: str) -> list[LedgerEvent]:
    from ..speckit import find_speckit_runs, speckit_events

    return [e for run in find_speckit_runs(path) for e in speckit_events(run)]


def _otlp(path: Path, shown: str) -> list[LedgerEvent]:
    from ..otlp import otlp_events

    return otlp_events(path, shown)


_IMPORTERS: Final[dict[str, Importer]] = {
    "crewbook": _crewbook, "speckit": _speckit, "otlp": _otlp,
    "openhands": openhands.import_file, "swe-agent": sweagent.import_file,
    "aider": aider.import_file, "claude-code": claude_code.import_file,
    "codex": codex.import_file,
}
