"""`import_runs`: run history from the agent tools people already run, as one ledger frame.

Sources (``source=``, or ``--from`` on the command line), detected from content with
``"auto"``: ``otlp`` (OpenTelemetry GenAI spans, OTLP JSON), ``openhands`` (event
lists), ``swe-agent`` (``.traj`` trajectories), ``aider`` (``.aider.chat.history.md``),
``speckit`` (spec-kit workflow run folders) and ``crewbook`` (crewbook's own ledgers,
and the output of ``crewbook ledger import``). Each module says how its log maps onto
ledger events; docs/ledger.md has the table of what each source gives and lacks.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ...core.paths import kind_of
from ...errors import LedgerError, Problem, UsageError
from ..events import LedgerEvent
from ..import_sources import DESCRIPTIONS, SOURCES
from . import aider, openhands, sweagent

if TYPE_CHECKING:
    import pandas as pd

Importer = Callable[[Path, str], list[LedgerEvent]]

#: The column added to the ledger's columns.
SOURCE_COLUMN: Final = "source"
#: File names looked at inside a folder (other files are not run logs).
_SUFFIXES: Final = (".json", ".jsonl", ".traj", ".md")
_SNIFF: Final = 1 << 20


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

    if otlp.looks_like(stripped):
        return "otlp"
    if _ledger_line(stripped.split("\n", 1)[0]):
        return "crewbook"
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
        kind = kind_of(path)
        if kind == "missing":
            missing.append(Problem("file_not_found", "no such file or folder; check the path",
                                   str(item)))
        elif kind not in ("file", "folder"):  # a FIFO or device would block or never end
            what = ("cannot be read (a loop of links, or permission denied)"
                    if kind == "unreadable" else f"is a {kind}, not a file or a folder")
            missing.append(Problem("not_a_file", f"it {what}; crewbook imports regular "
                                   "files and folders", str(item)))
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
    """(source, events) of one file or run folder."""
    if source == "auto":
        source = detect(path)
    elif source not in SOURCES:
        raise UsageError(f"source must be 'auto' or one of {', '.join(SOURCES)}, "
                         f"not {source!r}")
    return source, _IMPORTERS[source](path, str(path))


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

    from ..reader import events_frame

    if source != "auto" and source not in SOURCES:
        raise UsageError(f"source must be 'auto' or one of {', '.join(SOURCES)}, "
                         f"not {source!r}")
    events: list[LedgerEvent] = []
    sources: list[str] = []
    for path in find_sources(src):
        name, found = import_events(path, source)
        events.extend(found)
        sources.extend(_source_of(e, name) for e in found)
    frame = events_frame(events, name=str(src))
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
    "aider": aider.import_file,
}
