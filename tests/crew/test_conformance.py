"""The crew loop's ledger rules (registered by `crewbook.crew.checks`): the ledgers the
crew loop writes conform; a hand-made bad crew ledger is flagged rule by rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from crewbook.crew import crew_init, crew_report
from crewbook.crew.model import CREW_LEDGER
from crewbook.ledger.conformance import check_conformance

from .conftest import GREEN


def test_the_ledgers_the_crew_loop_writes_conform(project: Path) -> None:
    crew_init("goal", bar={"test": GREEN}, max_rounds=7, project=project)
    for role, verdict in (("analyst", "done"), ("developer", "done"), ("qa", "no-go"),
                          ("developer", "done"), ("qa", "go"), ("analyst", "done"),
                          ("developer", "done")):
        crew_report(role, verdict, f"{role} {verdict}", project=project)
    frame = check_conformance(project / CREW_LEDGER)
    assert frame.empty, frame.to_string()


def test_a_bad_crew_ledger_is_flagged(tmp_path: Path) -> None:
    steps: list[dict[str, Any]] = [
        {"kind": "init", "payload": {"max_rounds": 3}},
        {"kind": "report", "role": "analyst", "verdict": "done"},
        {"kind": "report", "role": "qa", "verdict": "done"},         # developer's turn
        {"kind": "verdict", "role": "developer", "verdict": "go"},   # only qa judges
        {"kind": "report", "role": "analyst", "verdict": "done"},    # a fourth act, qa's turn
    ]
    path = tmp_path / "crew.jsonl"
    path.write_text("".join(json.dumps({
        "v": 1, "ts": f"2025-03-01T09:0{i}:00Z", "run": "c", "seq": i, "loop": "crew", **e})
        + "\n" for i, e in enumerate(steps)))
    frame = check_conformance(path)
    found = list(zip(frame["seq"].astype(int), frame["code"].astype(str), strict=True))
    assert found == [(2, "unexpected_role"), (2, "verdict_not_allowed"),
                     (3, "verdict_not_allowed"), (3, "unexpected_role"),
                     (3, "verdict_not_allowed"), (4, "unexpected_role"),
                     (4, "cap_exceeded")], frame.to_string()


def test_a_hostile_payload_file_is_a_crew_error(project: Path) -> None:
    """Found by the fuzzers: `json.loads` let a 5,000-digit number (ValueError) and deep
    nesting (RecursionError) through `load_payload`."""
    import pytest

    from crewbook.artifacts.project import Project
    from crewbook.crew.checks import load_payload
    from crewbook.errors import CrewError

    for name, text in (("big.json", '{"n": ' + "9" * 5000 + "}"),
                       ("deep.json", '{"a": ' + "[" * 5000 + "]" * 5000 + "}"),
                       ("nan.json", '{"n": NaN}')):
        (project / name).write_text(text)
        with pytest.raises(CrewError) as info:
            load_payload(None, name, Project(project))
        assert [p.code for p in info.value.problems] == ["payload_bad_json"]
