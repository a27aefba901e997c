"""The report form's logic: drafts from contracts, reports from drafts, policies."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crewbook.core.examples import example_of
from crewbook.core.form import Draft, GenericForm, field_kind, read_value, show_value
from crewbook.core.loop import Act, Loop, Status, Transition
from crewbook.delivery import Built, Delegate, Judgement, Plan
from crewbook.delivery.form import DeliveryForm
from crewbook.errors import InvalidInputError, LoopRefused
from crewbook.pipeline.form import PipelineForm
from crewbook.widgets.proposals import Scripted, adapter_for, happy_path, propose


def test_each_loop_kind_has_its_family_form(pipeline_loop: Any, coordinator_loop: Any) -> None:
    assert isinstance(adapter_for(pipeline_loop), PipelineForm)
    assert isinstance(adapter_for(coordinator_loop), DeliveryForm)
    assert isinstance(adapter_for(object()), GenericForm)


def test_the_happy_path_finishes_every_loop_well(any_loop: Any) -> None:
    adapter = adapter_for(any_loop)
    for _ in range(30):
        act = any_loop.contract()
        if act.finished:
            break
        any_loop.report(adapter.build(any_loop, act, happy_path(any_loop, act)))
    status = any_loop.status()
    assert status.finished
    assert status.finished_reason in ("done", "pull_request")
    assert status.acts <= 10, "no detours on the happy path"


def test_pipeline_verdict_choices_come_from_the_transitions(pipeline_loop: Any) -> None:
    adapter = PipelineForm()
    for _ in range(4):
        act = pipeline_loop.contract()
        assert adapter.verdicts(pipeline_loop, act) == ()
        pipeline_loop.report(adapter.build(pipeline_loop, act, happy_path(pipeline_loop, act)))
    act = pipeline_loop.contract()
    assert act.stage == "reviewer"
    assert set(adapter.verdicts(pipeline_loop, act)) == {"approved", "changes_requested"}
    draft = happy_path(pipeline_loop, act)
    assert draft.verdict == "approved", "the verdict that moves forward"
    rejected = adapter.build(pipeline_loop, act, Draft(role="reviewer",
                                                       verdict="changes_requested",
                                                       fields=dict(draft.fields)))
    assert rejected["artifacts"]["review_report"]["verdict"] == "changes_requested"
    assert pipeline_loop.report(rejected).stage == "implementer"


def test_pipeline_draft_round_trip(pipeline_loop: Any) -> None:
    act = pipeline_loop.contract()
    report = {"stage": "analyst", "artifacts": {"analysis": {"summary": "s"}},
              "summary": "did it", "duration_ms": 5}
    adapter = PipelineForm()
    draft = adapter.to_draft(pipeline_loop, act, report)
    assert draft.role == "analyst"
    assert draft.fields["duration_ms"] == 5
    assert adapter.build(pipeline_loop, act, draft) == report


def test_delivery_drafts_round_trip(coordinator_loop: Any) -> None:
    adapter = DeliveryForm()
    act = coordinator_loop.contract()
    plan = Plan(("a", "b"), summary="p", duration_ms=60_000)
    draft = adapter.to_draft(coordinator_loop, act, plan)
    assert draft.move == "plan"
    assert draft.fields["criteria"] == ("a", "b")
    assert adapter.build(coordinator_loop, act, draft) == plan
    coordinator_loop.report(plan)
    act = coordinator_loop.contract()
    delegate = Delegate("developer", "build it")
    draft = adapter.to_draft(coordinator_loop, act, delegate)
    assert draft.move == "delegate:developer"
    assert draft.move in draft.moves
    assert adapter.build(coordinator_loop, act, draft) == delegate


def test_delivery_verdicts_are_the_roles(coordinator_loop: Any) -> None:
    adapter = DeliveryForm()
    for report in (Plan(("a",)), Delegate("developer", "x"), Built(("a.py",)),
                   Delegate("qa", "check")):
        coordinator_loop.report(report)
    act = coordinator_loop.contract()
    assert act.role == "qa"
    assert adapter.verdicts(coordinator_loop, act) == ("pass", "fail")
    draft = happy_path(coordinator_loop, act)
    fields = {**draft.fields, "findings": ("no BOM",)}
    failed = adapter.build(coordinator_loop, act, Draft(move="judgement", role="qa",
                                                        verdict="fail", fields=fields))
    assert failed == Judgement("qa", "fail", findings=("no BOM",),
                               duration_ms=draft.fields.get("duration_ms"))


def test_a_bad_delivery_field_is_refused_by_name(coordinator_loop: Any) -> None:
    act = coordinator_loop.contract()
    with pytest.raises(LoopRefused, match="no key 'criterio'") as refused:
        DeliveryForm().build(coordinator_loop, act,
                                Draft(move="plan", fields={"criterio": ("a",)}))
    assert refused.value.code == "bad_report"


def test_scripted_follows_the_acts_then_the_happy_path(coordinator_loop: Any) -> None:
    script = Scripted([Plan(("only this",))])
    act = coordinator_loop.contract()
    assert propose(coordinator_loop, act, script).fields["criteria"] == ("only this",)
    coordinator_loop.report(Plan(("only this",)))
    act = coordinator_loop.contract()
    assert propose(coordinator_loop, act, script).move == "delegate:developer"
    assert repr(script) == "<Scripted 1 reports>"


class Counter(Loop[int, dict[str, Any]]):
    """A loop of another kind: the generic adapter's mapping reaches it unchanged."""

    kind = "counter"

    def contract(self) -> Act:
        return Act(self.kind, self.acts + 1, "counter", moves=("add", "stop"),
                   finished=self._state >= 3, details={"verdicts": ["ok", "ko"]})

    def status(self) -> Status:
        return Status(self.kind, self.acts, "counter", None, self._state >= 3, None)

    def transition(self, state: int, report: dict[str, Any]) -> Transition[int]:
        if report.get("move") != "add":
            raise LoopRefused(f"unknown move {report.get('move')!r}", code="bad_report")
        return Transition(state + int(report.get("by", 1)), [{"kind": "report", **report}])


def test_generic_adapter_hands_the_mapping_over() -> None:
    loop = Counter(0)
    act = loop.contract()
    adapter = adapter_for(loop)
    draft = adapter.propose(loop, act)
    assert (draft.move, draft.role, draft.verdict) == ("add", "counter", "ok")
    report = adapter.build(loop, act, draft.with_fields(by=2))
    assert report == {"move": "add", "role": "counter", "verdict": "ok", "by": 2}
    loop.report(report)
    assert loop.state == 2
    assert adapter.to_draft(loop, act, report).fields == {"by": 2}


def test_example_of_validates_against_its_schema() -> None:
    from jsonschema import Draft202012Validator

    schema = {"type": "object", "required": ["a", "b", "c", "d"], "properties": {
        "a": {"type": "string", "minLength": 12}, "b": {"type": "array", "minItems": 2,
                                                        "items": {"type": "integer"}},
        "c": {"enum": ["x", "y"]}, "d": {"type": ["null", "number"], "minimum": 3}}}
    instance = example_of(schema)
    assert Draft202012Validator(schema).is_valid(instance)
    assert instance["d"] == 3.0


@given(st.one_of(
    st.text(), st.booleans(), st.integers(), st.none(),
    st.lists(st.text(alphabet="abc xyz", min_size=1).map(str.strip).filter(bool)).map(tuple),
    st.dictionaries(st.text(max_size=5), st.integers(), min_size=1),
))
def test_show_then_read_gives_the_value_back(value: Any) -> None:
    kind = field_kind(value)
    assert read_value("f", kind, show_value(value)) == value


@pytest.mark.parametrize("value", [2**53 + 1, -(2**63) - 1, 10**30])
def test_big_integers_read_back_exactly(value: int) -> None:
    assert read_value("f", "number", show_value(value)) == value


def test_read_value_names_the_field() -> None:
    with pytest.raises(InvalidInputError, match="field 'duration_ms': 'soon' is not a number"):
        read_value("duration_ms", "number", "soon")
    with pytest.raises(InvalidInputError, match="field 'artifacts' is not JSON data"):
        read_value("artifacts", "json", "{")
