"""The attributes of a crewbook span, in the vocabularies trace viewers read: the
OpenTelemetry GenAI semantic conventions (``gen_ai.*``), OpenInference's (``llm.*``,
``input.value``…) and crewbook's own (``crewbook.*``, which give an event back on
import). `otlp_export` builds the spans from them; one job here: an event's or a run's
values as OTLP attributes."""

from __future__ import annotations

import json
from datetime import UTC
from typing import Any, Final

from .calls import is_totals
from .events import LedgerEvent

#: Event fields carried as ``crewbook.<field>`` attributes (``ts`` as ISO-8601 text).
CREWBOOK_FIELDS: Final = ("run", "kind", "seq", "loop", "role", "stage", "verdict",
                          "attempt", "version", "summary", "tokens_in", "tokens_out",
                          "cost", "duration_ms")
#: Longest ``input.value`` / ``output.value`` (characters); longer texts are cut, saying so.
TEXT_CAP: Final = 4000
#: Longest ``crewbook.payload`` JSON; a longer payload is cut and flagged (no round trip).
PAYLOAD_CAP: Final = 65536
#: Payload keys that mark an event as a tool call, and where its input text is.
TOOL_KEYS: Final = ("action", "observation", "tool", "tool_call")
INPUT_KEYS: Final = ("prompt", "message", "action", "task", "goal", "command")
#: Model name prefix → (GenAI ``gen_ai.provider.name``, OpenInference ``llm.provider``).
PROVIDERS: Final = (
    ("claude", "anthropic", "anthropic"), ("anthropic", "anthropic", "anthropic"),
    ("gpt", "openai", "openai"), ("o1", "openai", "openai"), ("o3", "openai", "openai"),
    ("o4", "openai", "openai"), ("chatgpt", "openai", "openai"),
    ("openai", "openai", "openai"), ("gemini", "gcp.gemini", "google"),
    ("mistral", "mistral_ai", "mistralai"), ("codestral", "mistral_ai", "mistralai"),
    ("deepseek", "deepseek", "deepseek"), ("grok", "x_ai", "xai"),
)


def provider(model: str) -> tuple[str, str] | None:
    """(GenAI provider name, OpenInference provider) of a model name, when known."""
    name = model.lower().rsplit("/", 1)[-1] if "/" in model else model.lower()
    prefix = model.lower().split("/", 1)[0] if "/" in model else ""
    for start, genai, openinference in PROVIDERS:
        if prefix.startswith(start) or name.startswith(start):
            return genai, openinference
    return None


def cap(text: str, limit: int = TEXT_CAP) -> str:
    """`text`, cut to `limit` characters with a note saying how much was left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"… [{len(text) - limit:,} more characters]"


def run_totals(events: list[LedgerEvent]) -> list[dict[str, Any]]:
    """``crewbook.run.tokens_in`` / ``tokens_out`` / ``cost``: the usage a run's totals
    events carry (`is_totals`: what the source counted for the whole run, no call's), on
    the run's span. Not GenAI or OpenInference usage attributes: a viewer summing those
    would count them as one more model call."""
    totals = [e for e in events if is_totals(e.kind, e.payload)]
    out = []
    for name in ("tokens_in", "tokens_out", "cost"):
        values = [getattr(e, name) for e in totals if getattr(e, name) is not None]
        if values:
            out.append(attr(f"crewbook.run.{name}", sum(values)))
    return out


def llm_attributes(event: LedgerEvent, model: str | None) -> list[dict[str, Any]]:
    attrs = [attr("openinference.span.kind", "LLM"), attr("gen_ai.operation.name", "chat")]
    if model:
        attrs += [attr("gen_ai.request.model", model), attr("gen_ai.response.model", model),
                  attr("llm.model_name", model)]
        known = provider(model)
        if known is not None:
            attrs += [attr("gen_ai.provider.name", known[0]), attr("llm.provider", known[1])]
    if event.tokens_in is not None:
        attrs += [attr("gen_ai.usage.input_tokens", event.tokens_in),
                  attr("llm.token_count.prompt", event.tokens_in)]
    if event.tokens_out is not None:
        attrs += [attr("gen_ai.usage.output_tokens", event.tokens_out),
                  attr("llm.token_count.completion", event.tokens_out)]
    if event.tokens_in is not None or event.tokens_out is not None:
        attrs.append(attr("llm.token_count.total",
                           (event.tokens_in or 0) + (event.tokens_out or 0)))
    for key, value in event.payload.items():  # cache tokens, when the source counts them
        if key in ("cache_read_tokens", "cache_write_tokens") and isinstance(value, int):
            what = key.split("_")[1]
            attrs += [attr(f"llm.token_count.prompt_details.cache_{what}", value),
                      attr(f"gen_ai.usage.cache_{'read' if what == 'read' else 'creation'}"
                            ".input_tokens", value)]
    if event.cost is not None:  # OpenInference's name; Langfuse reads gen_ai.usage.cost
        attrs += [attr("llm.cost.total", event.cost), attr("gen_ai.usage.cost", event.cost)]
    return attrs


def input_text(event: LedgerEvent) -> str | None:
    for key in INPUT_KEYS:
        value = event.payload.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def crewbook_attributes(event: LedgerEvent) -> list[dict[str, Any]]:
    attrs = [attr(f"crewbook.{name}", getattr(event, name)) for name in CREWBOOK_FIELDS
             if getattr(event, name) is not None]
    if event.ts is not None:
        attrs.append(attr("crewbook.ts", event.ts.astimezone(UTC).isoformat()))
    if event.payload:
        text = json.dumps(event.payload, ensure_ascii=False, separators=(",", ":"))
        if len(text) > PAYLOAD_CAP:
            attrs.append(attr("crewbook.payload_truncated", len(text)))
        attrs.append(attr("crewbook.payload", cap(text, PAYLOAD_CAP)))
    return attrs


def attr(key: str, value: Any) -> dict[str, Any]:
    kind = type(value)  # exact types first: the export makes ~30 attributes per event
    if kind is str:
        return {"key": key, "value": {"stringValue": value}}
    if kind is bool:
        return {"key": key, "value": {"boolValue": value}}
    if kind is int:
        return {"key": key, "value": {"intValue": str(value)}}
    if kind is float:
        return {"key": key, "value": {"doubleValue": value}}
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": bool(value)}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(int(value))}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": float(value)}}
    return {"key": key, "value": {"stringValue": str(value)}}
