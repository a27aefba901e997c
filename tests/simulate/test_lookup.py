"""Artifacts made from JSON Schemas, and the lookup of a loop's codec and players."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from crewbook.core.examples import example_of
from crewbook.core.loop import Act, Loop, Status, Transition
from crewbook.errors import LoopRefused, SimulationError
from crewbook.pipeline import load_pipeline
from crewbook.pipeline.codec import templates
from crewbook.simulate import ScriptedPolicy, simulate
from crewbook.simulate.lookup import Fallback, codec_of, players_of

from .conftest import PIPELINE

SCHEMAS: list[dict[str, Any]] = [
    {"type": "object", "required": ["a", "b", "c"], "properties": {
        "a": {"type": "string", "minLength": 20},
        "b": {"type": "array", "minItems": 2, "items": {"type": "integer", "minimum": 3}},
        "c": {"enum": ["x", "y"]}}},
    {"type": ["null", "boolean"]},
    {"anyOf": [{"type": "number", "minimum": 1.5}, {"type": "string"}]},
    {"allOf": [{"type": "object", "required": ["a"], "properties": {"a": {"const": 1}}},
               {"type": "object", "required": ["b"], "properties": {"b": {"default": "d"}}}]},
]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_examples_validate(schema: dict[str, Any]) -> None:
    assert Draft202012Validator(schema).is_valid(example_of(schema))


def test_the_seed_pipeline_gets_a_valid_artifact_per_stage() -> None:
    pipeline = load_pipeline(PIPELINE)
    made = templates(pipeline)
    assert set(made) == set(pipeline.topology.order)
    for stage, artifacts in made.items():
        plan = pipeline.plans[stage]
        for name, content in artifacts.items():
            assert plan.kinds[name].is_valid(content), (stage, name)
    assert made["implementer"] == {}  # file_written: reported through writes
    assert templates(pipeline) is made  # cached


class Counter(Loop[int, int]):
    """A loop no family describes: counts to 3."""

    kind = "counter"
    copy_state = False

    def contract(self) -> Act:
        return Act(self.kind, self.acts + 1, "counter", finished=self._state >= 3,
                   finished_reason="three" if self._state >= 3 else None)

    def status(self) -> Status:
        return Status(self.kind, self.acts, None, None, self._state >= 3, None)

    def transition(self, state: int, report: int) -> Transition[int]:
        if report != 1:
            raise LoopRefused("count by one", code="bad_step")
        return Transition(state + 1, [{"kind": "report", "summary": "one more"}])


def test_any_loop_runs_with_report_objects() -> None:
    assert type(codec_of(Counter(0))) is Fallback
    assert type(players_of(Counter(0))) is Fallback
    frame = simulate(lambda: Counter(0), ScriptedPolicy([1, 2, 1, 1]), n=2, seed=0)
    assert list(frame["finished_reason"].astype(str)) == ["three", "three"]
    assert list(frame["refused.bad_step"]) == [1, 1]
    with pytest.raises(SimulationError, match="no random player for counter"):
        simulate(lambda: Counter(0), {}, n=1)
    with pytest.raises(SimulationError, match="cannot be read by a counter loop"):
        simulate(lambda: Counter(0), ScriptedPolicy([{"count": 1}]), n=1)
