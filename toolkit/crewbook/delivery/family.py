"""The delivery family (SPEC C) described once for the front ends: ``FAMILY``.

Kinds: ``standard`` (the fallback mode: each agent reports in turn) and ``coordinator``
(the architect stays on and delegates). Routing calls this family ``delivery`` too. A
source is a task (``.yaml``) or a `Task`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.family import LoopFamily
from .codec import DeliveryCodec, DeliveryReport, Measured
from .factory import factory_for
from .form import DeliveryForm
from .players import DeliveryPlayers
from .store import DeliveryStore


class _Engine:
    """Loop factories for delivery tasks."""

    sources = "a task (.yaml) or a Task"

    def factory_for(self, source: Any) -> Any:
        """A `TaskFactory` for a `Task` or a ``.yaml`` path, else None."""
        return factory_for(source)


def _rules() -> tuple[Any, ...]:
    from .checks import DELIVERY_RULES

    return DELIVERY_RULES


def _sample(folder: Path, kind: str = "standard") -> Any:
    """Loops of one small task, in `kind`'s mode (standard or coordinator)."""
    from .factory import TaskFactory

    return TaskFactory({"id": "csv", "mode": kind, "description": "Export as CSV"})


def _duration_of(report: DeliveryReport) -> int | None:
    """A report's ``duration_ms`` (every delivery report may carry it)."""
    return report.duration_ms if isinstance(report, Measured) else None


def _formats() -> Any:
    from .model import format_models

    return format_models()


class _FastSimulator:
    """Runs of a fresh coordinator task on plain data (`crewbook.delivery.fastsim`)."""

    def runner(self, spec: Any, loop: Any, max_acts: int, max_refusals: int) -> Any:
        """`fastsim.fast_runner`: None for a loop other than a fresh coordinator task."""
        from .fastsim import fast_runner

        return fast_runner(spec, loop, max_acts, max_refusals)


FAMILY = LoopFamily(
    name="delivery", kinds=("standard", "coordinator"),
    summary="delivery roles on one task, standard or coordinator mode (SPEC C)",
    engine=_Engine(), codec=DeliveryCodec(), players=DeliveryPlayers(), form=DeliveryForm(),
    rules=_rules,
    store=DeliveryStore(),
    sample=_sample, formats=_formats,
    fast_simulator=_FastSimulator(), duration_of=_duration_of,
)
