"""One ledger event: the pydantic model, the event kinds and the fields each kind needs.

A ledger is JSON Lines, one event per line, versioned with ``"v": 1`` (DESIGN rule 3)::

    {"v":1,"ts":"2025-03-01T09:00:00Z","run":"r-1","seq":0,"loop":"crew","kind":"init",
     "payload":{"goal":"CSV export"}}
    {"v":1,"ts":"2025-03-01T09:04:10Z","run":"r-1","seq":1,"loop":"crew","kind":"report",
     "role":"developer","stage":"build","verdict":"done","attempt":1,"version":1,
     "tokens_in":5120,"tokens_out":880,"cost":0.031,"duration_ms":245000,"payload":{}}

(shown wrapped here; each event is one line in the file).

`LedgerEvent` is the single source of truth for what a valid line is: the writer
validates with it, the slow path of the reader validates with it, the fast path of
the reader checks the same rules column by column (`REQUIRED_BY_KIND`, `MINIMUMS`),
and ``schemas/ledger-event.json`` is generated from it. Regenerate the schema after
changing the model (a test fails while it is stale)::

    python -m crewbook.ledger.jsonschema > schemas/ledger-event.json
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Annotated, Any, Final, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ..errors import Problem

#: The format version this code reads and writes.
FORMAT_VERSION: Final = 1

Kind = Literal[
    "init", "plan", "act", "report", "verdict", "transition", "bar", "question",
    "answer", "escalate", "error", "pause", "resume", "rewind", "finish", "note",
]
#: Every event kind, in the order a run usually meets them (the `kind` categories).
KINDS: Final[tuple[str, ...]] = get_args(Kind)

#: What each kind means (used in the JSON Schema and docs/ledger.md).
KIND_MEANINGS: Final[dict[str, str]] = {
    "init": "a loop starts a run (payload: goal, scope, caps, bar...)",
    "plan": "a role records or revises the plan and its acceptance criteria",
    "act": "a role is handed a piece of work (the start of an act)",
    "report": "a role reports the result of its act (verdict 'done' for builders)",
    "verdict": "a judging role (qa, reviewer) judges a version: go/no-go, approved/changes",
    "transition": "the run moves to `stage` (payload.from: where it came from)",
    "bar": "the engine measured the bar (test, lint...): verdict pass/fail",
    "question": "a role asks the coordinator a question",
    "answer": "the coordinator answers with a decision and a reason",
    "escalate": "a cap was reached or a rule refused: the run escalates instead of looping",
    "error": "something failed (a step, a command); summary says what",
    "pause": "the run waits (a gate, an interruption)",
    "resume": "the run goes on after a pause",
    "rewind": "a notebook restored an earlier snapshot; the acts after it branch from there",
    "finish": "the run ends; verdict is the finished reason (scope_covered, pull_request...)",
    "note": "anything else worth keeping (imported events with no crewbook equivalent)",
}

#: Fields that must be present (not null) for each kind, beyond the ones every event has.
REQUIRED_BY_KIND: Final[dict[str, tuple[str, ...]]] = {
    "init": (),
    "plan": ("role",),
    "act": ("role",),
    "report": ("role",),
    "verdict": ("role", "verdict"),
    "transition": ("stage",),
    "bar": ("verdict",),
    "question": ("role",),
    "answer": ("role",),
    "escalate": ("summary",),
    "error": ("summary",),
    "pause": (),
    "resume": (),
    "rewind": (),
    "finish": ("verdict",),
    "note": (),
}

#: Fields every event has.
ALWAYS_REQUIRED: Final[tuple[str, ...]] = ("ts", "run", "seq", "loop", "kind")

#: Smallest allowed value of each numeric field.
MINIMUMS: Final[dict[str, int]] = {
    "seq": 0, "attempt": 1, "version": 0, "tokens_in": 0, "tokens_out": 0,
    "cost": 0, "duration_ms": 0,
}

#: Every field of a line, in the order the writer writes them.
FIELDS: Final[tuple[str, ...]] = (
    "v", "ts", "run", "seq", "loop", "kind", "role", "stage", "verdict", "attempt",
    "version", "summary", "tokens_in", "tokens_out", "cost", "duration_ms", "payload",
)

Name = Annotated[StrictStr, Field(min_length=1)]
#: Largest integer a field may hold: what int64 (Arrow, pandas Int64) can; the writer
#: refuses more, so it never writes a line its reader cannot read.
MAX_INT: Final = 2**63 - 1
Count = Annotated[StrictInt, Field(ge=0, le=MAX_INT)]


def _ts_is_text(value: Any) -> Any:
    if isinstance(value, bool | int | float):
        raise ValueError("ts must be an ISO-8601 text such as '2025-03-01T09:00:00Z', "
                         "not a number")
    return value


def _ts_in_utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    try:
        utc = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except OverflowError:  # before year 1 or after 9999 once in UTC
        utc = None
    if utc is None or not TS_YEARS[0] <= utc.year <= TS_YEARS[1]:  # datetime64[ns]'s years
        raise ValueError(f"ts {(utc or value).isoformat()} is out of range (years "
                         f"{TS_YEARS[0]} to {TS_YEARS[1]})")
    return utc


#: The years a `ts` may fall in (in UTC): what datetime64[ns] holds, whole years.
TS_YEARS: Final = (1678, 2261)
#: What a `ts` may be: an ISO-8601 text (pydantic's reading of dates and times; no
#: number), read in UTC (a text without offset is UTC), in `TS_YEARS`; or null. One
#: type for the model and for the reader's columns (`ledger.timestamps`), so both take
#: and refuse the same texts, with the same words.
Timestamp = Annotated[datetime | None, BeforeValidator(_ts_is_text), AfterValidator(_ts_in_utc)]


def _kind_rules() -> list[dict[str, Any]]:
    return [
        {"if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]},
         "then": {"required": list(fields),
                  "properties": {f: {"not": {"type": "null"}} for f in fields}}}
        for kind, fields in REQUIRED_BY_KIND.items() if fields
    ]


def _schema_extra(schema: dict[str, Any]) -> None:
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["allOf"] = _kind_rules()
    schema["properties"]["payload"]["type"] = ["object", "null"]  # null reads as {}
    version = schema["properties"]["v"]  # null reads as absent: 1
    version["enum"] = [version.pop("const"), None]
    version["type"] = ["integer", "null"]
    kind = schema["properties"]["kind"]
    kind["description"] = "What happened: " + "; ".join(
        f"{k}: {m}" for k, m in KIND_MEANINGS.items()
    )


class LedgerEvent(BaseModel):
    """One line of a ledger: who did what, when, in which run, at which position.

    `seq` numbers the events of one run from 0 without gaps; the writer assigns it.
    Numbers are strict (``1.0`` is not a count, ``true`` is not a number) so the
    model accepts exactly what the Arrow-based reader accepts.
    """

    model_config = ConfigDict(
        extra="forbid", frozen=True, json_schema_extra=_schema_extra,
        title="crewbook ledger event (v1)",
    )

    v: Literal[1] = Field(1, description="Format version; always 1 (null reads as 1).")
    ts: Timestamp = Field(
        description="When it happened: ISO-8601, UTC ('Z'); no offset means UTC. null "
        "(written, never just left out) when the source had no clock: an import from a "
        "log that does not time its steps.")
    run: Name = Field(description="The run this event belongs to.")
    seq: Count = Field(description="Position in the run, from 0, assigned by the writer.")
    loop: Name = Field(description="The kind of loop: crew, pipeline, coordinator, spec-kit...")
    kind: Kind = Field(description="What happened.")
    role: StrictStr | None = Field(None, description="Who acted: analyst, developer, qa...")
    stage: StrictStr | None = Field(None, description="Where in the loop: a stage or step id.")
    verdict: StrictStr | None = Field(
        None, description="Outcome: go/no-go (qa), approved/changes (reviewer), done, "
        "pass/fail (bar), the finished reason (finish).",
    )
    attempt: Annotated[StrictInt, Field(ge=1, le=MAX_INT)] | None = Field(
        None, description="Round of the loop, from 1; grows when work goes back.")
    version: Count | None = Field(None, description="Version of the work judged or shipped.")
    summary: StrictStr | None = Field(None, description="One compact sentence about the act.")
    tokens_in: Count | None = Field(None, description="Prompt tokens spent.")
    tokens_out: Count | None = Field(None, description="Completion tokens spent.")
    cost: Annotated[StrictFloat, Field(ge=0, allow_inf_nan=False)] | None = Field(
        None, description="Cost of the act, in the currency of the provider profile.")
    duration_ms: Count | None = Field(None, description="How long the act took, in ms.")
    payload: dict[str, Any] = Field(
        default_factory=dict, description="Kind-specific structured data (a JSON object).")

    @model_validator(mode="before")
    @classmethod
    def _text_is_unicode(cls, value: Any) -> Any:
        where = lone_surrogate(value)
        if where is not None:
            raise PydanticCustomError(
                "lone_surrogate", "{where} holds a lone surrogate (an escape such as "
                "\\ud800 that is half of a character); it cannot be stored as UTF-8",
                {"where": where or "a key"})
        return value

    @field_validator("v", mode="before")
    @classmethod
    def _null_version_is_absent(cls, value: Any) -> Any:
        return 1 if value is None else value  # as every reader treats a null: absent

    @field_validator("payload", mode="before")
    @classmethod
    def _null_payload_is_empty(cls, value: Any) -> Any:
        return {} if value is None else value

    @model_validator(mode="after")
    def _kind_needs(self) -> LedgerEvent:
        missing = [f for f in REQUIRED_BY_KIND[self.kind] if getattr(self, f) is None]
        if missing:
            raise PydanticCustomError(
                "kind_needs", "a '{kind}' event needs {fields} ({meaning})",
                {"kind": self.kind, "fields": ", ".join(missing), "missing": missing,
                 "meaning": KIND_MEANINGS[self.kind]},
            )
        return self

    def to_line(self) -> str:
        """The JSON line the writer stores (no newline; absent fields left out, except a
        null `ts`, which says "no clock" and stays)."""
        line = self.model_dump_json(exclude_none=True)
        return line if self.ts is not None else '{"v":1,"ts":null,' + line[len('{"v":1,'):]

    def _repr_html_(self) -> str:
        import html

        rows = "".join(
            f"<tr><th style='text-align:left'>{k}</th><td><code>{html.escape(repr(v))}</code>"
            "</td></tr>"
            for k, v in self.model_dump(exclude_none=True).items()
        )
        return f"<table class='crewbook-event'><caption>LedgerEvent</caption>{rows}</table>"


def lone_surrogate(value: Any, where: str = "") -> str | None:
    """The key path of the first text (key or value) holding a lone surrogate, or None.

    ``json.loads('"\\ud800"')`` gives such a string; it cannot be encoded as UTF-8,
    so it would crash whatever writes it out later (Arrow, the CLI's JSON).
    """
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return at
        elif isinstance(item, dict):
            for key, child in item.items():
                inner = f"{at}.{key}" if at else str(key)
                if isinstance(key, str) and _SURROGATE.search(key):
                    return at or "payload"
                stack.append((child, inner))
        elif isinstance(item, list | tuple):
            stack.extend((child, f"{at}[{i}]") for i, child in enumerate(item))
    return None


_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def missing_message(name: str) -> str:
    """What to say when a field every event needs is absent."""
    return f"{name} is missing; every event needs {', '.join(ALWAYS_REQUIRED)}"


def validation_problems(
    exc: ValidationError, *, path: str | None = None, line: int | None = None,
    code: str = "ledger_bad_event",
) -> list[Problem]:
    """One `Problem` per pydantic error, naming the key and saying what to do."""
    problems: list[Problem] = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"])
        msg = str(err["msg"])
        if err["type"] == "kind_needs":
            kind = err["ctx"]["kind"]
            problems.extend(
                Problem(code, f"a {kind!r} event needs {name}", path, line, key=name)
                for name in err["ctx"]["missing"])
            continue
        if err["type"] == "lone_surrogate":
            loc = str(err["ctx"]["where"])
        if err["type"] == "extra_forbidden":
            from ..errors import did_you_mean

            msg = (f"unknown key {loc!r}{did_you_mean(str(loc), FIELDS)}; "
                   "put extra data under 'payload'")
        elif err["type"] == "missing":
            msg = missing_message(loc)
        elif msg.startswith("Value error, "):
            msg = msg.removeprefix("Value error, ")
        problems.append(Problem(code=code, message=msg, path=path, line=line, key=loc or None))
    return problems


def event_json_schema() -> dict[str, Any]:
    """The JSON Schema of one ledger line (what ``schemas/ledger-event.json`` holds)."""
    return LedgerEvent.model_json_schema(mode="validation")


def schema_text() -> str:
    """The schema file's exact text (stable key order, trailing newline)."""
    return json.dumps(event_json_schema(), indent=2, ensure_ascii=False) + "\n"

