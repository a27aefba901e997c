"""Cost estimates for imported events that count tokens but log no cost.

Many agent logs (Claude Code transcripts, Codex rollouts) record the model and its
tokens but never what the call cost. `estimate_costs` prices such events from
`genai-prices <https://github.com/pydantic/genai-prices>`_, a price table kept up to date
by its authors whose data ships inside the package (no network). An estimated cost is
marked, never silent: the event gets ``payload.cost_estimate``::

    {"by": "genai-prices 0.2.3", "model": "claude-sonnet-4-5", "provider": "anthropic"}

and an event that cannot be priced (no model, a model the table does not know, no time,
the package not installed) keeps a null ``cost`` (never 0) with the reason::

    {"status": "unpriced", "reason": "genai-prices knows no model 'synthetic-model'"}

Prices are the table's price at the event's time (``ts``, else the run's first time),
so an estimate does not move with the day it is computed on.

Token fields read: ``tokens_in`` (every input token, cached or not), ``tokens_out``,
``payload.cache_read_tokens`` and ``payload.cache_write_tokens`` (parts of
``tokens_in`` billed at their own rates), ``payload.model`` and ``payload.provider``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from functools import lru_cache
from typing import Any, Final

from .events import LedgerEvent

#: The payload key an estimate (or the reason there is none) is written under.
ESTIMATE_KEY: Final = "cost_estimate"


def needs_price(event: LedgerEvent) -> bool:
    """Whether an event counts tokens but has no cost (and no estimate yet)."""
    return (event.cost is None and bool(event.tokens_in or event.tokens_out)
            and ESTIMATE_KEY not in event.payload)


def estimate_costs(events: Iterable[LedgerEvent]) -> list[LedgerEvent]:
    """The events, each one that counts tokens but has no cost priced from the table
    (or marked unpriced with the reason); the others unchanged. A run whose log gives a
    cost anywhere (per call or as a run total) is the log's own figure: none of its
    events is estimated, so nothing is counted twice."""
    events = list(events)
    logged = {e.run for e in events if e.cost is not None}
    out: list[LedgerEvent] = []
    first_ts: dict[str, datetime] = {}
    for event in events:
        if event.ts is not None:
            first_ts.setdefault(event.run, event.ts)
        if event.run in logged or not needs_price(event):
            out.append(event)
            continue
        cost, note = price_event(event, event.ts or first_ts.get(event.run))
        update: dict[str, Any] = {"payload": {**event.payload, ESTIMATE_KEY: note}}
        if cost is not None:
            update["cost"] = cost
        out.append(event.model_copy(update=update))
    return out


def price_event(event: LedgerEvent, when: datetime | None) -> tuple[float | None, dict[str, Any]]:
    """(cost in USD or None, the note saying how it was priced or why not)."""
    model = event.payload.get("model")
    if not isinstance(model, str) or not model:
        return None, _unpriced("the event names no model")
    if when is None:
        return None, _unpriced("the event and its run have no time to pick a price at")
    provider = event.payload.get("provider")
    provider = provider if isinstance(provider, str) and provider else None
    try:
        from genai_prices import Usage, calc_price
    except ImportError:
        return None, _unpriced("genai-prices is not installed (pip install 'crewbook[prices]')")
    if (model, provider) in _MISSES:
        return None, _unpriced(_MISSES[model, provider])
    cache_read = _int(event.payload.get("cache_read_tokens"))
    cache_write = _int(event.payload.get("cache_write_tokens"))
    total_in = max(event.tokens_in or 0, cache_read + cache_write)
    usage = Usage(input_tokens=total_in, output_tokens=event.tokens_out or 0,
                  cache_read_tokens=cache_read, cache_write_tokens=cache_write)
    try:
        price = calc_price(usage, model_ref=model, provider_id=provider,
                           genai_request_timestamp=when)
    except (LookupError, ValueError) as exc:
        _MISSES[model, provider] = f"genai-prices cannot price {model!r}: {exc}"
        return None, _unpriced(_MISSES[model, provider])
    return float(price.total_price), {
        "by": f"genai-prices {_version()}", "model": price.model.id,
        "provider": price.provider.id}


def _unpriced(reason: str) -> dict[str, Any]:
    return {"status": "unpriced", "reason": reason}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


#: (model, provider) the table cannot price → why (asked once per process).
_MISSES: dict[tuple[str, str | None], str] = {}


@lru_cache(maxsize=1)
def _version() -> str:
    from importlib.metadata import version

    return version("genai-prices")
