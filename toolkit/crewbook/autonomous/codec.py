"""The autonomous family's codec: a `LoopStep` to and from plain mappings (the recette's
test run as a `BarRun`'s JSON data), and back from the events of an autonomous run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ..core.bar import BarRun
from ..core.family import CodecBase, Replay
from ..core.form import refuse_unknown_keys
from ..errors import LoopRefused
from .engine import LoopStep
from .model import LoopState

__all__ = ["AutonomousCodec", "parse_step", "serialize_step"]

_KEYS = ("test", "summary", "details")


def parse_step(data: Mapping[str, Any]) -> LoopStep:
    """A `LoopStep` from ``{"summary"?, "details"?, "test"?}`` (``test``: a `BarRun`'s
    data); `LoopRefused` (``bad_report``) naming the bad key."""
    if not isinstance(data, Mapping):
        raise LoopRefused("an autonomous step is a JSON object", code="bad_report")
    refuse_unknown_keys(data, _KEYS, "an autonomous step")
    details = data.get("details") or {}
    if not isinstance(details, Mapping):
        raise LoopRefused("'details' is a JSON object", code="bad_report")
    test = data.get("test")
    if isinstance(test, Mapping):
        try:
            test = BarRun.model_validate(dict(test))
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"])
            raise LoopRefused(f"'test' is a bar run: {where}: {first['msg']}",
                              code="bad_report") from None
    return LoopStep(test=test, summary=str(data.get("summary") or ""), details=dict(details))


def serialize_step(step: LoopStep) -> dict[str, Any]:
    """The JSON data `parse_step` reads back."""
    data: dict[str, Any] = {}
    if step.test is not None:
        data["test"] = step.test.model_dump() if isinstance(step.test, BarRun) else step.test
    if step.summary:
        data["summary"] = step.summary
    if step.details:
        data["details"] = dict(step.details)
    return data


def _run_of(event: Mapping[str, Any]) -> BarRun:
    p = event.get("payload") or {}
    return BarRun(name=str(event.get("stage") or "test"), command=str(p.get("command") or ""),
                  cwd=str(p.get("cwd") or "."), exit_code=p.get("exit_code"),
                  timed_out=bool(p.get("timed_out")),
                  duration_ms=int(event.get("duration_ms") or 0),
                  output_bytes=int(p.get("output_bytes") or 0),
                  truncated=bool(p.get("truncated")), tail=str(p.get("tail") or ""))


class AutonomousCodec(CodecBase[LoopState, LoopStep]):
    """Autonomous steps as plain mappings, and back from a run's ledger events."""

    parse = staticmethod(parse_step)
    serialize = staticmethod(serialize_step)

    def report_of(self, event: Mapping[str, Any], replay: Replay[LoopState, LoopStep]
                  ) -> LoopStep | None:
        """One step per phase act: the plan, each implementation, each recette (its test
        run rebuilt from the ``bar`` event before it), the delivery."""
        kind, stage = event.get("kind"), event.get("stage")
        if kind == "bar":
            replay.carried["run"] = _run_of(event)
        elif kind == "plan" or (kind == "report" and stage in ("implementation", "delivery")):
            return LoopStep(summary=str(event.get("summary") or ""))
        elif kind == "verdict" and stage == "recette" and replay.carried.get("run") is not None:
            return LoopStep(test=replay.carried.pop("run"))
        return None
