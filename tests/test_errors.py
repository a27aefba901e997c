"""The error family and `Problem`, the one shape every defect takes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from crewbook.errors import (
    AlreadyExistsError,
    ArtifactNotFoundError,
    ChangeNotFoundError,
    ConfigError,
    CrewbookError,
    InvalidInputError,
    LedgerError,
    LoopRefused,
    NotFoundError,
    PipelineError,
    Problem,
    ProjectNotFoundError,
    SchemaError,
    SchemaNotFoundError,
    UnsafePathError,
    did_you_mean,
    error_message,
    problems_html,
)


def test_problem_location_and_text() -> None:
    full = Problem("unknown_key", "unknown key 'x'", "s.yaml", 3, 5, "artifacts[0].x")
    assert full.location == "s.yaml:3:5"
    assert str(full) == "s.yaml:3:5: artifacts[0].x: unknown key 'x' [unknown_key]"
    assert Problem("c", "m", "f.yaml", 2).location == "f.yaml:2"
    assert Problem("c", "m", "f.yaml", None, 4).location == "f.yaml"
    assert str(Problem("c", "m")) == "<input>: m [c]"


def test_problem_to_dict_has_the_validate_json_keys() -> None:
    data = Problem("c", "m", "p", 1, 2, "k", "warning").to_dict()
    assert data == {
        "code": "c",
        "path": "p",
        "line": 1,
        "column": 2,
        "key": "k",
        "message": "m",
        "severity": "warning",
    }
    assert Problem("c", "m").severity == "error"


def test_problem_is_frozen() -> None:
    with pytest.raises(AttributeError):
        Problem("c", "m").code = "other"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("word", "candidates", "expected"),
    [
        ("requries", ["requires", "generates", "id"], "; did you mean 'requires'?"),
        ("desing", ["proposal", "design"], "; did you mean 'design'?"),
        ("zzz", ["proposal", "design"], ""),
        ("x", [], ""),
    ],
)
def test_did_you_mean(word: str, candidates: list[str], expected: str) -> None:
    assert did_you_mean(word, candidates) == expected


def test_invalid_input_lists_every_error_and_counts_them() -> None:
    problems = [
        Problem("a_code", "first", "f", 1),
        Problem("w_code", "just a warning", "f", 2, severity="warning"),
        Problem("b_code", "second", "f", 3),
    ]
    exc = SchemaError("schema 'x' is invalid", problems)
    text = str(exc)
    assert text.startswith("schema 'x' is invalid (2 problems):\n")
    assert "f:1: first [a_code]" in text
    assert "f:3: second [b_code]" in text
    assert "just a warning" not in text
    assert exc.codes == ["a_code", "b_code"]
    assert exc.problems == tuple(problems)
    assert str(SchemaError("bad", problems[:1])).startswith("bad (1 problem):")
    assert str(SchemaError("bad")) == "bad"


def test_invalid_input_shortens_a_very_long_list() -> None:
    exc = InvalidInputError("bad", [Problem("c", f"p{i}") for i in range(53)])
    text = str(exc)
    assert "(53 problems)" in text
    assert "p49 [c]" in text
    assert "p50 [c]" not in text
    assert text.endswith("… and 3 more")
    assert len(exc.problems) == 53


@pytest.mark.parametrize(
    ("cls", "bases"),
    [
        (InvalidInputError, (CrewbookError, ValueError)),
        (SchemaError, (InvalidInputError,)),
        (ConfigError, (InvalidInputError,)),
        (PipelineError, (InvalidInputError,)),
        (LedgerError, (InvalidInputError,)),
        (UnsafePathError, (CrewbookError, ValueError)),
        (NotFoundError, (CrewbookError, LookupError)),
        (ProjectNotFoundError, (NotFoundError, FileNotFoundError)),
        (ChangeNotFoundError, (NotFoundError, FileNotFoundError)),
        (SchemaNotFoundError, (NotFoundError, KeyError)),
        (ArtifactNotFoundError, (NotFoundError, KeyError)),
        (AlreadyExistsError, (CrewbookError, FileExistsError)),
        (LoopRefused, (CrewbookError, RuntimeError)),
    ],
)
def test_hierarchy(cls: type, bases: tuple[type, ...]) -> None:
    assert all(issubclass(cls, base) for base in bases)


def test_key_errors_print_their_message_unquoted() -> None:
    exc = ArtifactNotFoundError("schema 'lite' has no artifact 'x'")
    assert str(exc) == "schema 'lite' has no artifact 'x'"
    assert exc.message == str(exc)
    with pytest.raises(KeyError):
        raise exc


def test_already_exists_keeps_the_path_and_loop_refused_its_code() -> None:
    assert AlreadyExistsError("exists", Path("x")).path == Path("x")
    assert LoopRefused("no").code == "refused"
    assert LoopRefused("no", code="not_your_turn").code == "not_your_turn"


def test_html_escapes_every_field() -> None:
    problem = Problem("c<1>", "a <b> & c", "<f>", 1, 2, "k<")
    table = problems_html([problem, Problem("w", "m", severity="warning")])
    assert "<b>" not in table
    assert "a &lt;b&gt; &amp; c" in table
    assert "&lt;f&gt;:1:2" in table
    assert "⚠" in table
    assert "✖" in table
    assert problems_html([]) == "<p><b>No problems.</b></p>"
    html = SchemaError("bad <x>", [problem])._repr_html_()
    assert html.startswith("<div><b>SchemaError</b>: bad &lt;x&gt;")


@pytest.mark.parametrize(("exc", "expected"), [
    (LedgerError("line 3: bad json"), "line 3: bad json"),   # ours: the message alone
    (RuntimeError("styler broke"), "styler broke (RuntimeError)"),  # a bug: named after
    (KeyError("x"), "x (KeyError)"),                          # no quotes around the key
    (ValueError(), "ValueError"),                             # nothing else to say
])
def test_error_message_puts_the_message_first(exc: BaseException, expected: str) -> None:
    assert error_message(exc) == expected


def test_problem_tables_wrap_the_message_and_keep_codes_whole() -> None:
    problem = Problem("unknown_key", "an unknown key " * 6, "_codev/schemas/research/schema.yaml",
                      12, 5, "artifacts.design.requires")
    table = problems_html([problem])
    message = re.search(r"<td style='([^']*)'>an unknown key", table)
    assert message is not None
    assert "white-space:normal" in message.group(1), "the message wraps"
    assert "white-space:nowrap'><code>unknown_key<" in table, "a code never breaks"
    assert "schemas/<wbr>research/<wbr>schema.<wbr>yaml:12:5" in table, "a path after a /"
    assert "artifacts.<wbr>design.<wbr>requires" in table


def test_each_front_end_names_an_option_in_its_own_words() -> None:
    """An error naming an option keeps Python's words as its message (the API) and
    gives the command line's and MCP's on request; an option it does not name, or a
    word that only looks like one, is left alone."""
    from crewbook.errors import CrewError, option_words

    exc = AlreadyExistsError("exists; pass force=True (keep_going=True stays)",
                             Path("x")).naming("force")
    assert str(exc) == "exists; pass force=True (keep_going=True stays)"
    assert exc.said_to("python") == str(exc)
    assert exc.said_to("cli") == "exists; pass --force (keep_going=True stays)"
    assert exc.said_to("mcp") == 'exists; pass "force": true (keep_going=True stays)'
    assert exc.path == Path("x")
    plain = AlreadyExistsError("pass force=True")
    assert plain.said_to("cli") == "pass force=True"  # names no option: unchanged
    assert option_words("dry_run", "cli") == "--dry-run"
    assert option_words("dry_run", "mcp") == '"dry_run": true'
    with_problems = CrewError("bad state; start again with force=True").naming("force")
    assert with_problems.said_to("cli").endswith("start again with --force")
