"""The review policy (SPEC C7), driven by the table in tests/data/review_policy/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from crewbook.delivery import (
    ChangeSummary,
    FileChange,
    ReviewPolicy,
    Unreadable,
    load_review_policy,
    read_change,
    review_required,
    sensitive_matches,
)

DATA = Path(__file__).parent.parent / "data" / "review_policy"
CASES: list[dict[str, Any]] = yaml.safe_load((DATA / "cases.yaml").read_text("utf-8"))["cases"]


def policy_of(case: dict[str, Any]) -> ReviewPolicy | Unreadable:
    name = case["policy"]
    if name.endswith(".yaml"):
        return load_review_policy(DATA / name)
    return ReviewPolicy(policy=name, max_lines=case.get("max_lines", 80))


def test_the_table_is_big_enough() -> None:
    assert len(CASES) >= 30
    assert len({c["id"] for c in CASES}) == len(CASES)
    must = {"auth-file", "migration", "lock-file", "lines-81", "symlink-diff",
            "empty-change", "unreadable-diff"}
    assert must <= {c["id"] for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_review_policy_table(case: dict[str, Any]) -> None:
    change = read_change((DATA / "changes" / case["change"]).read_bytes())
    decision = review_required(change, policy_of(case),
                               reviewer_started=case.get("reviewer_started", False))
    assert decision.required is case["required"], decision.line
    assert sorted(decision.codes) == sorted(case["codes"]), decision.line
    head = "Reviewer required: " if case["required"] else "Reviewer not required: "
    assert decision.line.startswith(head)
    assert len(decision.reasons) == len(decision.codes)


def test_every_reason_is_listed() -> None:
    change = ChangeSummary.of({"src/auth/session.py": (70, 20), "poetry.lock": (5, 5)},
                              binaries=["logo.png"])
    decision = review_required(change, "risk-based", reviewer_started=True)
    assert decision.codes == ("reviewer_started", "sensitive:authentication",
                              "sensitive:sessions", "sensitive:dependencies", "too_large",
                              "binary")
    assert "touches authentication: src/auth/session.py" in decision.line


def test_pure_and_default_always() -> None:
    change = ChangeSummary.of({"a.py": (1, 0)})
    assert review_required(change) == review_required(change)
    assert review_required(change).codes == ("policy_always",)
    assert review_required(None, "risk-based").codes == ("unreadable_change",)


def test_unknown_line_counts_mean_required() -> None:
    decision = review_required(ChangeSummary((FileChange("a.py", None, None),)), "risk-based")
    assert decision.codes == ("unknown_size",)


def test_to_dict_and_display() -> None:
    decision = review_required(ChangeSummary.of({"README.md": (2, 1)}), "risk-based")
    data = decision.to_dict()
    assert data["required"] is False
    assert data["line"].startswith("Reviewer not required")
    assert data["reasons"]
    assert data["codes"] == ["minor"]
    assert "Reviewer not required" in decision._repr_html_()
    assert decision.pr_line("full").endswith("(path: full)")


@pytest.mark.parametrize(("path", "category"), [
    ("src/Auth/Login.PY", "authentication"), ("web/.env.production", "secrets"),
    ("db/migrate/20250301_add.rb", "migrations"), ("Cargo.lock", "dependencies"),
    ("deploy/k8s.yaml", "build-deploy"), ("clients/github.py", "external-services"),
    ("app/middleware/cookie_jar.py", "sessions"), ("CODEOWNERS", "permissions"),
])
def test_sensitive_patterns(path: str, category: str) -> None:
    assert category in {m.category for m in sensitive_matches([path])}


def test_ordinary_paths_are_not_sensitive() -> None:
    assert sensitive_matches(["src/reports/format.py", "docs/guide.md", "tests/test_x.py"]) == []


def test_project_patterns_and_replacing_defaults() -> None:
    policy = ReviewPolicy(policy="risk-based", sensitive={"billing": ("billing/",)},
                          replace_defaults=True)
    assert set(policy.patterns()) == {"billing"}
    decision = review_required(ChangeSummary.of({"src/auth.py": (1, 1)}), policy)
    assert decision.codes == ("minor",)


def test_unreadable_policy_file(tmp_path: Path) -> None:
    assert isinstance(load_review_policy(tmp_path / "missing.yaml"), Unreadable)
    decision = review_required(ChangeSummary(), load_review_policy(tmp_path / "missing.yaml"))
    assert decision.required
    assert decision.codes == ("unreadable_policy",)
