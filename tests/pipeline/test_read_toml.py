"""`crewbook.sources.read_toml`: tomllib's data with the line and column of every key."""

from __future__ import annotations

from pathlib import Path

import pytest

from crewbook.errors import InvalidInputError, PipelineError
from crewbook.sources import Position, parse_toml, read_toml

from .conftest import SEED

TEXT = '''# a comment
id = "x"   # trailing
start = 'a'
"quoted key" = 1
dotted.key = true
multi = """
not = a key
"""

[table]
inner = [1, 2,
  3]  # arrays span lines

[[stages]]
id = "a"
produces = [{ name = "n", kind = "k" }, { name = "m", kind = "j" }]
needs = ["p", "q"]

[[stages]]
id = "b"

[stages.limits]
tokens = 5

[[stages.checks]]
cmd = "make"
'''


def test_positions_of_keys_tables_and_items(tmp_path: Path) -> None:
    doc = parse_toml(TEXT, tmp_path / "p.toml")
    pos = doc.positions
    assert pos[("id",)] == Position(2, 1)
    assert pos[("start",)] == Position(3, 1)
    assert pos[("quoted key",)] == Position(4, 1)
    assert pos[("dotted", "key")] == Position(5, 1)
    assert pos[("multi",)] == Position(6, 1)
    assert ("not",) not in pos  # inside a multi-line string
    assert pos[("table",)] == Position(10, 1)
    assert pos[("table", "inner", 2)] == Position(12, 3)
    assert pos[("stages", 0)] == Position(14, 1)
    assert pos[("stages", 0, "produces", 1, "kind")].line == 16
    assert pos[("stages", 0, "produces", 1, "kind")].column == 55
    assert pos[("stages", 0, "needs", 1)] == Position(17, 15)
    assert pos[("stages", 1, "id")] == Position(20, 1)
    assert pos[("stages", 1, "limits", "tokens")] == Position(23, 1)
    assert pos[("stages", 1, "checks", 0, "cmd")] == Position(26, 1)
    assert doc.data["stages"][1]["checks"][0]["cmd"] == "make"


def test_problem_is_located(tmp_path: Path) -> None:
    doc = parse_toml(TEXT, tmp_path / "p.toml", display_path="p.toml")
    problem = doc.problem("x", "bad", ("stages", 0, "needs", 1))
    assert str(problem) == "p.toml:17:15: stages[0].needs[1]: bad [x]"


def test_seed_positions() -> None:
    doc = read_toml(SEED)
    assert doc.position(("stages", 4, "needs")).line == 72  # type: ignore[union-attr]
    assert doc.data["transitions"][5]["condition_operator"] == "neq"


@pytest.mark.parametrize(("text", "line", "column"), [
    ('id = "x"\nstart = \n', 2, 9),
    ('id = "x"\nid = "y"\n', 2, 9),
    ('[[stages]]\nid = "a"\n[stages]\n', 3, 8),
    ('id = "unterminated\n', 1, 19),
])
def test_syntax_errors_carry_line_and_column(text: str, line: int, column: int) -> None:
    with pytest.raises(PipelineError) as info:
        parse_toml(text, "p.toml", error_cls=PipelineError)
    problem = info.value.problems[0]
    assert problem.code == "toml_syntax"
    assert (problem.line, problem.column) == (line, column)
    assert "(at line" not in problem.message


def test_empty_and_missing_files(tmp_path: Path) -> None:
    empty = tmp_path / "e.toml"
    empty.write_text("# only a comment\n")
    with pytest.raises(InvalidInputError) as info:
        read_toml(empty)
    assert info.value.codes == ["empty_file"]
    with pytest.raises(InvalidInputError) as info:
        read_toml(tmp_path / "none.toml")
    assert info.value.codes == ["file_not_found"]


def test_error_at_end_of_document() -> None:
    with pytest.raises(InvalidInputError) as info:
        parse_toml('a = [1,\n', "p.toml")
    assert info.value.problems[0].line is not None
