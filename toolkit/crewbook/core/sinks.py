"""Event sinks: the `EventSink` protocol every loop appends to; `MemoryLedger`, the
in-memory ledger that fills events as the file writer (`crewbook.Ledger`) does; and
`ParquetLedger`, which writes them to a folder of Parquet files in batches (bounded
memory, for simulations and replays of many runs)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from .clock import utc_now

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = ["EventSink", "MemoryLedger", "ParquetLedger", "write_parquet_part"]


@runtime_checkable
class EventSink(Protocol):
    """Anything events can be appended to: a `crewbook.Ledger` or a `MemoryLedger`.

    A sink may also offer ``append_many(events)``: `Loop.report` then hands it all the
    events of one act at once (one lock, one write).
    """

    def append(self, event: Any) -> Any:
        """Store one event; return what was stored."""


def fill(event: Any, run: str, loop: str | None, next_seq: dict[str, int]) -> dict[str, Any]:
    """A copy of `event` with what a ledger adds: `run` and `loop` when it has none, `ts`
    now (UTC) when it has none, and the next `seq` of its run (counted in `next_seq`)."""
    stored = dict(event)
    key = stored.get("run")
    if key is None:
        key = stored["run"] = run
    if stored.get("loop") is None and loop is not None:
        stored["loop"] = loop
    if stored.get("ts") is None:
        stored["ts"] = utc_now().isoformat()
    stored["seq"] = next_seq.get(key, 0)
    next_seq[key] = stored["seq"] + 1
    return stored


class MemoryLedger:
    """An in-memory ledger (a list of event dicts) for loops run without a file.

    It fills events as `crewbook.Ledger` does: `run` (the ledger's own when an event
    names none; default ``"memory"``), `loop`, `ts` (now, when missing) and `seq`
    (per run, from 0). `frame()` is the same typed frame `read_ledger` gives for the
    same events written to a file, so every analysis works on both.
    """

    def __init__(self, run: str = "memory", *, loop: str | None = None) -> None:
        self.run = run
        self.loop = loop
        self.events: list[dict[str, Any]] = []
        self._next_seq: dict[str, int] = {}

    def append(self, event: Any) -> dict[str, Any]:
        """Store a copy of `event` with its `run`, `loop`, `ts` and `seq`; return it."""
        stored = fill(event, self.run, self.loop, self._next_seq)
        self.events.append(stored)
        return stored

    def frame(self, *, payload: Literal["dict", "flat", "none"] = "dict") -> pd.DataFrame:
        """The events as the typed frame `read_ledger` gives (`crewbook.ledger` columns).

        Each event goes through the `LedgerEvent` model, as the file writer's do: an
        event that breaks the format raises `LedgerError` naming it.
        """
        from ..ledger.reader import events_frame

        return events_frame(self.events, payload=payload)

    def __len__(self) -> int:
        return len(self.events)

    def __repr__(self) -> str:
        return f"<MemoryLedger {len(self.events)} events>"


def write_parquet_part(data: pa.Table | pd.DataFrame, folder: Path, name: str) -> Path:
    """Write ``folder/name.parquet`` atomically: a temporary ``.name…`` file (which
    readers skip), then a rename. A ledger frame (`read_ledger`'s columns) is written as
    `crewbook.ledger.reader.to_parquet` writes it (payload as JSON text)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    final = folder / f"{name}.parquet"
    temp = folder / f".{name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        if isinstance(data, pa.Table):
            pq.write_table(data, temp)
        else:
            from ..ledger.reader import to_parquet

            to_parquet(data, temp)
        os.replace(temp, final)
    finally:
        if temp.exists():
            temp.unlink()
    return final


class ParquetLedger:
    """An event sink that writes a folder of Parquet files, `batch` events per file.

    Events are filled as `MemoryLedger` fills them (`run`, `loop`, `ts`, `seq` per run),
    checked by the `LedgerEvent` model when a batch is written, and each file has
    `read_ledger`'s columns (so ``read_ledger(sorted(folder.glob("*.parquet")))`` and
    DuckDB read them). Memory holds one batch at most; `close()` (or leaving a ``with``
    block) writes the last one. A file appears whole or not at all
    (`write_parquet_part`), so a crash loses at most the batch not yet written: use the
    JSON Lines `crewbook.Ledger` where every act must be durable.
    """

    def __init__(self, folder: str | os.PathLike[str], run: str = "parquet", *,
                 loop: str | None = None, batch: int = 50_000, prefix: str = "events") -> None:
        from ..errors import UsageError

        if batch < 1:
            raise UsageError(f"batch must be 1 or more events, not {batch}")
        self.folder = Path(folder)
        self.run, self.loop, self.batch, self.prefix = run, loop, batch, prefix
        self.parts: list[Path] = []
        self.written = 0
        self._buffer: list[dict[str, Any]] = []
        self._next_seq: dict[str, int] = {}
        self._number = len(list(self.folder.glob(f"{prefix}-*.parquet"))) \
            if self.folder.is_dir() else 0

    def append(self, event: Any) -> dict[str, Any]:
        """Store a copy of `event` with its `run`, `loop`, `ts` and `seq`; return it."""
        stored = fill(event, self.run, self.loop, self._next_seq)
        self._buffer.append(stored)
        if len(self._buffer) >= self.batch:
            self.flush()
        return stored

    def append_many(self, events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Store every event of one act (a batch is only written between acts)."""
        stored = [self.append(e) for e in events]
        return stored

    def flush(self) -> Path | None:
        """Write the events held as one file; its path (None when none was held)."""
        if not self._buffer:
            return None
        from ..ledger.reader import events_frame

        frame = events_frame(self._buffer, name=str(self.folder))
        path = write_parquet_part(frame, self.folder, f"{self.prefix}-{self._number:06d}")
        self._number += 1
        self.written += len(self._buffer)
        self._buffer = []
        self.parts.append(path)
        return path

    def close(self) -> None:
        """Write what is held."""
        self.flush()

    def __enter__(self) -> ParquetLedger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        return self.written + len(self._buffer)

    def __repr__(self) -> str:
        return (f"<ParquetLedger {self.folder}: {len(self):,} events, "
                f"{len(self.parts)} files written>")
