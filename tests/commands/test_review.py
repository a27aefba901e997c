"""`crewbook review-policy DIFF [--risk-based] [--json]` through `crewbook.commands.main`."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).parent.parent / "data" / "review_policy"
CHANGES = DATA / "changes"
Run = Callable[..., Any]


@pytest.fixture
def review_cli(cli: Run, monkeypatch: pytest.MonkeyPatch) -> Run:
    """`cli(...)`, the whole `crewbook` command."""
    return cli


def test_always_by_default(review_cli: Run) -> None:
    result = review_cli("review-policy", CHANGES / "small-fix.diff")
    assert result.code == 0
    assert result.out.startswith("Reviewer required: the review policy is 'always'")


def test_risk_based_json(review_cli: Run) -> None:
    result = review_cli("review-policy", CHANGES / "small-fix.diff", "--risk-based", "--json")
    assert result.code == 0
    data = result.json
    assert data["required"] is False
    assert data["reasons"]
    assert data["line"].startswith("Reviewer not required: ")
    assert [f["path"] for f in data["change"]["files"]] == ["src/reports/format.py",
                                                           "tests/test_format.py"]


@pytest.mark.parametrize(("name", "required", "code"), [
    ("auth-login.diff", True, "sensitive:authentication"),
    ("lines-81.numstat", True, "unreadable_change"),  # numstat cannot show modes
    ("empty.diff", True, "blank_input"),  # an empty read proves nothing
    ("unreadable.diff", True, "unreadable_change"),
])
def test_table_rows_through_the_cli(review_cli: Run, name: str, required: bool,
                                    code: str) -> None:
    data = review_cli("review-policy", CHANGES / name, "--risk-based", "--json").json
    assert data["required"] is required
    assert code in data["codes"]


def test_stdin(review_cli: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (CHANGES / "lines-81.numstat").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text)))
    result = review_cli("review-policy", "-", "--risk-based", "--max-lines", "100",
                        "--no-modes")
    assert result.code == 0
    assert result.out.startswith("Reviewer not required")


def test_policy_file_and_reviewer_started(review_cli: Run) -> None:
    result = review_cli("review-policy", CHANGES / "small-fix.diff", "--policy",
                        DATA / "broken-policy.yaml", "--json")
    assert result.json["codes"] == ["unreadable_policy"]
    result = review_cli("review-policy", CHANGES / "small-fix.diff", "--risk-based",
                        "--reviewer-started", "--json")
    assert result.json["codes"] == ["reviewer_started"]


def test_errors(review_cli: Run, tmp_path: Path) -> None:
    missing = review_cli("review-policy", tmp_path / "nope.diff")
    assert missing.code == 2
    assert "no such file" in missing.err
    folder = review_cli("review-policy", tmp_path)
    assert folder.code == 1
    assert "folder" in folder.err
    bad = review_cli("review-policy", CHANGES / "small-fix.diff", "--max-lines", "-1")
    assert bad.code == 1
    usage = review_cli("review-policy")
    assert usage.code == 2
