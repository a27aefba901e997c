"""The coordinator's rules on plain values (`crewbook.delivery.rules`), which the engine
and the plain-data simulator both ask: each rule's answers, in the engine's order."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from crewbook.delivery.rules import (
    DELEGATION_CODES,
    budget_refusal,
    caps_reached,
    delegation_refusal,
    gate_codes,
    outcome_of,
    result_refusal,
    sends_back,
)

OPEN: dict[str, Any] = {"known": True, "is_self": False, "planned": True, "anytime": False,
                        "has_instructions": True, "launches": 0, "limit": None,
                        "reviewer": False, "qa_passed": False}


def test_the_global_caps_in_either_unit_of_time() -> None:
    assert caps_reached(60, 60, 0, None)  # the steps cap
    assert not caps_reached(59, 60, 0, None)
    assert not caps_reached(0, None, 10**9, None)  # no limit at all
    assert caps_reached(0, None, 240 * 60_000, 240 * 60_000)  # milliseconds
    assert not caps_reached(0, None, 240 * 60_000 - 1, 240 * 60_000)
    hours = timedelta(hours=4)
    assert caps_reached(0, None, hours, hours)  # timedeltas
    assert not caps_reached(0, None, hours - timedelta(microseconds=1), hours)
    assert not caps_reached(0, 5, timedelta(0), hours)  # not started yet


def test_the_gates_in_order() -> None:
    assert gate_codes("pass", False, None) == []
    assert gate_codes("pass", True, "approved") == []
    assert gate_codes(None, False, None) == ["version_not_verified"]
    assert gate_codes("fail", True, "changes") == ["version_not_verified", "review_required"]
    assert gate_codes("pass", True, None) == ["review_required"]


def test_a_delegation_is_refused_for_the_first_rule_it_breaks() -> None:
    assert delegation_refusal(**OPEN) is None
    assert delegation_refusal(**{**OPEN, "known": False, "planned": False}) == "unknown_role"
    assert delegation_refusal(**{**OPEN, "is_self": True}) == "self"
    assert delegation_refusal(**{**OPEN, "planned": False, "has_instructions": False}) \
        == "plan_first"
    assert delegation_refusal(**{**OPEN, "planned": False, "anytime": True}) is None
    assert delegation_refusal(**{**OPEN, "has_instructions": False, "launches": 9,
                                 "limit": 1}) == "no_instructions"
    assert delegation_refusal(**{**OPEN, "launches": 2, "limit": 2}) == "launch_cap"
    assert delegation_refusal(**{**OPEN, "launches": 1, "limit": 2}) is None
    assert delegation_refusal(**{**OPEN, "reviewer": True}) == "qa_first"
    assert delegation_refusal(**{**OPEN, "reviewer": True, "qa_passed": True}) is None
    assert DELEGATION_CODES["launch_cap"] == "cap_reached"
    assert DELEGATION_CODES["qa_first"] == "qa_first"
    assert DELEGATION_CODES["plan_first"] == "bad_move"


def test_sending_back_budgets_results_and_outcomes() -> None:
    assert sends_back("developer", "fail", True)
    assert sends_back("developer", "changes", True)
    assert not sends_back("developer", "fail", False)  # an older version's verdict
    assert not sends_back("developer", "pass", True)
    assert not sends_back("qa", "fail", True)
    assert not sends_back("developer", None, False)
    assert budget_refusal(None, None) is None
    assert budget_refusal(None, 5) == "missing"
    assert budget_refusal(6, 5) == "over"
    assert budget_refusal(5, 5) is None
    assert result_refusal("qa") == "Judgement"
    assert result_refusal("reviewer") == "Judgement"
    assert result_refusal("developer") == "Built"
    assert result_refusal("explorer") is None
    assert outcome_of(0) == "already_done"
    assert outcome_of(3) == "pull_request"
