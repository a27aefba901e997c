"""OpenHands usage: the metrics blocks of its logs read as each call's usage, whether a
block priced anything, a run's totals when no call is itemised, and durations. Shared by
the V0 (`openhands_v0`) and agent-SDK (`openhands_sdk`) readers."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from ..calls import TOTALS_KEY
from ._common import RunBuilder, count

SOURCE: Final = "openhands"
CODE: Final = "import_bad_openhands"


def ms(begun: datetime | None, ended: datetime | None) -> int | None:
    """Milliseconds from `begun` to `ended` (None when either is missing or reversed)."""
    if begun is None or ended is None or ended < begun:
        return None
    return int((ended - begun).total_seconds() * 1000)


def usage_by_response(stats: Any) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """(usage per response id, every metrics block) from a ``stats`` value."""
    metrics_blocks: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    per = stats.get("usage_to_metrics") if isinstance(stats, dict) else None
    for metrics in (per.values() if isinstance(per, dict) else ()):
        if not isinstance(metrics, dict):
            continue
        metrics_blocks.append(metrics)
        latencies = {str(x.get("response_id")): x.get("latency")
                     for x in metrics.get("response_latencies") or () if isinstance(x, dict)}
        usages = [u for u in metrics.get("token_usages") or () if isinstance(u, dict)]
        costs = [c for c in metrics.get("costs") or () if isinstance(c, dict)]
        paired = len(costs) == len(usages)
        for index, usage in enumerate(usages):
            rid = str(usage.get("response_id") or "")
            if not rid:
                continue
            cost = costs[index].get("cost") if paired else None
            latency = latencies.get(rid)
            by_id[rid] = {
                "tokens_in": count(usage.get("prompt_tokens")),
                "tokens_out": count(usage.get("completion_tokens")),
                "cost": float(cost) if isinstance(cost, int | float) and cost >= 0 else None,
                "duration_ms": round(latency * 1000) if isinstance(latency, int | float)
                and 0 <= latency < 1e9 else None,
                "payload": {"model": usage.get("model") or metrics.get("model_name"),
                            "cache_read_tokens": count(usage.get("cache_read_tokens")),
                            "cache_write_tokens": count(usage.get("cache_write_tokens")),
                            "reasoning_tokens": count(usage.get("reasoning_tokens"))}}
    return by_id, metrics_blocks


def priced(metrics: dict[str, Any]) -> bool:
    """Whether an OpenHands metrics block records a cost. Its ``accumulated_cost`` starts
    at 0.0 and each priced call adds an entry to ``costs``: an empty ``costs`` with a zero
    total means no call was priced (a model LiteLLM has no price for), not a free run."""
    total = metrics.get("accumulated_cost")
    if not isinstance(total, int | float) or isinstance(total, bool) or total < 0:
        return False
    return bool(total) or metrics.get("costs") != []


def totals(run: RunBuilder, blocks: list[dict[str, Any]], *, line: int | None = None,
           record: str, tokens: bool = True) -> None:
    """A ``note`` carrying the run's total usage (flagged ``payload.totals``: no call of
    its own) when no call could be tied to its own (dated like the run's last event: the
    totals are known at its end); without `tokens`, only its cost (the calls already
    carry theirs). No block priced: no cost."""
    costs = [float(b["accumulated_cost"]) for b in blocks if priced(b)]
    cost = sum(costs) if costs else None
    acc = [b["accumulated_token_usage"] for b in blocks
           if tokens and isinstance(b.get("accumulated_token_usage"), dict)]
    tokens_in = sum(count(a.get("prompt_tokens")) or 0 for a in acc)
    tokens_out = sum(count(a.get("completion_tokens")) or 0 for a in acc)
    if not (costs or tokens_in or tokens_out):
        return
    models = sorted({str(b.get("model_name")) for b in blocks if b.get("model_name")})
    last = run.events[-1].ts if run.events else None
    run.add("note", last, line=line, record=record, stage="usage",
            summary="the run's total usage (its calls are not itemised)" if tokens
            else "the run's total cost (its calls record tokens, no cost)",
            tokens_in=tokens_in if tokens else None, tokens_out=tokens_out if tokens else None,
            cost=cost,
            payload={"model": models[0] if len(models) == 1 else models, TOTALS_KEY: True})
