"""The event model: fields, kinds and what each needs, strictness, the generated schema."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import ValidationError

from crewbook.ledger.events import (
    FIELDS,
    KINDS,
    REQUIRED_BY_KIND,
    LedgerEvent,
    event_json_schema,
    schema_text,
    validation_problems,
)

from .conftest import event

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schemas" / "ledger-event.json"

#: A value for every field a kind may require.
FILLERS: dict[str, Any] = {"role": "qa", "stage": "verify", "verdict": "go",
                           "summary": "cap reached"}


def complete(kind: str, **extra: Any) -> dict[str, Any]:
    data = event(0, kind=kind, role=None, stage=None)
    data.update({f: FILLERS[f] for f in REQUIRED_BY_KIND[kind]})
    data.update(extra)
    return {k: v for k, v in data.items() if v is not None}


def test_a_full_event_round_trips_through_its_line() -> None:
    e = LedgerEvent.model_validate(event(3, kind="report", verdict="done", attempt=2,
                                         version=2, summary="built", tokens_in=10,
                                         tokens_out=5, cost=0.25, duration_ms=1200,
                                         payload={"task": "T-1", "files": [1, 2]}))
    line = e.to_line()
    assert list(json.loads(line)) == [f for f in FIELDS if f in json.loads(line)]
    assert json.loads(line)["ts"] == "2025-03-01T09:00:03Z"
    assert LedgerEvent.model_validate_json(line) == e


def test_absent_optional_fields_are_left_out_of_the_line() -> None:
    line = LedgerEvent.model_validate(complete("init")).to_line()
    assert set(json.loads(line)) == {"v", "ts", "run", "seq", "loop", "kind", "payload"}


@pytest.mark.parametrize(("ts", "expected"), [
    ("2025-03-01T09:00:00Z", datetime(2025, 3, 1, 9, tzinfo=UTC)),
    ("2025-03-01T11:00:00+02:00", datetime(2025, 3, 1, 9, tzinfo=UTC)),
    ("2025-03-01T09:00:00", datetime(2025, 3, 1, 9, tzinfo=UTC)),  # no offset: UTC
    (datetime(2025, 3, 1, 4, tzinfo=timezone(timedelta(hours=-5))),
     datetime(2025, 3, 1, 9, tzinfo=UTC)),
])
def test_ts_is_always_utc(ts: Any, expected: datetime) -> None:
    got = LedgerEvent.model_validate(event(0, ts=ts)).ts
    assert got == expected
    assert got.utcoffset() == timedelta(0)


@pytest.mark.parametrize("kind", [k for k in KINDS if REQUIRED_BY_KIND[k]])
def test_each_kind_requires_its_fields(kind: str) -> None:
    LedgerEvent.model_validate(complete(kind))  # complete: fine
    for name in REQUIRED_BY_KIND[kind]:
        data = complete(kind)
        del data[name]
        with pytest.raises(ValidationError, match=f"a '{kind}' event needs {name}"):
            LedgerEvent.model_validate(data)


def test_every_kind_has_a_rule_and_the_list_covers_the_spec() -> None:
    assert set(REQUIRED_BY_KIND) == set(KINDS)
    assert {"init", "act", "report", "verdict", "transition", "bar", "question", "answer",
            "plan", "escalate", "finish"} <= set(KINDS)


@pytest.mark.parametrize(("key", "value"), [
    ("seq", 1.0), ("seq", True), ("seq", "1"), ("seq", -1), ("attempt", 0),
    ("tokens_in", -5), ("cost", float("nan")), ("cost", -0.5), ("cost", "0.5"),
    ("ts", 1740819600), ("run", ""), ("run", 7), ("loop", ""), ("kind", "acts"),
    ("v", 2), ("payload", [1, 2]), ("role", 3),
])
def test_numbers_and_names_are_strict(key: str, value: Any) -> None:
    with pytest.raises(ValidationError):
        LedgerEvent.model_validate({**event(0), key: value})


def test_an_int_cost_is_a_number() -> None:
    assert LedgerEvent.model_validate(event(0, cost=2)).cost == 2.0


def test_unknown_keys_are_refused_with_a_suggestion() -> None:
    with pytest.raises(ValidationError) as info:
        LedgerEvent.model_validate(event(0, verdit="go"))
    [problem] = validation_problems(info.value, path="runs/a.jsonl", line=4)
    assert problem.code == "ledger_bad_event"
    assert problem.key == "verdit"
    assert "did you mean 'verdict'?" in problem.message
    assert "payload" in problem.message
    assert str(problem).startswith("runs/a.jsonl:4: verdit:")


def test_missing_fields_name_what_every_event_needs() -> None:
    data = event(0)
    del data["run"]
    with pytest.raises(ValidationError) as info:
        LedgerEvent.model_validate(data)
    [problem] = validation_problems(info.value)
    assert problem.key == "run"
    assert "every event needs ts, run, seq, loop, kind" in problem.message


def test_schema_file_is_current() -> None:
    regenerate = "python -m crewbook.ledger.jsonschema > schemas/ledger-event.json"
    assert SCHEMA_FILE.is_file(), f"missing; run: {regenerate}"
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), (
        f"schemas/ledger-event.json is stale; regenerate it with `{regenerate}`")


def test_the_schema_module_prints_the_file() -> None:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "crewbook.ledger.jsonschema"], check=True,
                         capture_output=True, text=True)
    assert out.stdout == schema_text()
    assert out.stderr == ""


def test_schema_encodes_the_rules_of_the_model() -> None:
    schema = event_json_schema()
    validator = jsonschema.Draft202012Validator(schema)
    good = complete("verdict")
    assert not list(validator.iter_errors(good))
    for bad in ({**good, "verdict": None}, {k: v for k, v in good.items() if k != "role"},
                {**good, "kind": "acts"}, {**good, "seq": -1}, {**good, "extra": 1},
                {k: v for k, v in good.items() if k != "ts"}):
        assert list(validator.iter_errors(bad)), bad
        with pytest.raises(ValidationError):
            LedgerEvent.model_validate(bad)


def test_events_are_frozen_and_show_themselves() -> None:
    e = LedgerEvent.model_validate(complete("finish", summary="done <now>"))
    with pytest.raises(ValidationError):
        e.seq = 4  # type: ignore[misc]
    html = e._repr_html_()
    assert "finish" in html
    assert "&lt;now&gt;" in html


def test_the_docs_table_of_kinds_matches_the_model() -> None:
    import re

    docs = (SCHEMA_FILE.parents[1] / "docs" / "ledger.md").read_text(encoding="utf-8")
    section = docs.split("### Kinds and what each needs")[1].split("\n## ")[0]
    rows = dict(re.findall(r"^\| `(\w+)` \| ([^|]+) \|", section, flags=re.M))
    assert set(rows) == set(KINDS)
    for kind in KINDS:
        assert kind in rows, f"docs/ledger.md does not list the kind {kind!r}"
        documented = set(re.findall(r"`(\w+)`", rows[kind]))
        assert documented == set(REQUIRED_BY_KIND[kind]), kind
