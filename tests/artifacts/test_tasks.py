"""The checklist parser of `apply.tracks` files (artifacts/checklist.py)."""

from __future__ import annotations

from crewbook.artifacts.checklist import parse_tasks


def test_parse_tasks_edge_cases() -> None:
    assert parse_tasks("") == []
    items = parse_tasks("```\n- [ ] never closed fence\n")
    assert items == []
    items = parse_tasks("- [ ] 3. Trailing dot id\n- [x]   spaced   \n")
    assert [(t.id, t.text, t.done) for t in items] == [
        ("3", "3. Trailing dot id", False),
        ("2", "spaced", True),
    ]


def test_sections_lines_and_explicit_ids() -> None:
    text = "# Plan\n\n## 1. Build\n- [x] 1.1 Writer\n* [ ] 1.2 Reader\n\n## 2. Ship\n+ [X] Tag\n"
    items = parse_tasks(text)
    assert [(t.index, t.id, t.done, t.section, t.line) for t in items] == [
        (1, "1.1", True, "1. Build", 4),
        (2, "1.2", False, "1. Build", 5),
        (3, "3", True, "2. Ship", 8),
    ]
