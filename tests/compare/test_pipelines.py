"""diff_pipelines on hand-made pairs: the seed against itself and against edited copies."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from crewbook.compare import diff_pipelines
from crewbook.pipeline import load_pipeline

PIPELINES = Path(__file__).parent.parent / "data" / "pipelines"
SEED = PIPELINES / "role_pipeline.toml"


Edit = Callable[..., Path]


@pytest.fixture
def edit(tmp_path: Path) -> Edit:
    """`edit(old, new, ...)`: a copy of the seed folder with text replaced in the pipeline."""
    folder = tmp_path / "pipes"
    shutil.copytree(PIPELINES, folder, ignore=shutil.ignore_patterns("broken", "workspace"))

    def make(*pairs: tuple[str, str], name: str = "edited.toml") -> Path:
        text = SEED.read_text("utf-8")
        for old, new in pairs:
            assert old in text, old
            text = text.replace(old, new)
        target = folder / name
        target.write_text(text, encoding="utf-8")
        return target

    return make


def test_identical_pipelines_give_an_empty_diff() -> None:
    d = diff_pipelines(SEED, load_pipeline(SEED))
    assert d.empty
    assert d.text() == "pipeline role_pipeline (a) → role_pipeline (b): no differences"
    assert {n.status for n in d.graph_model().nodes.values()} == {None}


def test_retries_budget_needs_and_produces(edit: Edit) -> None:
    changed = edit(
        ('max_retries = 3', 'max_retries = 5'),
        ('needs = ["patch", "impl_plan", "analysis"]', 'needs = ["patch", "impl_plan"]'),
        ('token_budget = 32768\nmax_retries = 5', 'token_budget = 65536\nmax_retries = 5'),
    )
    d = diff_pipelines(SEED, changed)
    got = {(e.section, e.item, e.field): (e.before, e.after) for e in d.entries}
    assert got[("stage", "implementer", "max_retries")] == (3, 5)
    assert got[("stage", "implementer", "token_budget")] == (32768, 65536)
    assert got[("stage", "reviewer", "needs")] == (("patch", "impl_plan", "analysis"),
                                                   ("patch", "impl_plan"))
    assert d.graph_model().nodes["implementer"].status == "changed"


def test_conditions_and_transitions(edit: Edit) -> None:
    changed = edit(('condition_value = "approved"\ncondition_operator = "eq"',
                    'condition_value = "lgtm"\ncondition_operator = "eq"'))
    d = diff_pipelines(SEED, changed)
    got = {(e.section, e.item, e.field): (e.before, e.after) for e in d.entries}
    assert got[("transition", "review-approved", "condition")] == (
        "verdict == approved", "verdict == lgtm")
    assert got[("transition", "review-approved", "condition_value")] == ("approved", "lgtm")
    edge = next(e for e in d.graph_model().edges if (e.source, e.target) == ("reviewer", "done"))
    assert edge.kind == "changed"
    assert "was: verdict == approved" in edge.label


def test_stage_rename_and_added_stage(edit: Edit) -> None:
    renamed = edit(('id = "planner"', 'id = "plan_writer"'),
                   ('from = "planner"', 'from = "plan_writer"'),
                   ('to = "planner"', 'to = "plan_writer"'))
    d = diff_pipelines(SEED, renamed)
    assert [(e.section, e.change, e.item, e.before) for e in d.entries] == [
        ("stage", "renamed", "plan_writer", "planner")]
    model = d.graph_model()
    assert "renamed from planner" in (model.nodes["plan_writer"].badge or "")
    assert "planner" not in model.nodes


def test_removed_stage_and_start(edit: Edit) -> None:
    text = SEED.read_text("utf-8")
    start = text.index('# 1. Understand')
    end = text.index('# 2. Decide')
    cut = edit((text[start:end], ""), ('start = "analyst"', 'start = "architect"'),
               ('needs = ["analysis"]\n', ''),
               ('needs = ["patch", "impl_plan", "analysis"]', 'needs = ["patch", "impl_plan"]'))
    text2 = cut.read_text("utf-8")
    t0 = text2.index('[[transitions]]\nid = "analyst-to-architect"')
    t1 = text2.index('[[transitions]]\nid = "architect-to-planner"')
    cut.write_text(text2[:t0] + text2[t1:], encoding="utf-8")
    d = diff_pipelines(SEED, cut)
    got = {(e.section, e.change, e.item, e.field) for e in d.entries}
    assert ("stage", "removed", "analyst", None) in got
    assert ("transition", "removed", "analyst-to-architect", None) in got
    assert ("pipeline", "changed", "pipeline", "start") in got
    assert ("kind", "changed", "analysis", None) not in got
    model = d.graph_model()
    assert model.nodes["analyst"].status == "removed"
    assert any(e.kind == "removed" and e.source == "analyst" for e in model.edges)


def test_symmetry(edit: Edit) -> None:
    changed = edit(('max_retries = 3', 'max_retries = 4'))
    forward, backward = diff_pipelines(SEED, changed), diff_pipelines(changed, SEED)
    assert [(e.item, e.before, e.after) for e in forward.entries] == \
        [(e.item, e.after, e.before) for e in backward.entries]
