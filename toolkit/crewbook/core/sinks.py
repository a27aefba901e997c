"""Event sinks: the `EventSink` protocol every loop appends to, and `MemoryLedger`, the
in-memory ledger that fills events as the file writer (`crewbook.Ledger`) does."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from .clock import utc_now

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["EventSink", "MemoryLedger"]


@runtime_checkable
class EventSink(Protocol):
    """Anything events can be appended to: a `crewbook.Ledger` or a `MemoryLedger`.

    A sink may also offer ``append_many(events)``: `Loop.report` then hands it all the
    events of one act at once (one lock, one write).
    """

    def append(self, event: Any) -> Any:
        """Store one event; return what was stored."""


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
        stored = dict(event)
        run = stored.get("run")
        if run is None:
            run = stored["run"] = self.run
        if stored.get("loop") is None and self.loop is not None:
            stored["loop"] = self.loop
        if stored.get("ts") is None:
            stored["ts"] = utc_now().isoformat()
        seq = self._next_seq.get(run, 0)
        self._next_seq[run] = seq + 1
        stored["seq"] = seq
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
