"""The graph model of a delivery task's path: who acted, verdicts per version, send-backs,
the current holder highlighted.

One node per act that produced something (the plan, each agent's report, answers,
revisions, expiries, the end); delegations and launches are the arrows between them,
labelled with the role handed the work (``→ qa``), dashed and marked ``sent back`` when
they carry a failed check back to the developer. A verdict that counts for the version
now on the branch is green (``complete``), a failed check or an expiry red, a verdict
on an older version grey (it no longer counts: C4.2). The holder of the task, the
coordinator or the agent at work with its deadline, is the last node, bold; once the
task has ended, its outcome (pull request, already done, failed) is.

Imported only by the methods that draw.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..draw.model import Edge, GraphModel, Node, attrs
from .model import ARCHITECT, JUDGES

if TYPE_CHECKING:
    from .engine import DeliveryLoop
    from .state import Step

PATH_LEGEND: tuple[tuple[str, str], ...] = (
    ("done", "acted"), ("complete", "verdict on the version that ships"),
    ("skipped", "verdict on an older version"), ("error", "failed check or expired wait"),
    ("ready", "holds the task now"),
)
_OUTCOME = {
    "pull_request": attrs(shape="box", peripheries="2", fillcolor="#c8e6c9", color="#2e7d32"),
    "already_done": attrs(shape="box", peripheries="2", fillcolor="#c8e6c9", color="#2e7d32"),
    "failed": attrs(shape="octagon", fillcolor="#ffcdd2", color="#c62828"),
}
_SENT_BACK = attrs(color="#c62828", fontcolor="#c62828")


def _status(step: Step, version: int) -> str:
    if step.move == "judgement":
        if step.verdict in ("fail", "changes"):
            return "error"
        return "complete" if step.version == version else "skipped"
    if step.move == "expire":
        return "error"
    if step.move == "question":
        return "blocked"
    return "done"


def _detail(step: Step) -> str:
    if step.move == "built":
        return step.summary if step.summary.startswith(("version", "no change")) \
            else f"v{step.version}: {step.summary}"
    if step.move == "judgement":
        return f"{step.verdict} on v{step.version}"
    if step.move == "expire":
        return f"wait for {step.target} expired"
    if step.move == "answer":
        return f"answer to {step.target}: {step.summary}"
    text = step.summary
    return text if len(text) <= 60 else text[:57] + "…"


def path_graph(loop: DeliveryLoop) -> GraphModel:
    """The path `loop`'s task has taken so far (see the module docstring)."""
    s = loop.view
    task = loop.task
    title = f"{loop.mode} task {task.id} · act {loop.acts}"
    if s.outcome is not None:
        title += f" · {s.outcome.kind.replace('_', ' ')}"
    model = GraphModel(f"task-{task.id}", title=title, legend=PATH_LEGEND)
    text = task.description if len(task.description) <= 60 else task.description[:57] + "…"
    model.add_node(Node("start", label="task", kind="note", rank=0, detail=text,
                        badge=f"{loop.mode} mode · review {task.policy.policy}"))
    last = "start"
    pending: Step | None = None  # the delegation or launch waiting for its arrow
    rank = 0
    for step in s.trail:
        if step.move == "delegate":
            pending = step
            continue
        rank += 1
        node_id = f"act-{step.act}"
        if step.move in ("finalise", "fail"):
            continue  # drawn as the outcome below
        who = "coordinator" if step.actor == ARCHITECT and loop.mode == "coordinator" \
            and step.move != "plan" else step.actor
        badges = []
        if step.move == "judgement" and step.verdict == JUDGES.get(step.actor, ("",))[0]:
            badges.append(f"{step.actor} {step.verdict} v{step.version}"
                          + (" (ships)" if step.version == s.version else " (superseded)"))
        model.add_node(Node(node_id, label=who, kind="role" if step.actor != ARCHITECT
                            else "stage", status=_status(step, s.version), rank=rank,
                            detail=_detail(step), badge="\n".join(badges) or None,
                            tooltip=f"act {step.act} at {step.at:%H:%M}: {step.summary}"))
        _arrow(model, last, node_id, pending)
        pending = None
        last = node_id
    rank += 1
    if s.outcome is not None:
        o = s.outcome
        label = {"pull_request": "pull request", "already_done": "already done",
                 "failed": "failed"}[o.kind]
        detail = o.pr_line or o.reason
        model.add_node(Node("outcome", label=label, kind="gate", rank=rank, emphasis=True,
                            detail=detail if len(detail) <= 70 else detail[:67] + "…",
                            attrs=_OUTCOME[o.kind]))
        _arrow(model, last, "outcome", pending)
        return model
    w = s.wait if s.wait is not None and s.holder == s.wait.role else None
    if w is not None:
        node = Node("now", label=w.role, kind="role", status="ready", emphasis=True, rank=rank,
                    detail=f"at work on v{w.version}", badge=f"deadline {w.deadline:%H:%M}")
    else:
        todo = "answer the question" if s.question else "decide the next move"
        node = Node("now", label="coordinator" if loop.mode == "coordinator" else "platform",
                    kind="stage", status="ready", emphasis=True, rank=rank, detail=todo,
                    badge=f"v{s.version} on the branch")
    model.add_node(node)
    _arrow(model, last, "now", pending)
    return model


def _arrow(model: GraphModel, source: str, target: str, via: Step | None) -> None:
    if via is None:
        model.add_edge(Edge(source, target, "flow"))
    elif via.sent_back:
        model.add_edge(Edge(source, target, "flow", f"sent back → {via.target}", "dashed",
                            attrs=_SENT_BACK))
    else:
        verb = "launch" if via.actor == "platform" else "delegate"
        model.add_edge(Edge(source, target, "flow", f"{verb} → {via.target}"))
