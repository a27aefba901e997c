"""Shared model pieces: safe relative paths, kebab ids, and pydantic errors as coded problems."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import BaseModel, Field, ValidationError

from crewbook.models import (
    KEBAB_CASE,
    FileModel,
    KebabId,
    RelativeFile,
    RelativePath,
    Text,
    field_names,
    is_glob,
    parse_model,
    path_defect,
    problems_from_validation,
)
from crewbook.sources import parse_yaml


@pytest.mark.parametrize(
    ("value", "defect"),
    [
        ("", "empty"),
        ("  ", "empty"),
        ("specs\\a.md", "forward slashes"),
        ("/etc/passwd", "absolute"),
        ("C:/x.md", "absolute"),
        ("c:x.md", "absolute"),
        ("//server/share/x.md", "absolute"),
        ("..", "'..'"),
        ("../x.md", "'..'"),
        ("a/../../x.md", "'..'"),
        ("a/..", "'..'"),
        (".", "folder itself"),
        ("./", "folder itself"),
    ],
)
def test_path_defects(value: str, defect: str) -> None:
    found = path_defect(value)
    assert found is not None
    assert defect in found


@pytest.mark.parametrize(
    "value", ["proposal.md", "specs/**/*.md", "a/b/c.md", "./tasks.md", "..hidden.md", "a..b/c.md"]
)
def test_safe_paths(value: str) -> None:
    assert path_defect(value) is None


@pytest.mark.parametrize(
    ("value", "glob"),
    [("tasks.md", False), ("specs/**/*.md", True), ("n-?.md", True), ("[ab].md", True)],
)
def test_is_glob(value: str, glob: bool) -> None:
    assert is_glob(value) is glob


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("a", True),
        ("user-auth", True),
        ("v2", True),
        ("2-b", True),
        ("A", False),
        ("a_b", False),
        ("a--b", False),
        ("-a", False),
        ("a-", False),
        ("a b", False),
        ("", False),
    ],
)
def test_kebab_case(value: str, ok: bool) -> None:
    assert bool(KEBAB_CASE.match(value)) is ok


class Inner(FileModel):
    id: KebabId
    path: RelativeFile | None = None


class Outer(FileModel):
    name: Text
    count: Annotated[int, Field(strict=True, gt=0)] = 1
    items: tuple[Inner, ...] = Field(min_length=1)
    where: RelativePath = "x.md"
    flag: bool = False


def problems(text: str):
    doc = parse_yaml(text, "f.yaml")
    model, found = parse_model(Outer, doc)
    return model, [(p.code, p.line, p.key) for p in found], found


def test_a_valid_file_gives_the_model_and_no_problem() -> None:
    model, found, _ = problems("name: n\nitems: [{id: a, path: a.md}]\n")
    assert found == []
    assert isinstance(model, Outer)
    with pytest.raises(ValidationError):
        model.name = "other"  # frozen


def test_unknown_keys_suggest_the_nearest_key_at_their_level() -> None:
    _, found, raw = problems("name: n\nitmes: []\nitems:\n  - {id: a, pth: a.md}\n")
    assert sorted(found) == [("unknown_key", 2, "itmes"), ("unknown_key", 4, "items[0].pth")]
    messages = {p.key: p.message for p in raw}
    assert messages["itmes"] == "unknown key 'itmes'; did you mean 'items'?"
    assert messages["items[0].pth"] == "unknown key 'pth'; did you mean 'path'?"


def test_an_unknown_key_with_no_near_match_lists_the_allowed_keys() -> None:
    _, _, raw = problems("name: n\nitems: [{id: a}]\nzzzzzz: 1\n")
    assert raw[0].message == "unknown key 'zzzzzz'; allowed keys: name, count, items, where, flag"


@pytest.mark.parametrize(
    ("text", "expected", "message"),
    [
        (
            "items: [{id: a}]\n",
            ("missing_key", 1, "name"),
            "required key 'name' is missing from the top level",
        ),
        (
            "name: n\nitems: [{path: a.md}]\n",
            ("missing_key", 2, "items[0].id"),
            "required key 'id' is missing from items[0]",
        ),
        ("name: 3\nitems: [{id: a}]\n", ("wrong_type", 1, "name"), "expected text, found int 3"),
        (
            "name: n\ncount: '2'\nitems: [{id: a}]\n",
            ("wrong_type", 2, "count"),
            "expected an integer, found str '2'",
        ),
        (
            "name: n\ncount: true\nitems: [{id: a}]\n",
            ("wrong_type", 2, "count"),
            "expected an integer, found true",
        ),
        (
            "name: n\ncount: 0\nitems: [{id: a}]\n",
            ("invalid_value", 2, "count"),
            "input should be greater than 0",
        ),
        (
            "name: n\nitems: {id: a}\n",
            ("wrong_type", 2, "items"),
            "expected a list, found a mapping",
        ),
        ("name: n\nitems: []\n", ("empty_list", 2, "items"), "needs at least one item"),
        (
            "name: n\nitems: [{id: Big}]\n",
            ("invalid_id", 2, "items[0].id"),
            "'Big' is not kebab-case",
        ),
        (
            "name: n\nitems: [{id: a}]\nwhere: ../x\n",
            ("unsafe_path", 3, "where"),
            "'../x': the path climbs out",
        ),
        (
            "name: n\nitems: [{id: a, path: '*.md'}]\n",
            ("invalid_value", 2, "items[0].path"),
            "'*.md' is a glob",
        ),
        (
            "name: n\nitems: [{id: a}]\nflag: maybe\n",
            ("wrong_type", 3, "flag"),
            "expected true or false",
        ),
        (
            "name: n\nitems: [{id: a}]\nwhere: ''\n",
            ("invalid_value", 3, "where"),
            "must not be empty",
        ),
        (
            "name: n\nitems: [{id: a}]\nwhere: null\n",
            ("wrong_type", 3, "where"),
            "found nothing (null)",
        ),
    ],
)
def test_each_pydantic_error_becomes_a_coded_located_problem(
    text: str, expected: tuple[str, int, str], message: str
) -> None:
    model, found, raw = problems(text)
    assert model is None
    assert found == [expected]
    assert message in raw[0].message


def test_a_list_whose_only_item_is_invalid_is_not_called_empty() -> None:
    _, found, _ = problems("name: n\nitems:\n  - {id: a, bad: 1}\n")
    assert found == [("unknown_key", 3, "items[0].bad")]


def test_every_problem_is_collected_in_one_pass() -> None:
    _, found, _ = problems("name: 1\ncount: 0\nitems: [{id: A}, {id: b, x: 1}]\nextra: 2\n")
    assert sorted((line, code) for code, line, _ in found) == [
        (1, "wrong_type"),
        (2, "invalid_value"),
        (3, "invalid_id"),
        (3, "unknown_key"),
        (4, "unknown_key"),
    ]


def test_problems_from_validation_passes_custom_codes_through() -> None:
    class M(BaseModel):
        where: RelativePath

    doc = parse_yaml("where: /abs\n", "m.yaml")
    with pytest.raises(ValidationError) as info:
        M.model_validate(doc.data)
    [problem] = problems_from_validation(info.value, doc, M)
    assert (problem.code, problem.path, problem.line, problem.column) == (
        "unsafe_path",
        "m.yaml",
        1,
        1,
    )


def test_field_names_use_aliases() -> None:
    class Aliased(FileModel):
        schema_: str = Field(alias="schema")
        other: int = 0

    assert field_names(Aliased) == ["schema", "other"]
    assert Aliased.model_validate({"schema": "x"}).schema_ == "x"
