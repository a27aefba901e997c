"""Cost estimates from the price table: priced and marked, or null with the reason,
never a silent 0; the price is the table's at the event's time."""

from __future__ import annotations

import builtins
from datetime import UTC, datetime
from typing import Any

import pytest
from genai_prices import Usage, calc_price

from crewbook.ledger.events import LedgerEvent
from crewbook.ledger.prices import ESTIMATE_KEY, estimate_costs

WHEN = datetime(2025, 6, 1, tzinfo=UTC)


def _event(seq: int = 1, ts: datetime | None = WHEN, **fields: Any) -> LedgerEvent:
    payload = fields.pop("payload", {})
    return LedgerEvent.model_validate({"ts": ts, "run": "r", "seq": seq, "loop": "x",
                                       "kind": "report", "role": "assistant",
                                       "payload": payload, **fields})


def test_an_event_with_tokens_and_a_model_gets_the_tables_price_marked() -> None:
    event = _event(tokens_in=5000, tokens_out=300, payload={
        "model": "claude-sonnet-4-20250514", "provider": "anthropic",
        "cache_read_tokens": 1000, "cache_write_tokens": 2000})
    (priced,) = estimate_costs([event])
    expected = calc_price(Usage(input_tokens=5000, output_tokens=300, cache_read_tokens=1000,
                                cache_write_tokens=2000),
                          model_ref="claude-sonnet-4-20250514", provider_id="anthropic",
                          genai_request_timestamp=WHEN).total_price
    assert priced.cost == pytest.approx(float(expected))
    assert priced.payload[ESTIMATE_KEY]["by"].startswith("genai-prices 0.2.")
    assert priced.payload[ESTIMATE_KEY]["provider"] == "anthropic"


@pytest.mark.parametrize(("payload", "ts", "reason"), [
    ({}, WHEN, "names no model"),
    ({"model": "no-such-model-xyz"}, WHEN, "cannot price 'no-such-model-xyz'"),
    ({"model": "gpt-4o"}, None, "no time"),
])
def test_what_cannot_be_priced_stays_null_with_the_reason(
        payload: dict[str, Any], ts: datetime | None, reason: str) -> None:
    (event,) = estimate_costs([_event(ts=ts, tokens_in=10, payload=payload)])
    assert event.cost is None
    assert event.payload[ESTIMATE_KEY]["status"] == "unpriced"
    assert reason in event.payload[ESTIMATE_KEY]["reason"]


def test_an_untimed_event_is_priced_at_its_runs_first_time() -> None:
    first = _event(seq=0, tokens_in=None)
    later = _event(seq=1, ts=None, tokens_in=1000, payload={"model": "gpt-4o"})
    _, priced = estimate_costs([first, later])
    assert priced.cost is not None
    assert priced.cost > 0


def test_a_logged_cost_and_an_event_without_tokens_are_left_alone() -> None:
    logged = _event(tokens_in=10, cost=0.5, payload={"model": "gpt-4o"})
    empty = _event(payload={"model": "gpt-4o"})
    assert estimate_costs([logged, empty]) == [logged, empty]


def test_without_the_package_the_reason_says_how_to_install_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    real = builtins.__import__

    def refuse(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "genai_prices":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refuse)
    (event,) = estimate_costs([_event(tokens_in=10, payload={"model": "gpt-4o"})])
    assert event.cost is None
    assert "crewbook[prices]" in event.payload[ESTIMATE_KEY]["reason"]
