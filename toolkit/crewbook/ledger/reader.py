"""`read_ledger`: ledger files, folders of runs and spec-kit runs into one typed DataFrame.

Columns, in this order (docs/ledger.md has the full table)::

    run        category          seq          Int64       ts        datetime64[ns, UTC]
    loop       category          kind         category    role      category
    stage      category          verdict      category    attempt   Int64
    version    Int64             summary      str         tokens_in Int64
    tokens_out Int64             cost         float64     duration_ms Int64
    payload    payload (dicts)   -- or payload.<key> columns with payload="flat"

`payload` is a `PayloadArray`: the payloads stay JSON text in Arrow memory and become
dicts when asked (a row, ``.map``, ``.tolist()``), so reading creates no Python object
per event.

`kind` has every known kind as a category, in lifecycle order; the other category
columns have their observed values, sorted. Rows keep file order (files in sorted
path order). Problems found (cut lines, bad lines that were skipped) are in
``df.attrs["crewbook_problems"]`` as `Problem` objects and are also warned about.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import ValidationError

from ..core.gc_pause import paused_gc
from ..errors import LedgerError, Problem, UsageError, plural
from ..report import ValidationReport
from ._find import Source as Source
from ._find import find_ledgers as find_ledgers
from .columns import ARROW_SCHEMA, CATEGORIES, compact, concat
from .events import FIELDS, KINDS, LedgerEvent, validation_problems
from .file_batches import parse_files
from .file_blocks import parse_file
from .heap import reader_pool
from .parse import Parsed, parse_bytes
from .payloads import TEXT, PayloadArray, payload_dicts, payload_text

Errors = Literal["raise", "skip"]
PayloadMode = Literal["dict", "flat", "none"]

#: The frame's columns, in order (payload last; absent with payload="none").
COLUMNS: Final[tuple[str, ...]] = (
    "run", "seq", "ts", "loop", "kind", "role", "stage", "verdict", "attempt", "version",
    "summary", "tokens_in", "tokens_out", "cost", "duration_ms", "payload",
)
PROBLEMS_ATTR: Final = "crewbook_problems"
SOURCES_ATTR: Final = "crewbook_sources"


class LedgerWarning(UserWarning):
    """A ledger was read, but not all of it: a cut line, or bad lines skipped."""


def read_ledger(
    source: Source,
    *,
    errors: Errors = "raise",
    payload: PayloadMode = "dict",
) -> pd.DataFrame:
    """Read one ledger, many, or a folder of them (recursively) into one DataFrame.

    `source` is a ``.jsonl`` file, a ``.parquet`` file written by `to_parquet`, a
    spec-kit run folder (``log.jsonl`` + ``state.json``), a folder holding any of
    these, or a list of them. `errors="raise"` raises one `LedgerError` listing every
    bad line (file and line number); `errors="skip"` leaves bad lines out, warns, and
    lists them in ``df.attrs["crewbook_problems"]``. A line cut short by a crash is
    always left out with a warning. `payload` is ``"dict"`` (one dict per row),
    ``"flat"`` (``payload.<key>`` columns) or ``"none"`` (fastest: not read, and
    unknown top-level keys are then not checked).
    """
    if errors not in ("raise", "skip"):
        raise UsageError(f"errors must be 'raise' or 'skip', not {errors!r}")
    if payload not in ("dict", "flat", "none"):
        raise UsageError(f"payload must be 'dict', 'flat' or 'none', not {payload!r}")
    files = find_ledgers(source)
    parts = _parse(files, with_payload=payload != "none")
    problems = _no_files(source, files) + [p for part in parts for p in part.problems]
    bad = [p for p in problems if p.severity == "error"]
    if bad and errors == "raise":
        where = files[0][1] if len(files) == 1 else f"{len(files)} ledger files"
        raise LedgerError(
            f"{where} holds lines that are not valid ledger events; fix them, or read "
            "with errors='skip' to leave them out", bad,
        )
    frame = build_frame(parts, payload)
    frame.attrs[PROBLEMS_ATTR] = problems
    frame.attrs[SOURCES_ATTR] = [shown for _, shown in files]
    if problems:
        shown = "\n".join(f"  {p}" for p in problems[:10])
        more = f"\n  … and {len(problems) - 10} more" if len(problems) > 10 else ""
        left_out = sum(1 for p in problems if p.code != "ledger_empty")
        what = f"{plural(left_out, 'line')} left out" if left_out else "no events"
        warnings.warn(
            f"ledger read with {what} (see "
            f"df.attrs['{PROBLEMS_ATTR}']):\n{shown}{more}",
            LedgerWarning, stacklevel=2,
        )
    return frame


def _no_files(source: Source, files: Sequence[tuple[Path, str]]) -> list[Problem]:
    """A warning when `source` designates no ledger at all (an empty folder)."""
    if files:
        return []
    where = str(source) if isinstance(source, str | os.PathLike) else "the sources given"
    return [Problem("ledger_empty", "no ledger here: the folder holds no .jsonl, .parquet "
                    "or spec-kit run; is it the right folder?", where, severity="warning")]


def validate_ledger(path: Path | str) -> ValidationReport:
    """Every problem of one ledger file (or spec-kit run folder), bad lines numbered.

    Errors are lines that are not valid events (`ledger_bad_json`, `ledger_bad_event`);
    a line cut short by a crash is a warning (`ledger_truncated_line`). A report with
    no problem means every line is a valid event.
    """
    path = Path(path)
    try:
        files = find_ledgers(path)
    except LedgerError as exc:
        return ValidationReport(exc.problems, subject=str(path))
    problems: list[Problem] = _no_files(path, files)
    for part in _parse(files, with_payload=True):
        problems.extend(part.problems)
    return ValidationReport(tuple(problems), subject=str(path))


# -- reading one ---------------------------------------------------------------------------


def _parse(files: list[tuple[Path, str]], *, with_payload: bool) -> list[Parsed]:
    """The parsed events of `files` (path, name shown), in order: small ledger files in
    batches (`file_batches`), any other by `read_one`."""
    return parse_files(files, with_payload,
                       lambda path, shown: read_one(path, shown, with_payload=with_payload))


def read_one(path: Path, shown: str, *, with_payload: bool) -> Parsed:
    """The parsed events of one ledger file, spec-kit run folder or Parquet export."""
    if path.is_dir():
        from .speckit import speckit_run

        events, problems = speckit_run(path)
        rows = [e.model_dump() for e in events]
        table = pa.Table.from_pylist([{k: r[k] for k in ARROW_SCHEMA.names} for r in rows],
                                     schema=ARROW_SCHEMA)
        texts = _texts([payload_text(r["payload"]) for r in rows]) if with_payload else None
        return Parsed(table, texts, problems)
    if path.suffix == ".parquet":
        return _read_parquet(path, with_payload)
    try:
        return parse_file(path, shown, with_payload=with_payload)
    except OSError as exc:
        return Parsed(ARROW_SCHEMA.empty_table(), _texts([]) if with_payload else None,
                      [Problem("unreadable", f"cannot read the file: {exc.strerror}", shown)])


def _texts(texts: list[str]) -> pa.ChunkedArray:
    return pa.chunked_array([pa.array(texts, type=TEXT)], type=TEXT)


def _read_parquet(path: Path, with_payload: bool) -> Parsed:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    fixed = pa.table({name: table.column(name).cast(ARROW_SCHEMA.field(name).type)
                      if name in table.column_names else pa.nulls(table.num_rows, type_)
                      for name, type_ in zip(ARROW_SCHEMA.names, ARROW_SCHEMA.types,
                                             strict=True)})
    texts = None
    if with_payload:
        if "payload" in table.column_names:
            raw = table.column("payload").cast(TEXT)
            texts = pc.if_else(pc.or_kleene(pc.is_null(raw), pc.equal(raw, "")), "{}", raw)
        else:
            texts = _texts(["{}"] * table.num_rows)
    return Parsed(fixed, texts)


# -- the frame -----------------------------------------------------------------------------


def _types(t: pa.DataType) -> Any:
    if pa.types.is_integer(t):
        return pd.Int64Dtype()
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return _STR  # Arrow-backed: no Python string per row on the way
    return None


_STR: Final = pd.StringDtype("pyarrow", na_value=math.nan)


_NO_CODE: Final = pa.scalar(-1, pa.int32())


def _categorical(column: pa.ChunkedArray, name: str) -> pd.Categorical:
    """A dictionary-encoded column as a pandas Categorical: every known kind (in
    lifecycle order) for `kind`, else the observed values, sorted. The codes are mapped
    from the dictionary (a few values) in one call over the chunks, no string per row."""
    pool = reader_pool()
    try:
        column = column.unify_dictionaries(memory_pool=pool)
    except pa.ArrowInvalid:  # more values than the blocks' narrow codes can number
        column = column.cast(pa.dictionary(pa.int32(), column.type.value_type))
        column = column.unify_dictionaries(memory_pool=pool)
    dictionary = column.chunk(0).dictionary if column.num_chunks else pa.array([], pa.string())
    if name == "kind":  # the known kinds, in lifecycle order
        categories: Any = list(KINDS)
        position = {value: i for i, value in enumerate(categories)}
        remap = pa.array([position.get(value, -1) for value in dictionary.to_pylist()] or [0],
                         type=pa.int32())
    else:  # the values seen, sorted (by Arrow: a run name per event makes 100,000 of them)
        # (UTF-8 bytes sort as code points; a unified dictionary holds each value once)
        order = pc.array_sort_indices(dictionary, memory_pool=pool).to_numpy()
        ranks = np.zeros(max(len(order), 1), dtype=np.int32)
        ranks[order] = np.arange(len(order), dtype=np.int32)
        remap = pa.array(ranks, type=pa.int32())
        categories = dictionary.take(pa.array(order)).to_numpy(zero_copy_only=False)
    codes = []
    if column.num_chunks:  # in one call: the chunks' indices share a type (`concat`)
        indices = pa.chunked_array([chunk.indices for chunk in column.chunks])
        codes = [pc.coalesce(pc.take(remap, indices, memory_pool=pool), _NO_CODE,
                             memory_pool=pool).to_numpy()]
    joined = codes[0] if codes else np.zeros(0, dtype=np.int32)
    return pd.Categorical.from_codes(joined, dtype=pd.CategoricalDtype(categories),
                                     validate=False)


def build_frame(parts: Sequence[Parsed], payload: PayloadMode = "dict") -> pd.DataFrame:
    """One typed frame from parsed files (see the module docstring for the columns).

    The parts' tables are released as they are used (the frame takes their place), so
    reading holds the data once, not twice; do not use `parts` afterwards.
    """
    tables = [p.table for p in parts if p.table.num_rows] or [ARROW_SCHEMA.empty_table()]
    texts = [c for p in parts if p.texts is not None for c in p.texts.chunks]
    for part in parts:
        part.table = ARROW_SCHEMA.empty_table()
        part.texts = None
    # one column at a time, each Arrow column released once converted: the peak is the
    # data once plus one column's conversion, not the Arrow table and the whole frame
    table = concat([compact(t) for t in tables])
    del tables
    arrow_columns = {name: table.column(name) for name in COLUMNS if name != "payload"}
    del table
    columns: dict[str, pd.Series] = {}
    for name in list(arrow_columns):
        arrow_column = arrow_columns.pop(name)
        if name in CATEGORIES:
            columns[name] = pd.Series(_categorical(arrow_column, name), name=name)
        else:
            columns[name] = arrow_column.to_pandas(
                types_mapper=_types, memory_pool=reader_pool()).rename(name)
        del arrow_column
    frame = pd.DataFrame(columns, copy=False)
    del columns
    if payload == "dict":
        frame["payload"] = pd.Series(PayloadArray(pa.chunked_array(texts, type=TEXT)),
                                     index=frame.index)
    elif payload == "flat":
        dicts = [d or {} for d in payload_dicts(t for c in texts for t in c.to_pylist())]
        with paused_gc():  # dicts of dicts in, records out: no cycle (see `paused_gc`)
            flat = pd.json_normalize(dicts, sep=".") if dicts else pd.DataFrame(
                index=frame.index)
        flat.index = frame.index
        flat.columns = [f"payload.{c}" for c in flat.columns]
        frame = pd.concat([frame, flat], axis=1)
    return pd.DataFrame(frame)


def events_frame(events: Iterable[Mapping[str, Any] | LedgerEvent], *,
                 payload: PayloadMode = "dict", name: str = "<memory>") -> pd.DataFrame:
    """The frame of events held in memory: exactly what `read_ledger` gives for the same
    events written to a file. Each event is checked by `LedgerEvent` (as the writer
    does), so one that breaks the format raises `LedgerError` naming its position."""
    if payload not in ("dict", "flat", "none"):
        raise UsageError(f"payload must be 'dict', 'flat' or 'none', not {payload!r}")
    lines: list[str] = []
    problems: list[Problem] = []
    for number, event in enumerate(events, 1):
        try:
            model = event if isinstance(event, LedgerEvent) else LedgerEvent.model_validate(event)
        except ValidationError as exc:
            problems += [replace(p, line=number) for p in validation_problems(exc, path=name)]
            continue
        lines.append(model.to_line())
    if problems:
        raise LedgerError(f"{name} holds events that are not valid ledger events", problems)
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    return build_frame([parse_bytes(data, name, with_payload=payload != "none")], payload)


def frame_events(frame: pd.DataFrame) -> list[LedgerEvent]:
    """The events of a ledger frame (`read_ledger`, `import_runs`): the inverse of
    `events_frame` (extra columns such as ``source`` are left out)."""
    fields = [k for k in FIELDS if k != "v" and k in frame.columns and k != "payload"]
    events = []
    for row in frame.to_dict("records"):
        data = {k: _plain(row[k]) for k in fields}
        data["payload"] = row.get("payload") if isinstance(row.get("payload"), dict) else {}
        events.append(LedgerEvent.model_validate(data))
    return events


def _plain(value: Any) -> Any:
    """A frame cell as a plain Python value (NA → None, Timestamp → datetime)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    return value.item() if hasattr(value, "item") else value


def empty_frame(payload: PayloadMode = "dict") -> pd.DataFrame:
    """A frame with no events and every column typed (handy for tests and defaults)."""
    return build_frame([], payload)


# -- Parquet -------------------------------------------------------------------------------


def to_parquet(frame: pd.DataFrame, path: Path | str) -> Path:
    """Write a ledger frame to Parquet; `payload` is stored as JSON text.

    Categories become dictionary-encoded strings, `ts` a UTC timestamp, counts int64,
    so DuckDB or Spark read it as is (see docs/ledger.md for a DuckDB query).
    `read_ledger` reads the file back into the same frame.
    """
    import pyarrow.parquet as pq

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    out = frame[[c for c in COLUMNS if c in frame.columns and c != "payload"]].copy()
    out.attrs = {}  # problems are not data; Arrow would try to store them as JSON
    table = pa.Table.from_pandas(out, preserve_index=False)
    if "payload" in frame.columns:
        table = table.append_column(pa.field("payload", TEXT), payload_texts_of(
            frame["payload"]))
    pq.write_table(table, path)
    return path


def payload_texts_of(column: pd.Series) -> pa.ChunkedArray:
    """The JSON texts of a ``payload`` column (as stored: no parsing when it is a
    `PayloadArray`; dicts are written as compact JSON, anything else as ``{}``)."""
    values = column.array
    if isinstance(values, PayloadArray):
        texts = values.texts
        return pc.if_else(pc.is_null(texts), "{}", texts) if texts.null_count else texts
    return _texts([payload_text(p) for p in column])


def import_speckit_runs(path: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
                        *, errors: Literal["raise", "skip"] = "raise") -> pd.DataFrame:
    """spec-kit runs as a ledger frame (same columns and dtypes as `read_ledger`).

    `path` is a run folder, a ``.specify/workflows/runs`` folder, a project root, or
    a list of these.
    """
    from .speckit import find_speckit_runs

    items = [path] if isinstance(path, str | os.PathLike) else list(path)
    runs = [run for item in items for run in find_speckit_runs(item)]
    if not runs:
        shown = ", ".join(str(i) for i in items)
        raise LedgerError("no spec-kit run found", [Problem(
            "speckit_no_run", "no folder holding log.jsonl and state.json (looked in the "
            "folder, in .specify/workflows/runs/ and in workflows/runs/)", shown)])
    return read_ledger(runs, errors=errors)
