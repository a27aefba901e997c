"""Every regression file of `tests/data/bad/` gives its expected problem, never a crash.

The cases (listed with their codes in ``tests/data/bad/expected.yaml``) are the inputs
that once made a reader raise something other than a `CrewbookError` (issue 12).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import yaml

from crewbook.commands import main
from crewbook.commands.validate import validate_paths
from crewbook.errors import CrewbookError, LedgerError
from crewbook.ledger import read_ledger, validate_ledger

BAD = Path(__file__).parent / "data" / "bad"
EXPECTED: dict[str, list[str]] = yaml.safe_load((BAD / "expected.yaml").read_text("utf-8"))


def test_every_case_folder_is_listed() -> None:
    folders = {p.name for p in BAD.iterdir() if p.is_dir()}
    assert folders == set(EXPECTED)


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_a_bad_file_gives_its_problem(case: str,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    file, code, severity, *key = EXPECTED[case]
    path = BAD / case / file
    problems = validate_paths([path]).problems
    found = [(p.code, p.severity, p.key) for p in problems]
    assert any(c == code and s == severity and (not key or k == key[0])
               for c, s, k in found), found
    assert all(p.path and p.message for p in problems)
    status = main(["validate", str(path), "--json"])
    document = json.loads(capsys.readouterr().out)
    assert status == (1 if severity == "error" else 0)
    assert code in [p["code"] for p in document["problems"]]


@pytest.mark.parametrize("case", sorted(c for c in EXPECTED if c.startswith("ledger-")
                                        and EXPECTED[c][2] == "error"))
def test_a_bad_ledger_line_raises_or_is_skipped(case: str) -> None:
    path = BAD / case / EXPECTED[case][0]
    with pytest.raises(LedgerError) as info:
        read_ledger(path)
    assert info.value.codes == [EXPECTED[case][1]]
    assert info.value.problems[0].line == 2
    with pytest.warns(UserWarning, match="1 line left out"):
        frame = read_ledger(path, errors="skip")
    assert frame["seq"].tolist() == [0]  # the good first line is kept
    assert [p.code for p in validate_ledger(path)] == [EXPECTED[case][1]]


def test_an_empty_ledger_folder_warns(tmp_path: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = read_ledger(tmp_path)
    assert frame.empty
    assert "no events" in str(caught[0].message)
    [problem] = validate_ledger(tmp_path)
    assert (problem.code, problem.severity) == ("ledger_empty", "warning")


def test_the_readers_raise_crewbook_errors_on_every_case() -> None:
    from crewbook import load_pipeline, load_schema

    for case, (file, code, severity, *_) in EXPECTED.items():
        if severity != "error" or case.startswith("ledger-"):
            continue
        load = load_schema if file == "schema.yaml" else load_pipeline
        target = BAD / case if file == "schema.yaml" else BAD / case / file
        with pytest.raises(CrewbookError) as info:
            load(target)
        assert code in getattr(info.value, "codes", []), (case, info.value)
