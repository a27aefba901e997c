"""The crew family's codec: a `CrewReport` to and from plain mappings, and back from the
``report``/``verdict`` events of a crew run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core.form import refuse_unknown_keys
from ..core.measures import MEASURES, measures_of
from ..errors import LoopRefused
from .engine import CrewReport

if TYPE_CHECKING:
    from ..core.loop import Loop

__all__ = ["CrewCodec", "parse_report", "serialize_report"]

_KEYS = ("role", "verdict", "summary", "payload", *MEASURES)


def parse_report(data: Mapping[str, Any]) -> CrewReport:
    """A `CrewReport` from ``{"role", "verdict", "summary", "payload"?, measures?}``;
    `LoopRefused` (``bad_report``) naming the bad key."""
    if not isinstance(data, Mapping):
        raise LoopRefused("a crew report is a JSON object", code="bad_report")
    refuse_unknown_keys(data, _KEYS, "a crew report")
    for key in ("role", "verdict", "summary"):
        if not isinstance(data.get(key), str):
            raise LoopRefused(f"a crew report needs {key!r} (text)", code="bad_report")
    payload = data.get("payload")
    if payload is not None and not isinstance(payload, Mapping):
        raise LoopRefused("'payload' is a JSON object, e.g. {\"findings\": [\"...\"]}",
                          code="bad_report")
    return CrewReport(str(data["role"]), str(data["verdict"]), str(data["summary"]),
                      None if payload is None else dict(payload), **measures_of(data))


def serialize_report(report: CrewReport) -> dict[str, Any]:
    """The JSON data `parse_report` reads back."""
    data: dict[str, Any] = {"role": report.role, "verdict": report.verdict,
                            "summary": report.summary}
    if report.payload is not None:
        data["payload"] = dict(report.payload)
    data.update(measures_of({k: getattr(report, k) for k in MEASURES}))
    return data


class CrewCodec:
    """Crew reports as plain mappings, and back from a run's ledger events."""

    parse = staticmethod(parse_report)
    serialize = staticmethod(serialize_report)

    def from_events(self, events: Sequence[Mapping[str, Any]], loop: Loop[Any, Any]
                    ) -> tuple[list[Any], list[datetime | None]]:
        """The reports behind the ``report`` and ``verdict`` events of the roles."""
        reports: list[Any] = []
        times: list[datetime | None] = []
        for e in events:
            if e.get("kind") not in ("report", "verdict") or e.get("role") is None:
                continue
            payload = e.get("payload") or {}
            data = payload.get("data") if isinstance(payload, Mapping) else None
            reports.append(CrewReport(str(e["role"]), str(e.get("verdict") or ""),
                                      str(e.get("summary") or ""),
                                      dict(data) if data else None, **measures_of(e)))
            when = e.get("ts")
            times.append(when if isinstance(when, datetime) else None)
        return reports, times
