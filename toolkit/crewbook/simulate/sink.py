"""Simulations streamed to a folder of Parquet files, in bounded memory (`simulate_to`).

Each executor task (a chunk of runs) writes its own files, so neither the caller nor
the workers ever hold more than one chunk; a million runs cost the memory of one::

    out/
      runs/part-s000-000000000.parquet     one row per run (RUN_SCHEMA)
      events/part-s000-000000000.parquet   the runs' ledger events (EVENT_COLUMNS)

A part is written under a temporary name starting with ``.`` and renamed when whole
(`crewbook.core.sinks.write_parquet_part`),
so a reader (pyarrow, DuckDB: ``read_parquet('out/runs/*.parquet')``) never sees half a
file. Events have exactly the columns of `crewbook.ledger.read_ledger`'s frame, payload
as JSON text (as `crewbook.ledger.reader.to_parquet` writes them), so the ledger
analyses read them; runs have the outcome columns of `crewbook.simulate.frames`, with
``attempts`` and ``refused`` as maps (role or code → count).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..core.sinks import write_parquet_part
from ..ledger.reader import COLUMNS

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from .runs import RunResult

__all__ = ["EVENT_COLUMNS", "RUN_COLUMNS", "SimulationFolder", "run_schema", "runs_table"]

#: The events' columns: `read_ledger`'s, in its order (the one definition, in ledger/).
EVENT_COLUMNS: Final[tuple[str, ...]] = COLUMNS
#: The runs' columns (a sweep puts ``setting`` and one column per grid key first).
RUN_COLUMNS: Final[tuple[str, ...]] = (
    "run", "finished_reason", "finished", "acts", "rounds", "refusals", "tokens_in",
    "tokens_out", "tokens", "cost", "duration_ms", "attempts", "refused")
RUNS, EVENTS = "runs", "events"


def run_schema(front: Sequence[tuple[str, pa.DataType]] = ()) -> pa.Schema:
    """The Arrow schema of the runs' files (`front`: a sweep's setting columns)."""
    import pyarrow as pa

    counts = pa.map_(pa.string(), pa.int64())
    return pa.schema([*front, ("run", pa.int64()), ("finished_reason", pa.string()),
                      ("finished", pa.bool_()),
                      *[(name, pa.int64()) for name in ("acts", "rounds", "refusals",
                                                        "tokens_in", "tokens_out", "tokens")],
                      ("cost", pa.float64()), ("duration_ms", pa.int64()),
                      ("attempts", counts), ("refused", counts)])


def arrow_type(values: Sequence[Any]) -> pa.DataType:
    """The column type of a grid key's values (as `frames.sweep_frame` types them)."""
    import pyarrow as pa

    if all(isinstance(v, bool) for v in values):
        return pa.bool_()
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return pa.int64()
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return pa.float64()
    return pa.string()


def runs_table(results: Sequence[RunResult],
               front: Sequence[tuple[str, Any, pa.DataType]] = ()) -> pa.Table:
    """One row per run, `front` columns (name, value, type) first."""
    import pyarrow as pa

    n = len(results)
    columns: dict[str, Any] = {}
    for name, value, _ in front:
        columns[name] = [value] * n
    for name in ("run", "finished_reason", "finished", "acts", "rounds", "refusals",
                 "tokens_in", "tokens_out"):
        columns[name] = [getattr(r, name) for r in results]
    columns["tokens"] = [r.tokens_in + r.tokens_out for r in results]
    columns["cost"] = [r.cost for r in results]
    columns["duration_ms"] = [r.duration_ms for r in results]
    columns["attempts"] = [list(r.attempts.items()) for r in results]
    columns["refused"] = [list(r.refused.items()) for r in results]
    schema = run_schema([(name, kind) for name, _, kind in front])
    for name, _, kind in front:
        if kind == pa.string():
            columns[name] = [str(v) for v in columns[name]]
    return pa.Table.from_pydict(columns, schema=schema)


def write_chunk(folder: Path, part: str, results: Sequence[RunResult],
                front: Sequence[tuple[str, Any, pa.DataType]], events: bool) -> None:
    """The files of one chunk of runs (what each executor task writes)."""
    write_parquet_part(runs_table(results, front), folder / RUNS, part)
    if events:
        from .frames import ledger_frame

        frame = ledger_frame([line for r in results for line in r.lines])
        write_parquet_part(frame, folder / EVENTS, part)


def check_out(folder: Path) -> None:
    """Refuse a folder that already holds a simulation's parts (they would mix)."""
    from ..errors import SimulationError

    for sub in (RUNS, EVENTS):
        if any((folder / sub).glob("*.parquet")):
            raise SimulationError(f"{folder / sub} already holds Parquet parts of a "
                                  "simulation; write to a new folder or remove them first")


@dataclass(frozen=True)
class SimulationFolder:
    """Where `simulate_to` wrote its runs (and events): read them back, or query them
    in place with DuckDB (``read_parquet('<path>/runs/*.parquet')``)."""

    path: Path
    runs: int
    acts: int
    events: bool
    seed: int
    settings: int = 1

    def outcomes(self) -> pd.DataFrame:
        """The runs as the frame `simulate` (or `sweep`) returns: loads them all."""
        import pandas as pd
        import pyarrow.parquet as pq

        from .frames import _typed

        table = pq.read_table(self.path / RUNS)
        keys = [c for c in table.column_names if c not in RUN_COLUMNS and c != "setting"]
        frame = table.drop_columns(["attempts", "refused"]).to_pandas()
        order = ["setting", "run"] if "setting" in frame.columns else ["run"]
        index = frame.sort_values(order, kind="stable").index
        frame = frame.loc[index].reset_index(drop=True)
        for name in ("setting", "run", "acts", "rounds", "refusals", "tokens_in", "tokens_out",
                     "tokens", "duration_ms"):
            if name in frame.columns:
                frame[name] = frame[name].astype("Int64")
        reasons = frame["finished_reason"]
        frame["finished_reason"] = pd.Categorical(reasons, categories=sorted(set(reasons)))
        for key in keys:
            frame[key] = _typed(frame[key])
        extra: dict[str, Any] = {}
        for column in ("attempts", "refused"):
            rows = [dict(table.column(column)[int(i)].as_py()) for i in index]
            names: dict[str, None] = {}
            for row in rows:
                names.update(dict.fromkeys(row))
            ordered = list(names) if column == "attempts" else sorted(names)
            for name in ordered:
                extra[f"{column}.{name}"] = pd.array([row.get(name, 0) for row in rows],
                                                     dtype="Int64")
        if extra:
            frame = pd.concat([frame, pd.DataFrame(extra)], axis=1)
        frame.attrs["crewbook_seed"] = self.seed
        out: pd.DataFrame = frame
        return out

    def ledger(self) -> pd.DataFrame:
        """The events, as `read_ledger`'s frame (loads them all; payload as JSON text)."""
        from ..errors import SimulationError

        if not self.events:
            raise SimulationError(f"{self.path} holds the runs' outcomes, not events: run "
                                  "simulate_to(..., events=True) to keep them")
        from ..ledger import read_ledger

        frame: pd.DataFrame = read_ledger(sorted((self.path / EVENTS).glob("*.parquet")))
        return frame

    def __repr__(self) -> str:
        what = " and their events" if self.events else ""
        return (f"<SimulationFolder {self.path}: {self.runs:,} runs{what} "
                f"({self.settings} setting{'s' if self.settings != 1 else ''}, seed {self.seed})>")

    def _repr_html_(self) -> str:
        return f"<code>{html.escape(repr(self))}</code>"
