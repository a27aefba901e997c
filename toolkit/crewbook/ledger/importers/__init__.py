"""`import_runs`: run history from the agent tools people already run, as one ledger frame.

Sources (``source=``, or ``--from`` on the command line) are the entries of `REGISTRY`,
tried in its order when ``source="auto"``. Each is a module that says how its log maps
onto ledger events (docs/importers.md has every mapping). An event with tokens but no
cost gets an estimate from the price table (`crewbook.ledger.prices`), marked in
``payload.cost_estimate``. Adding a source is one module
(a ``looks_like(sniff)`` detector and an ``import_file(path, shown)`` importer) and one
`Source` line in `REGISTRY`.

The import is never all-or-nothing: every file that can be read is imported; each file
skipped is listed with its reason (`skipped_files`, ``--json``), and only when nothing at
all could be imported does `import_runs` raise. This module loads no pandas or pydantic
(the command line builds ``--from`` from `REGISTRY`): the importers load on first use.
"""

from __future__ import annotations

import importlib
import json
import os
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ...core.paths import kind_of
from ...errors import LedgerError, Problem, UsageError
from ..calls import model_calls, tool_calls

if TYPE_CHECKING:
    import pandas as pd

    from ..events import LedgerEvent

Importer = Callable[[Path, str], "list[LedgerEvent]"]

#: The column added to the ledger's columns.
SOURCE_COLUMN: Final = "source"
#: ``frame.attrs`` key of the files an import skipped (see `skipped_files`).
SKIPPED_ATTR: Final = "crewbook_skipped"
#: ``frame.attrs`` key of the counts of events of unknown types kept as notes.
UNKNOWN_ATTR: Final = "crewbook_unknown"
#: The payload key an importer sets on a ``note`` that keeps an event of a type it does
#: not know (its value: the type's name); such events are counted and reported.
UNKNOWN_KEY: Final = "unknown_type"
#: Bytes of imported ledger lines parsed at a time into the frame.
_CHUNK: Final = 16 << 20
#: File names looked at inside a folder (other files are not run logs).
SUFFIXES: Final = (".json", ".jsonl", ".traj", ".md")
#: How much of a file detection reads.
SNIFF_BYTES: Final = 1 << 20
#: Largest whole-JSON file parsed to detect its source (JSON Lines are read by line).
SNIFF_JSON_BYTES: Final = 64 * 1024 * 1024


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
    Source("crewbook", f"{__name__}:_looks_like_ledger", f"{__name__}:_crewbook",
           "a crewbook ledger (JSON Lines with \"v\": 1)"),
    Source("speckit", f"{__name__}:_looks_like_speckit", f"{__name__}:_speckit",
           "a spec-kit workflow run folder (log.jsonl + state.json)",
           find_runs=f"{_LEDGER}.speckit:find_speckit_runs"),
    Source("otlp", f"{__name__}:_looks_like_otlp", f"{__name__}:_otlp",
           "OTLP JSON trace data (\"resourceSpans\")"),
    Source("openhands", "openhands:detects", "openhands:import_file",
           "an OpenHands event list or event stream (V0 events with action/observation; "
           "agent-SDK events with kind, tool_name, action_id; a conversation folder with "
           "base_state.json and events/), or an evaluation output.jsonl (one instance "
           "per line with its history)",
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
    Source("claude-code", f"{__name__}:_looks_like_claude_code", "claude_code:import_file",
           "a Claude Code session transcript (JSON Lines with sessionId, type "
           "user/assistant, message)"),
    Source("codex", f"{__name__}:_looks_like_codex", "codex:import_file",
           "a Codex CLI rollout (JSON Lines: session_meta, response_item, event_msg)"),
)
#: The names of the sources, in `REGISTRY` order.
SOURCES: Final[tuple[str, ...]] = tuple(s.name for s in REGISTRY)
#: What each source is, for messages and ``--help``.
DESCRIPTIONS: Final[dict[str, str]] = {s.name: s.description for s in REGISTRY}
_BY_NAME: Final[dict[str, Source]] = {s.name: s for s in REGISTRY}


@dataclass
class Sniff:
    """What detection sees of a file or folder: the first `SNIFF_BYTES` as text, the
    first line as JSON, and (for a whole-JSON file up to `SNIFF_JSON_BYTES`) its value.
    Each is computed once, on first use, for every detector to share."""

    path: Path
    head: str = ""
    size: int = 0
    is_dir: bool = False
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, path: Path) -> Sniff:
        """The sniff of `path`; `LedgerError` when the file cannot be read."""
        if path.is_dir():
            return cls(path, is_dir=True)
        try:
            size = path.stat().st_size
            with path.open("rb") as handle:
                head = handle.read(SNIFF_BYTES).decode("utf-8-sig", errors="replace")
        except OSError as exc:
            raise LedgerError(f"cannot import {path}", [Problem(
                "file_not_found" if isinstance(exc, FileNotFoundError) else "unreadable",
                f"cannot read it: {exc.strerror}", str(path))]) from None
        return cls(path, head=head, size=size)

    @cached_property
    def text(self) -> str:
        """The head without leading white space."""
        return self.head.lstrip()

    @cached_property
    def first(self) -> Any:
        """The first line parsed as JSON (None when it is not JSON)."""
        line = self.text.split("\n", 1)[0]
        try:
            return json.loads(line)
        except ValueError:
            return None

    @cached_property
    def value(self) -> Any:
        """The whole file parsed as JSON, or None (not JSON, JSON Lines, too big)."""
        if self.is_dir or not self.text.startswith(("[", "{")) \
                or self.size > SNIFF_JSON_BYTES:
            return None
        if self.size <= SNIFF_BYTES:
            text = self.head
        else:
            try:
                text = self.path.read_text(encoding="utf-8-sig")
            except (OSError, UnicodeDecodeError):
                return None
        try:
            return json.loads(text)
        except ValueError:
            return None


def _looks_like_ledger(sniff: Sniff) -> bool:
    first = sniff.first
    return isinstance(first, dict) and {"run", "seq", "kind"} <= first.keys()


def _looks_like_speckit(sniff: Sniff) -> bool:
    if not sniff.is_dir:
        return False
    from ..speckit import find_speckit_runs

    return bool(find_speckit_runs(sniff.path))


def _looks_like_otlp(sniff: Sniff) -> bool:
    from ..otlp import looks_like, looks_like_protobuf

    return not sniff.is_dir and (looks_like(sniff.text) or looks_like_protobuf(sniff.path))


def _looks_like_claude_code(sniff: Sniff) -> bool:
    from .claude_code import looks_like

    return not sniff.is_dir and looks_like(sniff.text)


def _looks_like_codex(sniff: Sniff) -> bool:
    from .codex import looks_like

    return not sniff.is_dir and looks_like(sniff.text)


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
    broken = _json_error(sniff)
    if broken is not None:  # say where it breaks: the likely cause
        what = f"its content (not valid JSON: {broken.msg})"
        line, column = broken.lineno, broken.colno
    return LedgerError(f"cannot tell which tool wrote {sniff.path}", [Problem(
        "import_unknown_source", f"from {what}, it is none of the sources crewbook imports "
        f"(tried {tried}); check the path, or name the source with source=/--from",
        str(sniff.path), line, column)])


def _json_error(sniff: Sniff) -> json.JSONDecodeError | None:
    """Why a file that starts like JSON is not JSON (None when it is, or is not JSON at
    all, or JSON Lines)."""
    if sniff.is_dir or not sniff.text.startswith(("[", "{")) or sniff.first is not None \
            or sniff.size > SNIFF_JSON_BYTES or sniff.value is not None:
        return None
    try:
        json.loads(sniff.path.read_text(encoding="utf-8-sig", errors="replace"))
    except json.JSONDecodeError as exc:
        return exc
    except OSError:
        return None
    return None


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
    broken = _json_error(sniff)
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


@dataclass(frozen=True)
class Imported:
    """What an import read: per file or run folder, its source and events, and the
    files it skipped with the problems that made it skip them."""

    read: list[tuple[Path, str, list[LedgerEvent]]]
    skipped: list[tuple[Path, list[Problem]]]

    @property
    def events(self) -> list[LedgerEvent]:
        """Every event read, file after file."""
        return [e for _, _, events in self.read for e in events]

    def unknown(self) -> dict[str, int]:
        """How many events of each unknown type were kept as notes (``source:type``)."""
        counts: Counter[str] = Counter()
        for _, name, events in self.read:
            for event in events:
                kept = event.payload.get(UNKNOWN_KEY)
                if event.kind == "note" and isinstance(kept, str):
                    counts[f"{name}:{kept}"] += 1
        return dict(sorted(counts.items()))

    def skipped_records(self) -> list[dict[str, Any]]:
        """One plain record per skipped file: file, code, reason (first problem) and
        every problem."""
        return [{"file": str(path), "code": problems[0].code if problems else "unknown",
                 "reason": problems[0].message if problems else "",
                 "problems": [p.to_dict() for p in problems]}
                for path, problems in self.skipped]


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


def skipped_files(frame: pd.DataFrame) -> pd.DataFrame:
    """The files `import_runs` skipped: one row per file with ``file``, ``code`` and
    ``reason`` (empty when it skipped none)."""
    import pandas as pd

    records = frame.attrs.get(SKIPPED_ATTR, [])
    return pd.DataFrame({"file": [r["file"] for r in records],
                         "code": [r["code"] for r in records],
                         "reason": [r["reason"] for r in records]}, dtype="string")


def unknown_types(frame: pd.DataFrame) -> dict[str, int]:
    """How many events of each unknown type (``source:type``) `import_runs` kept as
    ``note`` events."""
    counts: dict[str, int] = dict(frame.attrs.get(UNKNOWN_ATTR, {}))
    return counts


def _source_of(event: LedgerEvent, found: str) -> str:
    """An event's source: what its origin says (a ledger written by an import keeps
    it), else the source of the file it was read from."""
    origin = event.payload.get("origin")
    if isinstance(origin, dict) and isinstance(origin.get("source"), str):
        return str(origin["source"])
    return found


def _crewbook(path: Path, shown: str) -> list[LedgerEvent]:
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


def _speckit(path: Path, shown: str) -> list[LedgerEvent]:
    from ..speckit import find_speckit_runs, speckit_events

    return [e for run in find_speckit_runs(path) for e in speckit_events(run)]


def _otlp(path: Path, shown: str) -> list[LedgerEvent]:
    from ..otlp import otlp_events

    return otlp_events(path, shown)


__all__ = ["DESCRIPTIONS", "REGISTRY", "SOURCES", "Imported", "Sniff", "Source", "detect",
           "each_import", "find_sources", "gather", "import_events", "import_runs", "model_calls",
           "skipped_files", "source_named", "tool_calls", "unknown_types"]
