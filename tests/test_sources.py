"""Reading YAML with positions: safe_load semantics, and a clear error for every bad file."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from crewbook.errors import ConfigError, InvalidInputError, SchemaError
from crewbook.sources import (
    MAX_ALIAS_EXPANSION,
    MAX_DEPTH,
    MAX_YAML_BYTES,
    Position,
    format_key_path,
    iter_key_paths,
    parse_toml,
    parse_yaml,
    read_text,
    read_yaml,
)

ALIAS_BOMB = """\
a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
"""


def only_problem(exc: InvalidInputError):
    assert len(exc.problems) == 1, exc.problems
    return exc.problems[0]


# ------------------------------------------------------------------ positions


def test_every_key_and_item_has_its_line_and_column() -> None:
    doc = parse_yaml(
        "name: lite\nartifacts:\n  - id: brief\n    requires: [a, b]\n  - id: specs\n",
        "schema.yaml",
    )
    assert doc.data == {
        "name": "lite",
        "artifacts": [{"id": "brief", "requires": ["a", "b"]}, {"id": "specs"}],
    }
    assert doc.positions[("name",)] == Position(1, 1)
    assert doc.positions[("artifacts", 0)] == Position(3, 5)
    assert doc.positions[("artifacts", 0, "requires")] == Position(4, 5)
    assert doc.positions[("artifacts", 0, "requires", 1)] == Position(4, 19)
    assert doc.positions[("artifacts", 1, "id")] == Position(5, 5)
    assert doc.problems == []


def test_position_falls_back_to_the_nearest_ancestor() -> None:
    doc = parse_yaml("apply:\n  tracks: t.md\n", "s.yaml")
    assert doc.position(("apply", "requires")) == Position(1, 1)
    assert doc.position(("apply", "tracks", 3)) == Position(2, 3)
    problem = doc.problem("missing_key", "required", ("apply", "requires"))
    assert (problem.path, problem.line, problem.column, problem.key) == (
        "s.yaml",
        1,
        1,
        "apply.requires",
    )
    assert str(problem) == "s.yaml:1:1: apply.requires: required [missing_key]"


def test_format_key_path_and_iter_key_paths() -> None:
    assert format_key_path(("artifacts", 2, "requires")) == "artifacts[2].requires"
    assert format_key_path((0, "id")) == "[0].id"
    assert format_key_path(()) == ""
    assert list(iter_key_paths({"a": [{"b": 1}], "c": 2})) == [
        ("a",),
        ("a", 0),
        ("a", 0, "b"),
        ("c",),
    ]


def test_merge_keys_and_non_string_keys_are_read() -> None:
    doc = parse_yaml("base: &b {x: 1}\nchild:\n  <<: *b\n  y: 2\n1: one\n")
    assert doc.data == {"base": {"x": 1}, "child": {"x": 1, "y": 2}, 1: "one"}
    assert doc.positions[("1",)] == Position(5, 1)


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12),
)
documents = st.dictionaries(
    st.text("abcdefgh-_", min_size=1, max_size=8),
    st.recursive(
        scalars,
        lambda kids: (
            st.lists(kids, max_size=3)
            | st.dictionaries(st.text("xyz", min_size=1, max_size=3), kids, max_size=3)
        ),
        max_leaves=12,
    ),
    max_size=5,
)


@settings(max_examples=120, deadline=None, database=None)
@given(documents, st.sampled_from([False, True]))
def test_data_equals_yaml_safe_load(data, flow: bool) -> None:
    text = yaml.safe_dump(data, default_flow_style=flow, allow_unicode=True)
    doc = parse_yaml(text) if data else None
    if doc is not None:
        assert doc.data == yaml.safe_load(text)
        assert set(doc.positions) >= set(iter_key_paths(data))


# ------------------------------------------------------------ reading failures


def test_duplicate_keys_are_collected_not_raised() -> None:
    doc = parse_yaml("a: 1\nb:\n  c: 1\n  c: 2\na: 3\n", "d.yaml")
    assert [(p.code, p.line, p.column, p.key) for p in doc.problems] == [
        ("duplicate_key", 4, 3, "b.c"),
        ("duplicate_key", 5, 1, "a"),
    ]
    assert "appears twice" in doc.problems[0].message


@pytest.mark.parametrize("text", ["", "   \n\n", "# only a comment\n# and another\n", "---\n"])
def test_an_empty_file_is_one_clear_error(text: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        parse_yaml(text, "e.yaml")
    problem = only_problem(info.value)
    assert problem.code == "empty_file"
    assert problem.path == "e.yaml"


@pytest.mark.parametrize(
    ("text", "what"),
    [("- a\n- b\n", "a list"), ("just text\n", "a single value (str)"), ("42\n", "(int)")],
)
def test_a_non_mapping_document_is_refused(text: str, what: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        parse_yaml(text, "n.yaml")
    problem = only_problem(info.value)
    assert (problem.code, problem.line, problem.column) == ("not_a_mapping", 1, 1)
    assert what in problem.message
    assert parse_yaml(text, require_mapping=False).data == yaml.safe_load(text)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("a: [1, 2\nb: 3\n", 2),
        ("a: 1\n  b: 2\n", 2),
        ("a:\n\t- x\n", 2),
        ("a: 1\n---\nb: 2\n", 2),
        ("? [a, b]\n: 1\n", 1),
    ],
)
def test_malformed_yaml_is_yaml_syntax_with_its_line(text: str, line: int) -> None:
    with pytest.raises(InvalidInputError) as info:
        parse_yaml(text, "m.yaml")
    problem = only_problem(info.value)
    assert (problem.code, problem.line) == ("yaml_syntax", line)
    assert problem.message.startswith("invalid YAML")
    assert "m.yaml" in str(info.value)


@pytest.mark.parametrize(
    "text",
    [
        "a: !!python/object/apply:os.system ['echo pwned']\n",
        "a: !!python/name:os.system ''\n",
        "a: !!python/tuple [1, 2]\n",
        "a: !custom {x: 1}\n",
    ],
)
def test_python_and_unknown_tags_are_refused_as_safe_load_would(text: str) -> None:
    with pytest.raises(yaml.YAMLError):
        yaml.safe_load(text)
    with pytest.raises(InvalidInputError) as info:
        parse_yaml(text, "t.yaml")
    problem = only_problem(info.value)
    assert (problem.code, problem.line) == ("yaml_syntax", 1)


def test_explicit_standard_tags_are_fine() -> None:
    doc = parse_yaml("a: !!map {x: !!str 1}\nb: !!seq [!!int '2']\n")
    assert doc.data == {"a": {"x": "1"}, "b": [2]}


def test_the_error_class_is_the_one_the_caller_asks_for() -> None:
    with pytest.raises(SchemaError):
        parse_yaml("", error_cls=SchemaError)
    with pytest.raises(ConfigError):
        parse_yaml("- a\n", error_cls=ConfigError)


def test_an_alias_bomb_is_stopped_quickly(tmp_path: Path) -> None:
    file = tmp_path / "schema.yaml"
    file.write_text(ALIAS_BOMB)
    started = time.perf_counter()
    with pytest.raises(InvalidInputError) as info:
        read_yaml(file)
    assert time.perf_counter() - started < 10
    problem = only_problem(info.value)
    assert problem.code == "yaml_too_complex"
    assert f"{MAX_ALIAS_EXPANSION:,}" in problem.message


def test_a_few_honest_aliases_are_fine() -> None:
    doc = parse_yaml("x: &x [1, 2]\ny: *x\nz: *x\n")
    assert doc.data == {"x": [1, 2], "y": [1, 2], "z": [1, 2]}


def test_very_deep_nesting_is_a_clear_error() -> None:
    text = "a: " + "[" * 5000 + "]" * 5000 + "\n"
    with pytest.raises(InvalidInputError) as info:
        parse_yaml(text, "deep.yaml")
    assert only_problem(info.value).code in {"yaml_too_complex", "yaml_syntax"}


def test_a_50_mb_file_is_refused_before_reading(tmp_path: Path) -> None:
    file = tmp_path / "schema.yaml"
    line = b"- padding: a line of a generated file that is far too large\n"
    with file.open("wb") as out:
        out.write(line * (50 * 1024 * 1024 // len(line) + 1))
    assert file.stat().st_size > 50 * 1024 * 1024 > MAX_YAML_BYTES
    with pytest.raises(InvalidInputError) as info:
        read_yaml(file, display_path="big/schema.yaml")
    problem = only_problem(info.value)
    assert (problem.code, problem.path) == ("file_too_large", "big/schema.yaml")
    assert "the file is 50 MiB, over the limit of 2 MiB" in problem.message


def test_a_missing_file_a_folder_and_binary_data(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError) as info:
        read_yaml(tmp_path / "nope.yaml")
    assert only_problem(info.value).code == "file_not_found"
    with pytest.raises(InvalidInputError) as info:
        read_text(tmp_path, max_bytes=MAX_YAML_BYTES)
    assert only_problem(info.value).code == "not_a_file"
    binary = tmp_path / "b.yaml"
    binary.write_bytes(b"name: x\n\xff\xfe\x00")
    with pytest.raises(InvalidInputError) as info:
        read_yaml(binary)
    problem = only_problem(info.value)
    assert problem.code == "not_utf8"
    assert "byte 8" in problem.message


def test_a_utf8_bom_is_accepted(tmp_path: Path) -> None:
    file = tmp_path / "bom.yaml"
    file.write_bytes("\ufeffname: café\n".encode())
    assert read_yaml(file).data == {"name": "café"}


def test_display_path_names_the_file_in_every_problem(tmp_path: Path) -> None:
    file = tmp_path / "x.yaml"
    file.write_text("a: 1\na: 2\n")
    doc = read_yaml(file, display_path="_codev/x.yaml")
    assert doc.name == "_codev/x.yaml"
    assert doc.problems[0].location == "_codev/x.yaml:2:1"


# -- issue 12: hostile input is a located problem, never a library traceback ---------------


@pytest.mark.parametrize("text", [
    "a: !!float y", "a: !!timestamp x", "a: !!bool maybe", "a: !!int 1.5x",
    "a: !!timestamp 2025-13-45", "? !!set {a, b}\n: 1", "? [a, b]\n: 1", "? {a: 1}\n: 2",
    "a: !!set {x}", "a: !!omap [{x: 1}]",
])
def test_tags_and_odd_keys_are_yaml_problems(text: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        parse_yaml(text, "odd.yaml")
    problem = only_problem(info.value)
    assert problem.code == "yaml_syntax"
    assert (problem.path, problem.line) == ("odd.yaml", 1)
    assert str(problem)  # the formatter copes with the message


def test_a_key_holding_a_bracket_is_kept_and_located() -> None:
    doc = parse_yaml("a:\n  'b[0]': 1\n  c: 2\n")
    assert doc.data == {"a": {"b[0]": 1, "c": 2}}
    assert doc.position(("a", "b[0]")) == Position(2, 3)


def test_a_merge_then_an_override_is_legal() -> None:
    text = "base: &base {model: m1, effort: low}\nlocal:\n  <<: *base\n  effort: high\n"
    doc = parse_yaml(text)
    assert doc.problems == []
    assert doc.data["local"] == {"model": "m1", "effort": "high"}
    twice = parse_yaml("base: &b {x: 1}\nu: *b\nlocal:\n  <<: *b\n  x: 2\n  x: 3\n")
    assert [(p.code, p.line) for p in twice.problems] == [("duplicate_key", 6)]


def test_toml_deep_nesting_and_huge_numbers_are_problems() -> None:
    for text in ("a = " + "[" * 5000 + "]" * 5000, "a = " + "{b = " * 3000 + "1" + "}" * 3000,
                 "a = " + "[" * 70 + "]" * 70, "a = " + "9" * 5000):
        with pytest.raises(InvalidInputError) as info:
            parse_toml(text, "p.toml")
        assert only_problem(info.value).code == "toml_too_complex"


def test_yaml_nesting_past_the_limit_is_a_problem() -> None:
    text = "a: " + "[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2)
    with pytest.raises(InvalidInputError) as info:
        parse_yaml(text)
    assert only_problem(info.value).code == "yaml_too_complex"
    assert parse_yaml("a: " + "[" * 10 + "]" * 10).data["a"] == [[[[[[[[[[]]]]]]]]]]


@pytest.mark.parametrize("name", ["a\0b.md", "x" * 300, "\n.md", "d/" * 600 + "f"])
def test_a_file_name_the_os_refuses_is_a_problem(tmp_path: Path, name: str) -> None:
    from crewbook.models import path_defect

    assert path_defect(name)
    with pytest.raises(InvalidInputError) as info:
        read_text(tmp_path / name, max_bytes=MAX_YAML_BYTES)
    assert only_problem(info.value).code in {"unreadable", "file_not_found"}


def test_each_file_type_has_one_limit_said_in_mib(tmp_path: Path) -> None:
    from crewbook.pipeline import validate_pipeline
    from crewbook.sources import MAX_TOML_BYTES, MiB

    assert (2 * MiB, 1 * MiB) == (MAX_YAML_BYTES, MAX_TOML_BYTES)
    pipeline = tmp_path / "p.toml"
    pipeline.write_text("# padding\n" * (MAX_TOML_BYTES // 10 + 1))
    [problem] = validate_pipeline(pipeline)
    assert problem.code == "file_too_large"
    assert "over the limit of 1 MiB" in problem.message
    just_over = tmp_path / "s.yaml"
    just_over.write_bytes(b"#" * (MAX_YAML_BYTES + 1))
    with pytest.raises(InvalidInputError) as info:
        read_yaml(just_over)
    assert "the file is 2,097,153 bytes, over the limit of 2 MiB" in info.value.problems[
        0].message


def test_the_limits_in_the_docs_are_the_limits_in_the_code() -> None:
    from crewbook.sources import MAX_TEXT_BYTES, MAX_TOML_BYTES, format_size

    docs = (Path(__file__).parents[1] / "docs" / "hardening.md").read_text("utf-8")
    for kind, limit in (("YAML", MAX_YAML_BYTES), ("TOML", MAX_TOML_BYTES),
                        ("prompt", MAX_TEXT_BYTES)):
        row = next(line for line in docs.splitlines() if line.startswith("|") and kind in line)
        assert format_size(limit) in row, row
    assert f"{MAX_DEPTH} levels" in docs
