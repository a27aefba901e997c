"""Graph model of the autonomous loop (imported by the method that draws): Plan →
Implementation → Recette → Delivery with the failed-recette arrow back to
Implementation; the current phase bold, the passed ones done."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from ..draw.model import Edge, GraphModel, Node, attrs
from .model import PHASES

if TYPE_CHECKING:
    from .engine import AutonomousLoop

__all__ = ["PHASE_LEGEND", "autonomous_graph"]

PHASE_LEGEND: tuple[tuple[str, str], ...] = (
    ("ready", "the current phase"), ("done", "passed"), ("complete", "finished"),
)
_BACK = attrs(color="#c62828", fontcolor="#c62828")
_END = attrs(shape="box", peripheries="2", fillcolor="#c8e6c9", color="#2e7d32")
_CAPPED = attrs(shape="octagon", fillcolor="#ffe0b2", color="#e65100")


def autonomous_graph(loop: AutonomousLoop) -> GraphModel:
    """The autonomous loop's phases (see the module docstring)."""
    s = loop.view
    finished = s.finished_reason is not None
    model = GraphModel(f"autonomous-{s.run}", title=f"autonomous loop {s.run} · step {s.steps}",
                       legend=PHASE_LEGEND)
    index = PHASES.index(s.phase)
    for rank, phase in enumerate(PHASES):
        current = not finished and phase == s.phase
        passed = rank < index or (finished and s.finished_reason == "delivered")
        detail = None
        if phase == "recette":
            detail = f"{s.recettes}/{s.max_recettes or '∞'} runs"
            if s.last_test is not None:
                detail += f", last {'pass' if s.last_test.passed else 'fail'}"
        model.add_node(Node(phase, label=phase, kind="stage", rank=rank, detail=detail,
                            status="ready" if current else ("done" if passed else None),
                            emphasis=current))
    for a, b in itertools.pairwise(PHASES):
        model.add_edge(Edge(a, b, "flow"))
    model.add_edge(Edge("recette", "implementation", "flow", "fail", "dashed", attrs=_BACK))
    if finished:
        reason = str(s.finished_reason)
        model.add_node(Node("end", label=reason.replace("_", " "), kind="gate", rank=len(PHASES),
                            status="complete", emphasis=True,
                            attrs=_END if reason == "delivered" else _CAPPED))
        model.add_edge(Edge("delivery" if reason == "delivered" else "recette", "end", "flow"))
    return model
