"""Drawings and frames of a task's path, the ledger on file, the public names."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import crewbook.delivery as delivery
from crewbook.delivery import (
    Built,
    CoordinatorLoop,
    Delegate,
    Finalise,
    Judgement,
    ManualClock,
    Plan,
    StandardLoop,
)
from crewbook.ledger import Ledger, read_ledger, run_outcomes, validate_ledger

from .conftest import build_v1, make_task, step, verified

Make = Callable[..., CoordinatorLoop]


def test_path_graph_shows_who_acted_and_the_holder(coordinator: Make) -> None:
    loop = step(coordinator(), [*build_v1(), Delegate("qa", "verify"),
                                Judgement("qa", "fail", findings=("no header",)),
                                Delegate("developer", "add the header")])
    model = loop.graph_model()
    now = model.nodes["now"]
    assert now.emphasis
    assert now.label == "developer"
    assert now.status == "ready"
    assert model.nodes["act-5"].status == "error"
    sent = [e for e in model.edges if e.label.startswith("sent back")]
    assert len(sent) == 1
    assert sent[0].target == "now"
    assert sent[0].style == "dashed"
    assert '"now"' in loop.dot()
    assert "sent back" in loop.mermaid()


def test_path_graph_marks_the_version_qa_passed(coordinator: Make) -> None:
    loop = step(coordinator(), verified())
    loop.report(Finalise())
    model = loop.graph_model()
    qa = next(n for n in model.nodes.values() if n.label == "qa")
    assert qa.status == "complete"
    assert "qa pass v1 (ships)" in (qa.badge or "")
    assert model.nodes["outcome"].emphasis
    assert model.nodes["outcome"].label == "pull request"
    assert "now" not in model.nodes
    assert not model.dangling_ends()


def test_path_frame(coordinator: Make) -> None:
    frame = step(coordinator(), verified()).path_frame()
    assert list(frame["move"].astype(str)) == ["plan", "delegate", "built", "delegate",
                                               "judgement", "delegate", "judgement"]
    assert str(frame["at"].dtype) == "datetime64[ns, UTC]"
    assert str(frame["version"].dtype) == "Int64"


def test_file_ledger_holds_valid_events(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    with Ledger(path, run="coordinated") as ledger:
        loop = CoordinatorLoop(make_task(), ledger=ledger, clock=ManualClock())
        step(loop, verified())
        snap = loop.snapshot()
        loop.report(Finalise())
        loop.restore(snap)
        loop.report(Finalise())
    with Ledger(path, run="standard") as ledger:
        std = StandardLoop(make_task(), ledger=ledger, clock=ManualClock())
        step(std, [Plan(("x",)), Built(("a.py",)), Judgement("qa", "pass"),
                   Judgement("reviewer", "approved")])
    assert list(validate_ledger(path)) == []
    frame = read_ledger(path)
    outcomes = run_outcomes(frame)
    assert set(outcomes["finished_reason"].astype(str)) == {"pull_request"}
    assert set(outcomes["loop"].astype(str)) == {"coordinator", "standard"}


def test_public_names_and_light_import() -> None:
    for name in delivery.__all__:
        assert hasattr(delivery, name), name
    code = ("import sys, crewbook.delivery; "
            "print([m for m in ('pandas', 'graphviz', 'matplotlib', 'ipywidgets') "
            "if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_format_models_have_schemas() -> None:
    models = delivery.format_models()
    assert set(models) == {"delivery-roles.json", "delivery-overrides.json",
                           "delivery-task.json", "delivery-review-policy.json"}
    for model in models.values():
        assert model.model_json_schema()["type"] == "object"
