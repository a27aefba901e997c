"""docs/delivery.md agrees with the code: its example runs, its tables match the data."""

from __future__ import annotations

import re
from pathlib import Path

from crewbook.delivery import Limits, builtin_catalogue
from crewbook.delivery.model import DEFAULT_LAUNCHES, SENSITIVE

DOC = (Path(__file__).resolve().parents[2] / "docs" / "delivery.md").read_text("utf-8")


def test_the_example_runs(capsys: object) -> None:
    block = re.search(r"```python\n(.*?)```", DOC, re.S)
    assert block is not None
    namespace: dict[str, object] = {}
    exec(block.group(1), namespace)
    outcome = namespace["loop"].outcome  # type: ignore[attr-defined]
    assert outcome.kind == "pull_request"


def test_roles_table_matches_the_catalogue() -> None:
    rows = re.findall(r"^\| `([a-z-]+)` \| [^|]+ \| [^|]+\(`([a-z-]+)`\) \| (\*\*yes\*\*|no) \|",
                      DOC, re.M)
    cat = builtin_catalogue()
    assert [r for r, _, _ in rows] == list(cat.ids)
    for role, stage, writes in rows:
        assert cat[role].stage == stage
        assert cat[role].writes is (writes == "**yes**")


def test_limits_table_matches_the_defaults() -> None:
    limits = Limits()
    for name in ("plan_revisions", "steps", "duration_minutes", "wait_minutes",
                 "quick_fix_steps"):
        row = next(line for line in DOC.splitlines() if line.startswith(f"| `{name}`"))
        assert f"| {getattr(limits, name)}" in row, row
    launches = next(line for line in DOC.splitlines() if line.startswith("| `launches`"))
    for role, count in DEFAULT_LAUNCHES.items():
        assert f"{role} {count}" in launches


def test_sensitive_categories_are_documented() -> None:
    for category, patterns in SENSITIVE.items():
        row = next(line for line in DOC.splitlines() if line.startswith(f"| `{category}`"))
        for pattern in re.findall(r"`([^`]+)`", row.split("|")[2]):
            assert pattern in patterns, (category, pattern)
