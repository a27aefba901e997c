"""Shared pieces of crewbook's strict file models, and pydantic errors as `Problem`s.

Every file model derives from `FileModel` (unknown keys rejected, frozen). Field
validators raise `PydanticCustomError` whose type is one of our problem codes, so
`problems_from_validation` can pass the code through unchanged.
"""

from __future__ import annotations

import re
import types
import typing
from pathlib import PurePosixPath, PureWindowsPath
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from .errors import Problem, did_you_mean
from .sources import SourceDoc, format_key_path

KEBAB_CASE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
GLOB_CHARS = frozenset("*?[")


class FileModel(BaseModel):
    """Base of the models that describe files: strict about keys, frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def path_defect(value: str) -> str | None:
    """Why `value` is not a relative path that stays inside its folder, or None."""
    if not value.strip():
        return "the path is empty"
    if "\\" in value:
        return "use forward slashes ('/') in paths"
    if value[0] != "/" and ":" not in value:  # the common case, without pathlib
        segments = value.split("/")
        if ".." not in segments and any(s not in ("", ".") for s in segments):
            return None
    posix, windows = PurePosixPath(value), PureWindowsPath(value)
    if posix.is_absolute() or windows.is_absolute() or windows.drive:
        return "the path is absolute; it must be relative to its folder"
    if ".." in posix.parts:
        return "the path climbs out with '..'; it must stay inside its folder"
    if posix.parts in ((), (".",)):
        return "the path names the folder itself, not a file in it"
    return None


def _relative(value: str) -> str:
    defect = path_defect(value)
    if defect:
        raise PydanticCustomError(
            "unsafe_path", "'{value}': {defect}", {"value": value, "defect": defect}
        )
    return value


def _no_glob(value: str) -> str:
    if GLOB_CHARS & set(value):
        raise PydanticCustomError(
            "invalid_value",
            "'{value}' is a glob; this key needs one file path",
            {"value": value},
        )
    return value


def is_glob(pattern: str) -> bool:
    """Whether a `generates` value is a glob rather than one file."""
    return bool(GLOB_CHARS & set(pattern))


KebabId = Annotated[str, Field(strict=True, min_length=1, pattern=KEBAB_CASE.pattern)]
RelativePath = Annotated[str, Field(strict=True, min_length=1), AfterValidator(_relative)]
RelativeFile = Annotated[RelativePath, AfterValidator(_no_glob)]
Text = Annotated[str, Field(strict=True)]

_TYPE_NAMES = {
    "string_type": "text",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list",
    "tuple_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "float_type": "a number",
}


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"{str(value).lower()}"
    return f"{type(value).__name__} {value!r}"


def _model_at(model: type[BaseModel], loc: tuple[str | int, ...]) -> type[BaseModel] | None:
    """The model class describing the mapping found at `loc`, if any."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        field = current.model_fields.get(str(part))
        if field is None:
            return None
        current = _unwrap_model(field.annotation)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _unwrap_model(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _unwrap_model(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType, list, tuple, dict) or origin is not None:
        for arg in typing.get_args(annotation):
            found = _unwrap_model(arg)
            if found is not None:
                return found
    return None


def field_names(model: type[BaseModel]) -> list[str]:
    """The keys a model accepts (aliases where set)."""
    return [f.alias or name for name, f in model.model_fields.items()]


def problems_from_validation(
    exc: ValidationError, doc: SourceDoc, model: type[BaseModel]
) -> list[Problem]:
    """Translate pydantic's errors into located, coded problems with advice."""
    problems: list[Problem] = []
    for err in exc.errors(include_url=False):
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and "[" in p))
        kind = err["type"]
        if kind == "extra_forbidden":
            parent = _model_at(model, loc[:-1])
            key = str(loc[-1])
            allowed = field_names(parent) if parent else []
            hint = did_you_mean(key, allowed) or (
                f"; allowed keys: {', '.join(allowed)}" if allowed else ""
            )
            problems.append(doc.problem("unknown_key", f"unknown key {key!r}{hint}", loc))
        elif kind == "missing":
            where = format_key_path(loc[:-1]) or "the top level"
            problems.append(
                doc.problem("missing_key", f"required key {loc[-1]!r} is missing from {where}", loc)
            )
        elif kind in _TYPE_NAMES:
            problems.append(
                doc.problem(
                    "wrong_type",
                    f"expected {_TYPE_NAMES[kind]}, found {_describe(err.get('input'))}",
                    loc,
                )
            )
        elif kind == "string_pattern_mismatch":
            problems.append(
                doc.problem(
                    "invalid_id",
                    f"{err.get('input')!r} is not kebab-case: use lowercase letters, digits "
                    "and single hyphens, such as 'user-auth'",
                    loc,
                )
            )
        elif kind in ("too_short",):
            given, needed = err.get("input"), err.get("ctx", {}).get("min_length", 1)
            if isinstance(given, (list, tuple, dict)) and len(given) >= needed:
                continue  # items were given but failed: their own errors say why
            problems.append(doc.problem("empty_list", "needs at least one item", loc))
        elif kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
            problems.append(doc.problem("invalid_value", err["msg"].lower(), loc))
        elif kind == "string_too_short":
            problems.append(doc.problem("invalid_value", "must not be empty", loc))
        elif kind in ("literal_error", "enum"):
            problems.append(
                doc.problem(
                    "invalid_value",
                    f"{err.get('input')!r} is not allowed: {err['msg'].lower()}",
                    loc,
                )
            )
        else:
            problems.append(doc.problem(kind, err["msg"], loc))
    return problems


def parse_model(model: type[BaseModel], doc: SourceDoc) -> tuple[BaseModel | None, list[Problem]]:
    """Validate `doc.data` against `model`: the instance (or None) and its problems."""
    try:
        return model.model_validate(doc.data), []
    except ValidationError as exc:
        return None, problems_from_validation(exc, doc, model)
