"""Histories bigger than memory: ledgers in a Parquet folder, analysed by DuckDB.

``write_parquet(source, folder)`` writes ledgers (a frame, files, folders) to a folder
partitioned by UTC date of the event (Hive style, ``date=2025-03-03/events-0.parquet``;
``date=none`` for events with no clock), one ledger at a time, so a history of any
size is written in the memory of its biggest ledger. Each file holds the columns of
`PARQUET_SCHEMA`: the frame's columns (`read_ledger`), categories as strings and the
payload as JSON text; the date is in the folder name only.

``LedgerFolder(folder)`` runs `run_outcomes`, `usage_by_role`, `rework` and
`verdict_funnel` as DuckDB SQL over every ``*.parquet`` file below the folder, without
loading the events into pandas: only the small results come back, with the same
columns, dtypes and order as the pandas functions on the same events. The analysis
functions themselves accept a `LedgerFolder` in place of a frame.

Why by date: histories grow by day and are usually looked at by period, runs are many
and small (a folder per run would mean millions of tiny files), and no analysis needs
the events of a run to sit together (SQL groups them).
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import LedgerError, Problem, UsageError
from .analyses import (
    ACT_KINDS,
    NEGATIVE_VERDICTS,
    WHOLE_RUN,
    funnel_finish,
    rework_finish,
    usage_finish,
)
from .columns import ARROW_SCHEMA, CATEGORIES
from .payloads import TEXT
from .reader import COLUMNS, Source

if TYPE_CHECKING:
    import duckdb

#: The columns of a ledger in Parquet, in order: the frame's columns (`read_ledger`),
#: categories as strings, `payload` as JSON text. Simulation output uses it too.
PARQUET_SCHEMA: Final = pa.schema(
    [ARROW_SCHEMA.field(name) for name in COLUMNS if name != "payload"]
    + [pa.field("payload", TEXT)])
assert tuple(PARQUET_SCHEMA.names) == COLUMNS  # one schema for the frame and the files

#: The partition folder of events with no clock (null `ts`).
NO_DATE: Final = "none"


def parquet_schema() -> pa.Schema:
    """`PARQUET_SCHEMA`: what `write_parquet` writes and `LedgerFolder` expects."""
    return PARQUET_SCHEMA


def ledger_table(frame: pd.DataFrame) -> pa.Table:
    """A ledger frame as an Arrow table of `PARQUET_SCHEMA` (payload as JSON text)."""
    from .reader import payload_texts_of

    missing = [c for c in COLUMNS if c != "payload" and c not in frame.columns]
    if missing:
        raise UsageError(f"the frame has no column {', '.join(map(repr, missing))}; pass a "
                         "frame from crewbook.read_ledger")
    arrays = []
    for field in PARQUET_SCHEMA:
        if field.name == "payload":
            arrays.append(payload_texts_of(frame["payload"]) if "payload" in frame.columns
                          else pa.array(["{}"] * len(frame), type=TEXT))
            continue
        column = frame[field.name]
        if field.name in CATEGORIES:
            column = column.astype(object)
        arrays.append(pa.array(column, type=field.type, from_pandas=True))
    return pa.Table.from_arrays(arrays, schema=PARQUET_SCHEMA)


def write_parquet(source: Source | pd.DataFrame, folder: str | os.PathLike[str], *,
                  name: str = "events") -> list[Path]:
    """Write ledgers to `folder`, partitioned by date (see the module docstring).

    `source` is a ledger frame, or what `read_ledger` reads (files, folders), read and
    written one ledger file at a time. Files are named ``<name>-<n>.parquet``; an
    existing file of that name is replaced, other files are kept (write each batch of
    ledgers with its own `name` to add to a folder). Returns the files written, sorted.
    """
    from .reader import find_ledgers, read_ledger

    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    frames: Iterable[pd.DataFrame]
    if isinstance(source, pd.DataFrame):
        frames = [source]
    else:
        frames = (read_ledger(path) for path, _ in find_ledgers(source))
    written: list[Path] = []
    for index, frame in enumerate(frames):
        table = ledger_table(frame)
        del frame
        written += write_table(table, root, f"{name}-{index}")
    return sorted(written)


def write_table(table: pa.Table | Iterable[pa.RecordBatch], folder: str | os.PathLike[str],
                name: str) -> list[Path]:
    """Write events of `PARQUET_SCHEMA` to `folder`, partitioned by date, as
    ``date=<day>/<name>-<i>.parquet``; the files written. `table` is a table or an
    iterable of record batches (streamed: memory for a few batches, one file per day)."""
    import pyarrow.dataset as ds

    batches = table.to_batches() if isinstance(table, pa.Table) else table
    written: list[str] = []
    ds.write_dataset(
        (_dated(batch) for batch in batches), folder,
        schema=PARQUET_SCHEMA.append(pa.field("date", pa.string())), format="parquet",
        partitioning=["date"], partitioning_flavor="hive",
        basename_template=f"{name}-{{i}}.parquet", existing_data_behavior="overwrite_or_ignore",
        file_visitor=lambda f: written.append(f.path), max_rows_per_group=1 << 20,
        max_open_files=4096)
    return [Path(p) for p in written]


def _dated(batch: pa.RecordBatch) -> pa.RecordBatch:
    if batch.schema.names != PARQUET_SCHEMA.names:
        raise UsageError(f"the columns are {batch.schema.names}, not those of PARQUET_SCHEMA")
    day = pc.fill_null(pc.strftime(batch.column("ts"), format="%Y-%m-%d"), NO_DATE)
    return pa.RecordBatch.from_arrays([*batch.cast(PARQUET_SCHEMA).columns, day],
                                      schema=PARQUET_SCHEMA.append(pa.field("date",
                                                                            pa.string())))


# -- reading a folder ------------------------------------------------------------------

_COMPATIBLE: Final = {
    "string": (pa.types.is_string, pa.types.is_large_string, pa.types.is_dictionary),
    "int64": (pa.types.is_integer,),
    "double": (pa.types.is_floating,),
    "timestamp[ns, tz=UTC]": (pa.types.is_timestamp,),
}


def _compatible(expected: pa.DataType, actual: pa.DataType) -> bool:
    checks = _COMPATIBLE.get(str(expected), ())
    if pa.types.is_dictionary(actual) and not pa.types.is_string(actual.value_type):
        return False
    if pa.types.is_timestamp(actual) and actual.tz not in ("UTC", "+00:00", "Etc/UTC"):
        return False
    return any(check(actual) for check in checks)


class LedgerFolder:
    """A folder of ledger Parquet files, queried by DuckDB (nothing loaded in pandas).

    Every ``*.parquet`` file below `folder` is read (sorted by path); each must hold
    the columns of `PARQUET_SCHEMA`, else `LedgerError` names the file and the column.
    ``sql(query)`` runs any DuckDB query over the view ``events``.
    """

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise LedgerError("cannot read the Parquet folder", [Problem(
                "file_not_found", "no such folder; give the folder write_parquet wrote",
                str(self.folder))])
        self.files = sorted(self.folder.rglob("*.parquet"))
        if not self.files:
            raise LedgerError("no ledger in this folder", [Problem(
                "parquet_no_files", "the folder holds no .parquet file (looked in every "
                "subfolder); write one with crewbook.ledger.write_parquet or `crewbook "
                "ledger convert --to parquet-folder`", str(self.folder))])
        self._check()
        self._con: duckdb.DuckDBPyConnection | None = None

    def _check(self) -> None:
        import pyarrow.parquet as pq

        problems = []
        for path in self.files:
            try:
                schema = pq.read_schema(path)
            except (OSError, pa.ArrowException) as exc:
                problems.append(Problem("parquet_unreadable", f"not a Parquet file ({exc})",
                                        str(path)))
                continue
            for field in PARQUET_SCHEMA:
                if field.name not in schema.names:
                    problems.append(Problem(
                        "parquet_missing_column", f"no column {field.name!r}; a ledger file "
                        f"has the columns {', '.join(PARQUET_SCHEMA.names)}", str(path),
                        key=field.name))
                elif not _compatible(field.type, schema.field(field.name).type):
                    problems.append(Problem(
                        "parquet_bad_column", f"column {field.name!r} is "
                        f"{schema.field(field.name).type}, not {field.type}", str(path),
                        key=field.name))
        if problems:
            raise LedgerError(f"{self.folder} holds Parquet files that are not ledgers",
                              problems)

    # -- DuckDB ----------------------------------------------------------------------

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The DuckDB connection with the view ``events`` (made on first use)."""
        if self._con is None:
            import duckdb

            con = duckdb.connect()
            con.execute("SET TimeZone = 'UTC'")
            con.execute("SET enable_progress_bar = false")
            files = ", ".join("'" + str(f).replace("'", "''") + "'" for f in self.files)
            columns = ", ".join(f'"{c}"' for c in COLUMNS)
            con.execute(f"CREATE VIEW events AS SELECT {columns} FROM read_parquet([{files}], "
                        "hive_partitioning = false, union_by_name = true)")
            self._con = con
        return self._con

    def sql(self, query: str) -> pd.DataFrame:
        """The result of a DuckDB query over the view ``events``, as a DataFrame."""
        return pd.DataFrame(self.con.sql(query).df())

    def _arrow(self, query: str) -> pa.Table:
        return self.con.sql(query).to_arrow_table()

    def categories(self, column: str) -> list[str]:
        """The distinct non-null values of a column, sorted (the frame's categories)."""
        table = self._arrow(f'SELECT DISTINCT "{column}" AS v FROM events '
                            f'WHERE "{column}" IS NOT NULL')
        return sorted(str(v) for v in table.column("v").to_pylist())

    def __len__(self) -> int:
        return int(self._arrow("SELECT count(*) AS n FROM events").column("n")[0].as_py())

    def __repr__(self) -> str:
        return f"LedgerFolder({str(self.folder)!r}, files={len(self.files)})"

    def _repr_html_(self) -> str:
        return (f"<b>LedgerFolder</b> <code>{html.escape(str(self.folder))}</code>: "
                f"{len(self.files)} Parquet file{'s' if len(self.files) != 1 else ''}")

    # -- the analyses ----------------------------------------------------------------

    def run_outcomes(self) -> pd.DataFrame:
        """`analyses.run_outcomes` of the folder's events, computed by DuckDB."""
        acts = _sql_list(ACT_KINDS)
        table = self._arrow(f"""
            SELECT run::VARCHAR AS run, arg_min(loop, seq) AS loop,
                   min(ts) AS started,
                   CASE WHEN count(*) > count(ts) THEN NULL ELSE max(ts) END AS ended,
                   count(*) AS events,
                   count(*) FILTER (WHERE kind IN ({acts})) AS acts,
                   max(attempt) AS rounds,
                   bool_or(kind = 'finish') AS finished,
                   arg_max(verdict, seq) FILTER (WHERE kind = 'finish'
                                                 AND verdict IS NOT NULL) AS finished_reason,
                   bool_or(kind = 'escalate') AS escalated,
                   sum(tokens_in)::BIGINT AS tokens_in, sum(tokens_out)::BIGINT AS tokens_out,
                   sum(cost)::DOUBLE AS cost
            FROM events GROUP BY run""")
        out = pd.DataFrame(index=pd.Index(table.column("run").to_pylist(), name="run"))
        col = table.column
        out["loop"] = pd.Categorical(col("loop").to_pylist(),
                                     categories=self.categories("loop"))
        for name in ("started", "ended"):
            out[name] = col(name).cast(pa.timestamp("ns", tz="UTC")).to_pandas().array
            out[name] = out[name].astype("datetime64[ns, UTC]")  # the same unit everywhere
        out["duration"] = out["ended"] - out["started"]
        for name in ("events", "acts", "rounds"):
            out[name] = _int64(col(name))
        out["finished"] = col("finished").to_numpy(zero_copy_only=False).astype(bool)
        reason = pd.Series(col("finished_reason").to_pylist(), index=out.index, dtype=object)
        out["finished_reason"] = reason.where(out["finished"].to_numpy(), None).astype(
            "category")
        out["escalated"] = col("escalated").to_numpy(zero_copy_only=False).astype(bool)
        for name in ("tokens_in", "tokens_out"):
            out[name] = _int64(col(name))
        out["tokens"] = out["tokens_in"].add(out["tokens_out"], fill_value=0).astype("Int64")
        out["cost"] = col("cost").cast(pa.float64()).to_numpy(zero_copy_only=False)
        out.index = pd.Index(out.index.astype(str), name="run")
        return out.sort_values(["started", "run"], kind="stable")

    def usage_by_role(self, by: str | Sequence[str] = ("role", "stage")) -> pd.DataFrame:
        """`analyses.usage_by_role` of the folder's events, computed by DuckDB."""
        keys = [by] if isinstance(by, str) else list(by)
        unknown = [k for k in keys if k not in COLUMNS or k == "payload"]
        if unknown:
            raise UsageError(f"cannot group by {', '.join(map(repr, unknown))}: not a ledger "
                             f"column (columns: {', '.join(COLUMNS[:-1])})")
        cols = ", ".join(f'"{k}"' for k in keys)
        where = "WHERE role IS NOT NULL" if "role" in keys else ""
        table = self._arrow(f"""
            SELECT {cols}, count(*) AS events,
                   count(*) FILTER (WHERE kind IN ({_sql_list(ACT_KINDS)})) AS acts,
                   coalesce(sum(duration_ms), 0)::DOUBLE AS time_ms,
                   coalesce(sum(tokens_in), 0)::BIGINT AS tokens_in,
                   coalesce(sum(tokens_out), 0)::BIGINT AS tokens_out,
                   coalesce(sum(cost), 0)::DOUBLE AS cost
            FROM events {where} GROUP BY {cols}
            ORDER BY {", ".join(f'"{k}" NULLS LAST' for k in keys)}""")
        levels = [self._level(table, k) for k in keys]
        index = pd.MultiIndex.from_arrays(levels, names=keys) if len(keys) > 1 else \
            pd.Index(levels[0], name=keys[0])
        out = pd.DataFrame({"events": table.column("events").to_numpy()}, index=index)
        out["acts"] = table.column("acts").to_numpy()
        out["time"] = pd.to_timedelta(table.column("time_ms").to_numpy(), unit="ms")
        for name in ("tokens_in", "tokens_out"):
            out[name] = pd.array(table.column(name).to_pylist(), dtype="Int64")
        out["cost"] = table.column("cost").to_numpy().astype("float64")
        return usage_finish(out)

    def _level(self, table: pa.Table, key: str) -> Any:
        values = table.column(key).to_pylist()
        if key in CATEGORIES:
            return pd.Categorical(values, categories=self.categories(key))
        if pa.types.is_integer(PARQUET_SCHEMA.field(key).type):
            return pd.array(values, dtype="Int64")
        return values

    def rework(self) -> pd.DataFrame:
        """`analyses.rework` of the folder's events, computed by DuckDB."""
        task = (f"coalesce(json_extract_string(payload, '$.task'), "
                f"'{WHOLE_RUN}')")
        work = f"""SELECT run::VARCHAR AS run, {task} AS task, seq, kind, role, verdict,
                          attempt FROM events WHERE kind IN ('report', 'verdict', 'bar')"""
        base = self._arrow(f"""SELECT run, task, min(seq) AS first, max(attempt) AS rounds
                               FROM ({work}) GROUP BY run, task""").to_pandas()
        counts = self._arrow(f"""
            SELECT run, task, coalesce(role, kind) || ' ' || verdict AS cause,
                   count(*) AS n
            FROM ({work}) WHERE kind IN ('verdict', 'bar')
                            AND verdict IN ({_sql_list(sorted(NEGATIVE_VERDICTS))})
            GROUP BY ALL""").to_pandas()
        base = base.astype({"run": object, "task": object}).set_index(["run", "task"])
        base["rounds"] = base["rounds"].astype("Int64")
        series = counts.astype({"run": object, "task": object, "cause": object}).set_index(
            ["run", "task", "cause"])["n"].astype("int64").sort_index()
        return rework_finish(base, series)

    def verdict_funnel(self) -> pd.DataFrame:
        """`analyses.verdict_funnel` of the folder's events, computed by DuckDB."""
        counts = self._arrow("""
            SELECT coalesce(attempt, 1) AS attempt, role, verdict, count(*) AS n
            FROM events WHERE kind = 'verdict' AND role IS NOT NULL AND verdict IS NOT NULL
            GROUP BY ALL""").to_pandas()
        counts = counts.astype({"attempt": "int64", "role": object, "verdict": object,
                                "n": "int64"})
        table = counts.pivot_table(index="attempt", columns=["role", "verdict"], values="n",
                                   aggfunc="sum", fill_value=0).sort_index(axis=0).sort_index(
            axis=1)
        if not len(counts):
            table = pd.DataFrame(index=pd.Index([], dtype="int64", name="attempt"))
        table.index = pd.Index(table.index.astype("int64"), name="attempt")
        return funnel_finish(table.astype("int64"))


def _int64(column: pa.ChunkedArray) -> pd.api.extensions.ExtensionArray:
    """An integer column as pandas ``Int64`` (nulls as NA), without a Python int per row."""
    values = column.cast(pa.int64())
    mask = values.is_null().to_numpy(zero_copy_only=False)
    data = values.fill_null(0).to_numpy(zero_copy_only=False)
    return pd.arrays.IntegerArray(data.astype("int64"), mask.astype(bool))


def _sql_list(values: Iterable[str]) -> str:
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)
