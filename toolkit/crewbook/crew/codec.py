"""The crew family's codec: a `CrewReport` to and from plain mappings, and back from the
``report``/``verdict`` events of a crew run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.family import CodecBase, Replay
from ..core.form import refuse_unknown_keys
from ..core.measures import MEASURES, measures_of
from ..errors import LoopRefused
from .engine import CrewReport
from .model import CrewState

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


class CrewCodec(CodecBase[CrewState, CrewReport]):
    """Crew reports as plain mappings, and back from a run's ledger events."""

    parse = staticmethod(parse_report)
    serialize = staticmethod(serialize_report)

    def report_of(self, event: Mapping[str, Any], replay: Replay[CrewState, CrewReport]
                  ) -> CrewReport | None:
        """The report behind a ``report`` or ``verdict`` event of a role."""
        if event.get("kind") not in ("report", "verdict") or event.get("role") is None:
            return None
        payload = event.get("payload") or {}
        data = payload.get("data") if isinstance(payload, Mapping) else None
        return CrewReport(str(event["role"]), str(event.get("verdict") or ""),
                          str(event.get("summary") or ""), dict(data) if data else None,
                          **measures_of(event))
