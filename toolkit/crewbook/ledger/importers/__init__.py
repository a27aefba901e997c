"""`import_runs`: run history from the agent tools people already run, as one ledger frame.

Sources (``source=``, or ``--from`` on the command line) are the entries of `REGISTRY`,
tried in its order when ``source="auto"``. Each is a module that says how its log maps
onto ledger events (docs/importers.md has every mapping). An event with tokens but no
cost gets an estimate from the price table (`crewbook.ledger.prices`), marked in
``payload.cost_estimate``. Adding a source is one module
(a ``looks_like(sniff)`` detector and an ``import_file(path, shown)`` importer) and one
`Source` line in `REGISTRY`. What detection sees is `_sniff`; the built-in sources'
detectors and importers are `_builtin`; the record of what an import read is `_imported`.

The import is never all-or-nothing: every file that can be read is imported; each file
skipped is listed with its reason (`skipped_files`, ``--json``), and only when nothing at
all could be imported does `import_runs` raise. This module loads no pandas or pydantic
(the command line builds ``--from`` from `REGISTRY`): the importers load on first use.
"""

from __future__ import annotations

import importlib
import os
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ...core.paths import kind_of
from ...errors import LedgerError, Problem, UsageError
from ..calls import model_calls, tool_calls
from ._imported import (
    SKIPPED_ATTR,
    UNKNOWN_ATTR,
    UNKNOWN_KEY,
    Imported,
    skipped_files,
    unknown_types,
)
from ._sniff import SNIFF_BYTES as SNIFF_BYTES
from ._sniff import SNIFF_JSON_BYTES as SNIFF_JSON_BYTES
from ._sniff import Sniff, json_error

if TYPE_CHECKING:
    import pandas as pd

    from ..events import LedgerEvent

Importer = Callable[[Path, str], "list[LedgerEvent]"]

#: The column added to the ledger's columns.
SOURCE_COLUMN: Final = "source"
#: Bytes of imported ledger lines parsed at a time into the frame.
_CHUNK: Final = 16 << 20
#: File names looked at inside a folder (other files are not run logs).
SUFFIXES: Final = (".json", ".jsonl", ".traj", ".md")


@dataclass(frozen=True)
class Source:
    """One source `import_runs` reads: its name, a detector, an importer and what it is.

    `looks_like` and `importer` are callables or ``"module:attribute"`` texts loaded on
    first use (a module name without dots is one of this package's); `find_runs`, for
    sources whose runs are folders, lists the run folders under a folder.
    """

    name: str
    looks_like: str | Callable[[Sniff], bool]
    importer: str | Importer
    description: str
    find_runs: str | Callable[[Path], list[Path]] | None = None

    def detects(self, sniff: Sniff) -> bool:
        """Whether this source's detector recognises the sniffed file or folder."""
        return bool(_load(self.looks_like)(sniff))

    def load(self, path: Path, shown: str) -> list[LedgerEvent]:
        """The events this source's importer reads from `path`."""
        events: list[LedgerEvent] = _load(self.importer)(path, shown)
        return events

    def runs_under(self, folder: Path) -> list[Path]:
        """The run folders of this source under `folder` (none for file sources)."""
        if self.find_runs is None:
            return []
        found: list[Path] = _load(self.find_runs)(folder)
        return found


def _load(ref: Any) -> Any:
    """A callable, or the attribute a ``"module:attribute"`` text names."""
    if not isinstance(ref, str):
        return ref
    module, _, attribute = ref.partition(":")
    if "." not in module:
        module = f"{__name__}.{module}"
    return getattr(importlib.import_module(module), attribute)


_LEDGER: Final = "crewbook.ledger"

#: Every source, in the order detection tries them.
REGISTRY: Final[tuple[Source, ...]] = (
    Source("crewbook", "_builtin:looks_like_ledger", "_builtin:crewbook",
           "a crewbook ledger (JSON Lines with \"v\": 1)"),
    Source("speckit", "_builtin:looks_like_speckit", "_builtin:speckit",
           "a spec-kit workflow run folder (log.jsonl + state.json)",
           find_runs=f"{_LEDGER}.speckit:find_speckit_runs"),
    Source("otlp", "_builtin:looks_like_otlp", "_builtin:otlp",
           "OTLP JSON trace data (\"resourceSpans\")"),
    Source("openhands", "openhands:detects", "openhands:import_file",
           "an OpenHands event list or event stream (V0 events with action/observation; "
           "agent-SDK events with kind, tool_name, action_id; a conversation folder with "
           "base_state.json and events/; a V0 session folder with events/<id>.json), or "
           "an evaluation output.jsonl (one instance per line with its history)",
           find_runs="openhands:find_conversations"),
    Source("swe-agent", "sweagent:detects", "sweagent:import_file",
           "a SWE-agent trajectory (.traj: JSON with 'trajectory' or 'history' and 'info')"),
    Source("mini-swe-agent", "miniswe:detects", "miniswe:import_file",
           "a mini-SWE-agent trajectory (JSON with \"trajectory_format\": "
           "\"mini-swe-agent-1\", 'messages' and 'info')"),
    Source("aider", "aider:detects", "aider:import_file",
           "an aider chat history ('# aider chat started at ...')"),
    Source("gemini-cli", "gemini:detects", "gemini:import_file",
           "a Gemini CLI session (session-*.json with sessionId, projectHash and messages, "
           "or its JSON Lines form: a header line, then one line per message)"),
    Source("claude-code", "_builtin:looks_like_claude_code", "claude_code:import_file",
           "a Claude Code session transcript (JSON Lines with sessionId, type "
           "user/assistant, message)"),
    Source("codex", "_builtin:looks_like_codex", "codex:import_file",
           "a Codex CLI rollout (JSON Lines: session_meta, response_item, event_msg)"),
)
#: The names of the sources, in `REGISTRY` order.
SOURCES: Final[tuple[str, ...]] = tuple(s.name for s in REGISTRY)
#: What each source is, for messages and ``--help``.
DESCRIPTIONS: Final[dict[str, str]] = {s.name: s.description for s in REGISTRY}
_BY_NAME: Final[dict[str, Source]] = {s.name: s for s in REGISTRY}


def source_named(name: str) -> Source:
    """The registered source called `name`; `UsageError` naming the sources if none."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise UsageError(f"source must be 'auto' or one of {', '.join(SOURCES)}, "
                         f"not {name!r}") from None


def detect(path: str | os.PathLike[str]) -> str:
    """The source of one file or folder, from its content; `LedgerError` naming every
    source tried when it is none of them."""
    sniff = Sniff.of(Path(path))
    for entry in REGISTRY:
        if entry.detects(sniff):
            return entry.name
    raise _unknown(sniff)


def _unknown(sniff: Sniff) -> LedgerError:
    tried = "; ".join(f"{name}: {text}" for name, text in DESCRIPTIONS.items())
    what = "a folder that holds no run of a known source" if sniff.is_dir else "its content"
    line = column = None
    broken = json_error(sniff)
    if broken is not None:  # say where it breaks: the likely cause
        what = f"its content (not valid JSON: {broken.msg})"
        line, column = broken.lineno, broken.colno
    return LedgerError(f"cannot tell which tool wrote {sniff.path}", [Problem(
        "import_unknown_source", f"from {what}, it is none of the sources crewbook imports "
        f"(tried {tried}); check the path, or name the source with source=/--from",
        str(sniff.path), line, column)])


def find_sources(src: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]
                 ) -> list[Path]:
    """The files and run folders `src` designates: a folder is walked (sorted) for the
    run folders of folder sources (spec-kit runs, OpenHands conversations) and for
    ``.json``, ``.jsonl``, ``.traj`` and ``.md`` files outside them. A path that does not
    exist is a `LedgerError` (code ``file_not_found``)."""
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
        elif path.is_file():
            found.append(path)
        else:
            runs = sorted({run for entry in REGISTRY for run in entry.runs_under(path)})
            if path in runs:
                found.append(path)
                continue
            found.extend(runs)
            found.extend(p for p in sorted(path.rglob("*")) if p.is_file()
                         and p.suffix in SUFFIXES and not p.name.startswith("README")
                         and not any(p.is_relative_to(r) for r in runs))
    if missing:
        raise LedgerError("cannot import", missing)
    return found


def import_events(path: Path, source: str = "auto") -> tuple[str, list[LedgerEvent]]:
    """(source, events) of one file or run folder; an event with tokens but no cost is
    priced from the price table (`crewbook.ledger.prices`), or marked unpriced.

    With ``source="auto"`` the first source of `REGISTRY` whose detector recognises the
    content is used. A named source must recognise the content too, else `LedgerError`
    says what it expected and what the file looks like. An import that finds no event
    is an error, never an empty success. JSON nested too deep for Python's parser (100,000
    ``[``) is a `LedgerError` too, whichever source reads it.
    """
    try:
        return _import_events(path, source)
    except RecursionError:
        raise LedgerError(f"cannot import {path}", [Problem(
            "import_too_deep", "its JSON is nested deeper than any log of a supported tool "
            "(the parser gave up); check that it is the log you meant", str(path))]) from None


def _import_events(path: Path, source: str) -> tuple[str, list[LedgerEvent]]:
    """`import_events`, where a RecursionError may still escape."""
    sniff = Sniff.of(path)
    if source == "auto":
        entry = next((e for e in REGISTRY if e.detects(sniff)), None)
        if entry is None:
            raise _unknown(sniff)
    else:
        entry = _forced(sniff, source)
    events = entry.load(path, str(path))
    if events and entry.name != "crewbook":  # a crewbook ledger's costs are its writer's
        from ..prices import estimate_costs

        events = estimate_costs(events)
    if not events:
        raise LedgerError(f"cannot import {path}", [Problem(
            f"import_empty_{entry.name.replace('-', '_')}",
            f"it looks like {entry.description} but holds no event to import; check that "
            "the file is complete", str(path))])
    return entry.name, events


def _forced(sniff: Sniff, name: str) -> Source:
    """The named source, if it recognises the content; else a `LedgerError`."""
    entry = source_named(name)
    if entry.detects(sniff):
        return entry
    if sniff.is_dir and entry.find_runs is None:
        raise LedgerError(f"cannot import {sniff.path} as {entry.name}", [Problem(
            "unreadable", f"cannot read it: it is a folder, where {entry.description} "
            "is a file; name the file, or import the folder without --from",
            str(sniff.path))])
    broken = json_error(sniff)
    if broken is not None:
        raise LedgerError(f"cannot import {sniff.path} as {entry.name}", [Problem(
            f"import_bad_{entry.name.replace('-', '_')}", f"not JSON: {broken.msg}",
            str(sniff.path), broken.lineno, broken.colno)])
    other = next((e.name for e in REGISTRY if e is not entry and e.detects(sniff)), None)
    looks = (f"it looks like {other} (import it with --from {other} or auto-detection)"
             if other else "it is none of the sources crewbook imports")
    raise LedgerError(f"cannot import {sniff.path} as {entry.name}", [Problem(
        f"import_not_{entry.name.replace('-', '_')}",
        f"not {entry.description}: {looks}", str(sniff.path))])


def each_import(src: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
                source: str = "auto"
                ) -> Iterator[tuple[Path, str, list[LedgerEvent], LedgerError | None]]:
    """Import the files and run folders `src` designates one at a time: for each,
    ``(path, source, events, None)`` or, when it cannot be imported, ``(path, "", [],
    error)``. Only one file's events are held at a time."""
    if source != "auto":
        source_named(source)  # a UsageError for an unknown name, before any work
    for path in find_sources(src):
        try:
            name, events = import_events(path, source)
        except LedgerError as exc:
            yield path, "", [], exc
            continue
        yield path, name, events, None


def _nothing_imported(src: object, skipped: list[tuple[Path, list[Problem]]],
                      errors: list[LedgerError]) -> LedgerError:
    """The error of an import that read no file: the one file's own, or every problem."""
    if len(errors) == 1:
        return errors[0]
    found = [p for _, problems in skipped for p in problems]
    if not found:
        found = [Problem("import_nothing", "no log file (.json, .jsonl, .traj, .md) "
                         "or run folder found there; check the path", str(src))]
    return LedgerError("nothing to import", found)


def gather(src: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
           source: str = "auto") -> Imported:
    """Import every file and run folder `src` designates, skipping (with their problems)
    the ones that cannot be imported. Raises `LedgerError` only when a path does not
    exist or when nothing at all could be imported."""
    read: list[tuple[Path, str, list[LedgerEvent]]] = []
    skipped: list[tuple[Path, list[Problem]]] = []
    errors: list[LedgerError] = []
    for path, name, events, error in each_import(src, source):
        if error is not None:
            skipped.append((path, list(error.problems)))
            errors.append(error)
        else:
            read.append((path, name, events))
    if not read:
        raise _nothing_imported(src, skipped, errors)
    return Imported(read, skipped)


def import_runs(src: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
                source: str = "auto") -> pd.DataFrame:
    """Runs of other tools (and crewbook's) as one ledger frame: the columns and dtypes
    of `read_ledger` plus ``source`` (category: which tool wrote the run).

    `src` is a file, a run folder, a folder of logs (walked), or a list of these.
    `source` is ``"auto"`` (detected from each file's content) or one of `SOURCES`.
    Every file that can be imported is; the ones that cannot are listed, with the
    reason, by `skipped_files` (and a `LedgerWarning` names them). `LedgerError` (naming
    the file, and line or record, of each problem) only when nothing could be imported.
    Events of types a source's importer does not know are kept as ``note`` events
    (``payload.unknown_type``) and counted by `unknown_types`.
    """
    import pandas as pd

    from ..parse import parse_bytes
    from ..reader import LedgerWarning, build_frame

    # Each file's events (validated by the importer) go into the frame as ledger lines,
    # parsed `_CHUNK` bytes at a time into compact Arrow parts: never all events as
    # objects nor all lines as text at once, so a gigabyte of logs imports in a fraction
    # of a gigabyte (benchmarks/claude_import.py).
    chunk = bytearray()
    parts = []
    sources: list[str] = []
    read = 0
    skipped: list[tuple[Path, list[Problem]]] = []
    errors: list[LedgerError] = []
    unknown: Counter[str] = Counter()
    for path, name, found, error in each_import(src, source):
        if error is not None:
            skipped.append((path, list(error.problems)))
            errors.append(error)
            continue
        read += 1
        for event in found:
            chunk += event.to_line().encode("utf-8")
            chunk += b"\n"
            sources.append(_source_of(event, name))
            kept = event.payload.get(UNKNOWN_KEY)
            if event.kind == "note" and isinstance(kept, str):
                unknown[f"{name}:{kept}"] += 1
        if len(chunk) >= _CHUNK:
            parts.append(parse_bytes(bytes(chunk), str(src)))
            chunk.clear()
    if not read:
        raise _nothing_imported(src, skipped, errors)
    if chunk or not parts:
        parts.append(parse_bytes(bytes(chunk), str(src)))
    frame = build_frame(parts, "dict")
    frame[SOURCE_COLUMN] = pd.Categorical(sources, categories=sorted(set(sources)))
    frame.attrs[SKIPPED_ATTR] = Imported([], skipped).skipped_records()
    frame.attrs[UNKNOWN_ATTR] = dict(sorted(unknown.items()))
    if skipped:
        names = ", ".join(f"{p} ({found[0].code if found else '?'})"
                          for p, found in skipped)
        warnings.warn(f"import_runs skipped {len(skipped)} of {len(skipped) + read} files: "
                      f"{names}; skipped_files(frame) says why", LedgerWarning, stacklevel=2)
    return frame


def _source_of(event: LedgerEvent, found: str) -> str:
    """An event's source: what its origin says (a ledger written by an import keeps
    it), else the source of the file it was read from."""
    origin = event.payload.get("origin")
    if isinstance(origin, dict) and isinstance(origin.get("source"), str):
        return str(origin["source"])
    return found


__all__ = ["DESCRIPTIONS", "REGISTRY", "SOURCES", "Imported", "Sniff", "Source", "detect",
           "each_import", "find_sources", "gather", "import_events", "import_runs", "model_calls",
           "skipped_files", "source_named", "tool_calls", "unknown_types"]
