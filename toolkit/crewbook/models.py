"""Shared pieces of crewbook's strict file models, and pydantic errors as `Problem`s.

Every file model derives from `FileModel` (unknown keys rejected, frozen). Field
validators raise `PydanticCustomError` whose type is one of our problem codes, so
`problems_from_validation` can pass the code through unchanged.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Sequence
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from .errors import Problem, UnsafePathError, did_you_mean
from .sources import SourceDoc, format_key_path

KEBAB_CASE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
GLOB_CHARS = frozenset("*?[")


class FileModel(BaseModel):
    """Base of the models that describe files: strict about keys, frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


#: The config of the models a loop persists (its state, settings): unknown keys
#: rejected, frozen.
FROZEN = ConfigDict(extra="forbid", frozen=True)

#: A run id or a change name that becomes part of a path (a prompt file, a change
#: folder): one file name, no folder separator, no leading dot, at most 128 characters.
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def safe_name(value: str | None, what: str) -> str | None:
    """`value` when it can name one file under its folder; a pydantic error otherwise, so
    a hostile ``run: ../../x`` in a state file never becomes a path outside the project."""
    if value is None or SAFE_NAME.fullmatch(value):
        return value
    shown = value if len(value) <= 60 else value[:50] + "…"
    raise PydanticCustomError(
        "unsafe_path", "{what} {shown} cannot name a file: use letters, digits, '.', '_' "
        "and '-' (at most 128, no '/' and no leading '.'); the loop writes and reads "
        "paths made from it", {"what": what, "shown": repr(shown)})  # no !r in pydantic


def model_data(model: BaseModel) -> dict[str, Any]:
    """JSON-ready data of a model (what its JSON file or an event's payload holds)."""
    data: dict[str, Any] = model.model_dump(mode="json")
    return data


def pydantic_problems(exc: ValidationError, shown: str | None = None) -> list[Problem]:
    """One `Problem` per pydantic error of arguments given in code (no file to locate),
    keyed by its location."""
    out = []
    for err in exc.errors(include_url=False):
        key = ".".join(str(p) for p in err["loc"]) or None
        out.append(Problem("invalid_value", str(err["msg"]).removeprefix("Value error, "),
                           shown, key=key))
    return out


#: Longest path accepted in a file (bytes of UTF-8), and longest part of one: what
#: every common file system allows (PATH_MAX 4096 is far beyond any real path).
MAX_PATH_BYTES = 1024
MAX_NAME_BYTES = 255


def path_defect(value: str) -> str | None:
    """Why `value` is not a relative path that stays inside its folder, or None.

    Besides escapes (absolute, ``..``), a path the operating system would refuse is a
    defect here, so no reader meets an OSError or ValueError later: a NUL or other
    control character, a part longer than 255 bytes, a path longer than 1024 bytes.
    """
    if not value.strip():
        return "the path is empty"
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        return "the path holds a control character (such as NUL or a newline)"
    if any(0xD800 <= ord(c) <= 0xDFFF for c in value):
        return "the path holds a lone surrogate, which no file system accepts"
    if len(value.encode("utf-8")) > MAX_PATH_BYTES:
        return f"the path is longer than {MAX_PATH_BYTES} bytes"
    if any(len(part.encode("utf-8")) > MAX_NAME_BYTES for part in value.split("/")):
        return f"a part of the path is longer than {MAX_NAME_BYTES} bytes"
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


def shown(value: str, limit: int = 80) -> str:
    """`value` quoted for a message: control characters escaped, cut at `limit`."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in value)
    return "'" + text[:limit] + ("…" if len(text) > limit else "") + "'"


def _relative(value: str) -> str:
    defect = path_defect(value)
    if defect:
        raise PydanticCustomError(
            "unsafe_path", "{value}: {defect}", {"value": shown(value), "defect": defect}
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


def contained(folder: Path, relative: str) -> Path | None:
    """`folder / relative` if it exists and, links followed, stays inside `folder`;
    None when it does not exist; `UnsafePathError` when a link leads outside.

    `relative` must already pass `path_defect` (the models check it).
    """
    target = folder / relative
    try:
        if not target.exists():
            return None
        inside = target.resolve().is_relative_to(folder.resolve())
    except (OSError, ValueError, RuntimeError):  # a loop of links, a name the OS refuses
        return None
    if not inside:
        raise UnsafePathError(
            f"{relative!r} is a link that leads outside {folder.name}/; copy the file in "
            "instead of linking to it")
    return target


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
    if isinstance(value, int) and value.bit_length() > 64:
        return f"a number of about {int(value.bit_length() * 0.30103) + 1:,} digits"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 80 else text[:79] + '…'}"


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


def data_loc(loc: Sequence[str | int], data: Any) -> tuple[str | int, ...]:
    """Pydantic's error location as a key path into `data`.

    Pydantic adds steps of its own to a location (``function-after[...]``,
    ``list[str]``, ``int``, tagged-union names); a step is kept when it is a key or
    index of the data at that point, so a user's key that contains ``[`` or looks like a
    type name stays, and pydantic's own steps go.
    """
    out: list[str | int] = []
    current: Any = data
    for part in loc:
        if isinstance(current, dict) and part in current:
            out.append(part if isinstance(part, str) else str(part))  # as the reader keys it
            current = current[part]
        elif (isinstance(current, list | tuple) and isinstance(part, int)
                and -len(current) <= part < len(current)):
            out.append(part)
            current = current[part]
        elif isinstance(current, dict) and isinstance(part, str) and "[" not in part \
                and not _is_type_step(part):
            out.append(part)  # a missing key, or one pydantic names (extra, alias)
            current = None
        elif current is None and isinstance(part, str) and "[" not in part \
                and not _is_type_step(part):
            out.append(part)
        # else: pydantic's own step (a union member, a validator): not in the file
    return tuple(out)


_TYPE_STEPS = frozenset({"str", "int", "float", "bool", "list", "dict", "tuple", "set",
                         "none", "bytes", "constrained-str", "constrained-int"})


def _is_type_step(part: str) -> bool:
    return part in _TYPE_STEPS or part.startswith(("function-", "lax-", "json-or-python"))


def problems_from_validation(
    exc: ValidationError, doc: SourceDoc, model: type[BaseModel]
) -> list[Problem]:
    """Translate pydantic's errors into located, coded problems with advice."""
    problems: list[Problem] = []
    for err in exc.errors(include_url=False):
        loc = data_loc(err["loc"], doc.data)
        kind = err["type"]
        if not loc and kind in ("extra_forbidden", "missing"):
            kind = "invalid"  # cannot happen on a mapping; say it plainly if it does
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
        elif kind in ("less_than", "less_than_equal") and "le" in err.get("ctx", {}) | {}:
            given = str(err.get("input"))
            given = given if len(given) <= 24 else f"a number of {len(given)} digits"
            problems.append(doc.problem(
                "invalid_value", f"{given} is too large: it must be at most "
                f"{err['ctx']['le']:,}; is it a typo?", loc))
        elif kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
            problems.append(doc.problem("invalid_value", err["msg"].lower(), loc))
        elif kind == "invalid_key":
            named = loc[-1] if loc else err.get("input")
            problems.append(doc.problem(
                "wrong_type", f"key {named} is not text (YAML read it as "
                f"{_describe(err.get('input'))}); quote it if it is a name", loc))
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
