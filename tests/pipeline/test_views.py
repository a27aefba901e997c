"""Frames, drawings and displays of a pipeline and of a run on it."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from crewbook.draw import dot_available
from crewbook.pipeline import Pipeline, PipelineLoop

from .conftest import APPROVE, IMPLEMENT, REJECT, TO_IMPLEMENTER


def test_stage_frame(seed: Pipeline) -> None:
    st = seed.frames().stages
    assert list(st.columns) == ["id", "order", "prompt", "needs", "produces", "kinds",
                                "allowed_tools", "can_write", "ground_references",
                                "token_budget", "max_retries", "writes", "reachable",
                                "loop_target", "unreceived"]
    assert str(st["token_budget"].dtype) == "Int64"
    assert st["can_write"].dtype == bool
    row = st.set_index("id").loc["implementer"]
    assert row["can_write"]
    assert row["loop_target"]
    assert row["max_retries"] == 3
    assert row["produces"] == ["patch"]
    assert row["kinds"] == ["file_written"]
    assert st.set_index("id").loc["reviewer", "unreceived"] == ["design"]
    assert list(st[st.can_write].id) == ["implementer"]


def test_transition_and_kind_frames(seed: Pipeline) -> None:
    tr = seed.frames().transitions
    assert list(tr["condition"]) == ["analysis ✓", "design ✓", "impl_plan ✓", "patch ✓",
                                     "verdict == approved", "verdict != approved"]
    assert list(tr["loop"]) == [False] * 5 + [True]
    assert str(tr["from"].dtype) == "category"
    assert list(tr["to"].cat.categories)[-1] == "done"
    kinds = seed.frames().kinds
    assert list(kinds["id"]) == ["file_written", "analysis", "design", "impl_plan",
                                 "review_report"]
    assert list(kinds["schema_path"].fillna("-")) == [
        "-", "schemas/analysis.json", "schemas/design.json", "schemas/impl_plan.json",
        "schemas/review_report.json"]
    assert kinds.set_index("id").loc["review_report", "used_by"] == ["reviewer"]


def test_state_diagram(seed: Pipeline) -> None:
    model = seed.graph_model()
    assert set(model.nodes) == {"analyst", "architect", "planner", "implementer", "reviewer",
                                "done", "escalated"}
    labels = {(e.source, e.target): e for e in model.edges}
    loop_edge = labels[("reviewer", "implementer")]
    assert loop_edge.style == "dashed"
    assert "≤ 3 rounds" in loop_edge.label
    assert labels[("reviewer", "escalated")].label == "> 3 rounds"
    assert labels[("reviewer", "done")].label == "verdict == approved"
    dot = seed.dot()
    assert dot == seed.dot()
    assert '"reviewer" -> "implementer"' in dot
    assert "flowchart" in seed.mermaid()


def test_run_on_the_diagram(loop: PipelineLoop) -> None:
    for report in [*TO_IMPLEMENTER, IMPLEMENT, REJECT]:
        loop.report(report)
    model = loop.graph_model()
    assert model.nodes["implementer"].status == "ready"
    assert model.nodes["implementer"].emphasis
    assert "attempt 2" in (model.nodes["implementer"].badge or "")
    assert "previous" in (model.nodes["reviewer"].badge or "")
    assert model.nodes["analyst"].status == "done"
    edge = next(e for e in model.edges if (e.source, e.target) == ("reviewer", "implementer"))
    assert "sent back 1/3" in edge.label
    assert edge.style == "bold"
    loop.report(IMPLEMENT)
    loop.report(APPROVE)
    model = loop.graph_model()
    assert model.nodes["done"].emphasis
    assert not model.nodes["escalated"].emphasis
    assert "act 7 · done" in model.title
    assert loop.dot().startswith('digraph "role_pipeline"')
    assert "flowchart" in loop.mermaid()


def test_escalation_from_a_failing_stage_is_drawn(loop: PipelineLoop) -> None:
    for _ in range(3):
        loop.report(stage="analyst", artifacts={})
    model = loop.graph_model()
    assert model.nodes["escalated"].emphasis
    assert any((e.source, e.target, e.label) == ("analyst", "escalated", "escalated")
               for e in model.edges)


def test_flow_view(seed: Pipeline, loop: PipelineLoop) -> None:
    model = seed.flow_model()
    edges = {(e.source, e.target, e.label) for e in model.edges}
    assert ("analyst", "artifact:analysis", "produces") in edges
    assert ("artifact:analysis", "reviewer", "needs") in edges
    assert model.nodes["artifact:patch"].detail == "kind file_written"
    loop.report(TO_IMPLEMENTER[0])
    run = loop.flow_model()
    assert run.nodes["artifact:analysis"].status == "done"
    assert run.nodes["artifact:analysis"].badge == "v1"


def test_displays(seed: Pipeline, loop: PipelineLoop) -> None:
    assert repr(seed).startswith("<Pipeline role_pipeline: 5 stages, 6 transitions")
    assert "<table>" in seed._repr_html_()
    bundle: Any = seed._repr_mimebundle_()
    assert "text/html" in bundle
    assert bundle["text/plain"] == repr(seed)
    assert "analyst" in loop._repr_html_()
    assert repr(loop).startswith("<PipelineLoop <Status pipeline at analyst")


@pytest.mark.skipif(not dot_available(), reason="needs the graphviz 'dot' program")
def test_rendering(seed: Pipeline, loop: PipelineLoop) -> None:
    assert "<svg" in seed.svg()
    assert type(loop.graph()).__name__ == "Drawing"


def test_import_is_light() -> None:
    import subprocess

    code = ("import sys, crewbook.pipeline; "
            "print(sorted(m for m in ('pandas', 'graphviz', 'jsonschema', 'matplotlib', "
            "'IPython', 'pyarrow', 'ipywidgets') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
