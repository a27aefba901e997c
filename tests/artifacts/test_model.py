"""The strict file models of SPEC A: schema.yaml, config.yaml, change.yaml."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from crewbook.artifacts.model import (
    ApplySpec,
    ArtifactRole,
    ArtifactSpec,
    ChangeFile,
    ProjectConfig,
    RoleName,
    SchemaFile,
)


def schema(**over: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "lite",
        "artifacts": [{"id": "tasks", "generates": "tasks.md"}],
        "apply": {"requires": ["tasks"], "tracks": "tasks.md"},
    }
    data.update(over)
    return data


def error_types(exc: ValidationError) -> list[tuple[tuple[Any, ...], str]]:
    return [(tuple(e["loc"]), e["type"]) for e in exc.errors()]


def test_defaults() -> None:
    model = SchemaFile.model_validate(schema())
    assert model.version == 1
    assert model.description is None
    art = model.artifacts[0]
    assert (art.requires, art.role, art.template, art.instruction) == ((), None, None, None)
    assert model.apply.instruction is None


def test_models_are_frozen() -> None:
    model = SchemaFile.model_validate(schema())
    with pytest.raises(ValidationError):
        model.name = "other"
    with pytest.raises(ValidationError):
        model.artifacts[0].generates = "x.md"


@pytest.mark.parametrize(
    ("over", "loc", "kind"),
    [
        ({"version": "1"}, ("version",), "int_type"),
        ({"version": True}, ("version",), "int_type"),
        ({"version": 1.5}, ("version",), "int_type"),
        ({"version": -3}, ("version",), "greater_than"),
        ({"name": "Lite"}, ("name",), "string_pattern_mismatch"),
        ({"name": 5}, ("name",), "string_type"),
        ({"artifacts": []}, ("artifacts",), "too_short"),
        ({"descripton": "x"}, ("descripton",), "extra_forbidden"),
        (
            {"apply": {"requires": ["tasks"], "tracks": "tasks.md", "x": 1}},
            ("apply", "x"),
            "extra_forbidden",
        ),
        (
            {"apply": {"requires": ["tasks"], "tracks": "t/*.md"}},
            ("apply", "tracks"),
            "invalid_value",
        ),
        ({"apply": {"requires": ["tasks"], "tracks": "/t.md"}}, ("apply", "tracks"), "unsafe_path"),
        ({"apply": {"tracks": "tasks.md"}}, ("apply", "requires"), "missing"),
    ],
)
def test_schema_rules(over: dict[str, Any], loc: tuple[Any, ...], kind: str) -> None:
    with pytest.raises(ValidationError) as info:
        SchemaFile.model_validate(schema(**over))
    assert (loc, kind) in error_types(info.value)


@pytest.mark.parametrize(
    ("artifact", "loc", "kind"),
    [
        ({"id": "a"}, ("generates",), "missing"),
        ({"generates": "a.md"}, ("id",), "missing"),
        ({"id": "a", "generates": "../a.md"}, ("generates",), "unsafe_path"),
        ({"id": "a", "generates": ""}, ("generates",), "string_too_short"),
        ({"id": "a", "generates": "a.md", "template": "t/*.md"}, ("template",), "invalid_value"),
        ({"id": "a", "generates": "a.md", "template": "/t.md"}, ("template",), "unsafe_path"),
        ({"id": "a", "generates": "a.md", "requires": "b"}, ("requires",), "tuple_type"),
        (
            {"id": "a", "generates": "a.md", "requires": ["B"]},
            ("requires", 0),
            "string_pattern_mismatch",
        ),
        ({"id": "a", "generates": "a.md", "requries": ["b"]}, ("requries",), "extra_forbidden"),
    ],
)
def test_artifact_rules(artifact: dict[str, Any], loc: tuple[Any, ...], kind: str) -> None:
    with pytest.raises(ValidationError) as info:
        ArtifactSpec.model_validate(artifact)
    assert (loc, kind) in error_types(info.value)


def test_a_glob_is_a_valid_generates() -> None:
    art = ArtifactSpec.model_validate({"id": "specs", "generates": "specs/**/*.md"})
    assert art.generates == "specs/**/*.md"


def test_role_names_by_language_with_english_fallback() -> None:
    role = ArtifactRole.model_validate(
        {
            "id": "editor",
            "name": {"en": "Editor", "fr": "Rédacteur"},
            "question": "Clear?",
            "done_when": ["One page"],
        }
    )
    assert role.name.for_language("fr") == "Rédacteur"
    assert role.name.for_language("de") == "Editor"
    assert role.name.for_language("en") == "Editor"
    assert role.name.languages == {"en": "Editor", "fr": "Rédacteur"}
    assert role.done_when == ("One page",)


@pytest.mark.parametrize(
    ("role", "loc", "kind"),
    [
        ({"id": "r", "name": {"fr": "R"}, "question": "Q?"}, ("name", "en"), "missing"),
        ({"id": "r", "name": {"en": ""}, "question": "Q?"}, ("name", "en"), "string_too_short"),
        (
            {"id": "r", "name": {"en": "R", "fr": 3}, "question": "Q?"},
            ("name", "fr"),
            "string_type",
        ),
        ({"id": "r", "name": "R", "question": "Q?"}, ("name",), "model_type"),
        ({"id": "r", "name": {"en": "R"}}, ("question",), "missing"),
        ({"id": "r", "name": {"en": "R"}, "question": ""}, ("question",), "string_too_short"),
        ({"id": "R r", "name": {"en": "R"}, "question": "Q?"}, ("id",), "string_pattern_mismatch"),
        (
            {"id": "r", "name": {"en": "R"}, "question": "Q?", "done_wen": []},
            ("done_wen",),
            "extra_forbidden",
        ),
    ],
)
def test_role_rules(role: dict[str, Any], loc: tuple[Any, ...], kind: str) -> None:
    with pytest.raises(ValidationError) as info:
        ArtifactRole.model_validate(role)
    assert (loc, kind) in error_types(info.value)


def test_role_name_alone() -> None:
    assert RoleName.model_validate({"en": "X"}).languages == {"en": "X"}


def test_apply_needs_requires_and_tracks() -> None:
    with pytest.raises(ValidationError) as info:
        ApplySpec.model_validate({})
    assert sorted(error_types(info.value)) == [(("requires",), "missing"), (("tracks",), "missing")]


def test_project_config() -> None:
    config = ProjectConfig.model_validate(
        {
            "schema": "lite",
            "rules": {"brief": ["Name the ticket"]},
            "roles": {"skeptic": {"enabled": False}, "editor": {"done_when": ["Links it"]}},
            "decisions": [{"decision": "UTF-8 with BOM", "id": "D-1"}],
        }
    )
    assert config.schema_ == "lite"
    assert config.rules == {"brief": ("Name the ticket",)}
    assert config.roles["skeptic"].enabled is False
    assert config.roles["editor"].enabled is True
    assert config.decisions[0].reason is None
    assert ProjectConfig().schema_ is None
    with pytest.raises(ValidationError):
        ProjectConfig.model_validate({"rules": {"Brief": ["x"]}})
    with pytest.raises(ValidationError):
        ProjectConfig.model_validate({"roles": {"editor": {"enable": False}}})
    with pytest.raises(ValidationError):
        ProjectConfig.model_validate({"decisions": [{"reason": "no decision"}]})


def test_change_file() -> None:
    change = ChangeFile.model_validate({"schema": "lite", "created": "2026-11-20"})
    assert (change.schema_, change.skip_specs) == ("lite", False)
    with pytest.raises(ValidationError) as info:
        ChangeFile.model_validate({"created": "2026-11-20"})
    assert error_types(info.value) == [(("schema",), "missing")]
    with pytest.raises(ValidationError):
        ChangeFile.model_validate({"schema": "lite", "skip-specs": True})
