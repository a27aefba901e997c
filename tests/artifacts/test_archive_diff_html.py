"""The archive preview's side-by-side diff: a long line stays in one row and wraps
between its words inside the cell's width (difflib's wrapcolumn cut words across rows)."""

from __future__ import annotations

import re

from crewbook.artifacts.archive_view import side_by_side_html

LONG = ("The system SHALL export every invoice of the selected period as one CSV file "
        "with a header row, UTF-8 without BOM, and amounts in the account's currency")


def rows(table: str) -> list[list[str]]:
    """The text cells of each body row (tags dropped)."""
    body = table.split("<tbody>", 1)[1]
    return [[re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def test_a_long_line_is_one_row_and_wraps_between_words() -> None:
    table = side_by_side_html(f"# Spec\n{LONG}\nend\n", f"# Spec\n{LONG} too\nend\n")
    changed = [r for r in rows(table) if LONG in r[1]]
    assert len(changed) == 1, "the whole line in one row, not cut at column 60"
    assert changed[0][3] == f"{LONG} too"
    assert "nowrap" not in table
    assert "&nbsp;" not in table, "spaces are break opportunities"
    assert "pre-wrap" in table, "indentation kept, lines wrap at spaces"
    assert "table-layout:fixed;width:100%" in table, "as wide as the cell, halves shared"


def test_marks_are_inline_and_the_bytes_stable() -> None:
    first = side_by_side_html("a\nb\n", "a\nc\n")
    assert first == side_by_side_html("a\nb\n", "a\nc\n"), "no counter in the ids"
    assert " id=" not in first
    assert "background:#" in first, "changes coloured without a <style> block"
