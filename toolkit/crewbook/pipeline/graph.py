"""Graph models of a pipeline: the state diagram and the artifact flow, with a run on them.

State diagram: stages as boxes in the order a run meets them (detail: what the stage
produces; badge: its retry cap and whether it writes), transitions as arrows labelled
with their condition (``analysis ✓``, ``verdict != approved``), the loop edges dashed
with their round cap, ``done`` and ``escalated`` as terminal nodes (the loop's source
stage has a dotted arrow to ``escalated``: what happens past the cap). With a run:
visited stages green, the current one blue and bold with its attempt, the previous
one marked ``previous``, the transition just taken bold, rounds counted on the loop
edge (``sent back 1/3``), the terminal reached bold.

Artifact flow: stages and artifacts (detail: the kind); ``produces`` arrows from a
stage to its artifacts, ``needs`` arrows from an artifact to the stages that consume
it. With a run: artifacts that exist green with their version.

Imported only by the methods that draw.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..draw.model import Edge, EdgeStyle, GraphModel, Node, attrs
from .checks import can_write
from .model import DONE, ESCALATED
from .plan import effective_retries

if TYPE_CHECKING:
    from .engine import PipelineLoop
    from .pipeline import Pipeline

RUN_LEGEND: tuple[tuple[str, str], ...] = (
    ("ready", "current stage"), ("done", "visited"), ("error", "escalated"),
)
_TERMINAL = {
    DONE: attrs(shape="doublecircle", fillcolor="#c8e6c9", color="#2e7d32"),
    ESCALATED: attrs(shape="octagon", fillcolor="#ffcdd2", color="#c62828"),
}


def state_graph(pipeline: Pipeline, run: PipelineLoop | None = None) -> GraphModel:
    """The state diagram of `pipeline`; with `run`, where that run stands."""
    topo = pipeline.topology
    state = run.view if run is not None else None
    rank = topo.rank()
    last = max(rank.values(), default=0) + 1
    title = f"pipeline {pipeline.id}"
    if state is not None:
        where = state.finished_reason or state.stage
        title += f" · act {run.acts if run else 0} · {where}"
    model = GraphModel(pipeline.id, title=title, legend=RUN_LEGEND if state else ())
    visited = set(state.path) if state is not None else set()
    for stage_id in topo.order:
        stage = topo.stages[stage_id]
        badges = [f"retries ≤ {effective_retries(stage)}"]
        if can_write(stage.allowed_tools):
            badges.append("writes" + (f": {', '.join(stage.writes)}" if stage.writes else ""))
        status = None
        emphasis = False
        if state is not None:
            if stage_id == state.stage:
                status, emphasis = "ready", True
                attempt = state.attempts.get(stage_id, 0) + 1
                badges.append(f"attempt {attempt}")
            elif stage_id in visited:
                status = "done"
            if stage_id == state.previous:
                badges.append("previous")
        model.add_node(Node(
            stage_id, kind="stage", status=status, emphasis=emphasis, rank=rank[stage_id],
            detail=", ".join(p.name for p in stage.produces) or None,
            badge="\n".join(badges), tooltip=stage.prompt))
    for terminal in (DONE, ESCALATED):
        reached = state is not None and state.finished_reason == terminal
        model.add_node(Node(terminal, kind="gate", rank=last, emphasis=reached,
                            attrs=_TERMINAL[terminal]))
    for t in pipeline.model.transitions:
        if t.from_ not in topo.stages or (t.to not in topo.stages and t.to != DONE):
            continue
        label = t.describe()
        style: EdgeStyle = "solid"
        kind = "flow"
        if topo.is_loop(t):
            cap = topo.stages[t.to].max_retries
            style = "dashed"
            used = state.rounds.get(t.to, 0) if state is not None else None
            if used is not None:
                label += f"\nsent back {used}/{'∞' if cap is None else cap}"
            else:
                label += f"\n≤ {cap} rounds" if cap is not None else "\nno cap"
            if cap is not None:
                model.add_edge(Edge(t.from_, ESCALATED, "requires",
                                    f"> {cap} rounds", "dotted"))
        taken = state is not None and state.last_transition == t.id
        model.add_edge(Edge(t.from_, t.to, kind, label, "bold" if taken else style))
    if state is not None and state.finished_reason == ESCALATED and state.previous:
        loops_out = {t.from_ for t in topo.loops()}
        if state.previous not in loops_out:
            model.add_edge(Edge(state.previous, ESCALATED, "cycle", "escalated", "bold"))
    return model


def flow_graph(pipeline: Pipeline, run: PipelineLoop | None = None) -> GraphModel:
    """Which stage produces and needs which artifact; with `run`, the versions so far."""
    topo = pipeline.topology
    state = run.view if run is not None else None
    rank = topo.rank()
    model = GraphModel(f"{pipeline.id}-flow", title=f"artifact flow · pipeline {pipeline.id}")
    kinds = {p.name: p.kind for s in topo.stages.values() for p in s.produces}
    needed = {n for s in topo.stages.values() for n in s.needs}
    for stage_id in topo.order:
        status = None
        if state is not None:
            status = "ready" if stage_id == state.stage else (
                "done" if stage_id in state.path else None)
        model.add_node(Node(stage_id, kind="stage", status=status, rank=2 * rank[stage_id]))
    for name in sorted(set(kinds) | needed):
        version = state.versions.get(name) if state is not None else None
        owner = topo.producers.get(name, [])
        node_rank = 2 * min((rank[o] for o in owner), default=0) + 1
        model.add_node(Node(
            f"artifact:{name}", label=name, kind="artifact" if name in kinds else "missing",
            status="done" if version else None, rank=node_rank,
            detail=f"kind {kinds[name]}" if name in kinds else "produced by no stage",
            badge=f"v{version}" if version else None))
    for stage_id, stage in topo.stages.items():
        for produce in stage.produces:
            model.add_edge(Edge(stage_id, f"artifact:{produce.name}", "flow", "produces"))
        for need in stage.needs:
            kind = "requires" if need in kinds else "dangling"
            model.add_edge(Edge(f"artifact:{need}", stage_id, kind, "needs"))
    return model

