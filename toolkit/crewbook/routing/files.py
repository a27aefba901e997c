"""Reading routing files strictly (every problem, with file:line) and writing them safely."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import yaml
from pydantic import BaseModel

from ..errors import Problem, RoutingError
from ..models import parse_model
from ..sources import SourceDoc, read_yaml
from .checks import non_string_keys

M = TypeVar("M", bound=BaseModel)
Check = Callable[[Any, SourceDoc], list[Problem]]


def load_model(
    path: Path,
    model: type[M],
    display_path: str,
    what: str,
    check: Callable[[M, SourceDoc], list[Problem]] | None = None,
) -> M:
    """`model` read from `path`, or one `RoutingError` listing every problem found."""
    doc = read_yaml(path, error_cls=RoutingError, display_path=display_path)
    problems = list(doc.problems)
    problems += non_string_keys(doc)
    parsed, found = parse_model(model, doc)
    problems += found
    if parsed is not None and check is not None:
        problems += check(cast(M, parsed), doc)
    if any(p.severity == "error" for p in problems):
        raise RoutingError(f"{what} {display_path} is invalid", problems)
    return cast(M, parsed)


def dump_yaml(data: dict[str, Any], header: str = "") -> str:
    """YAML text for `data` (key order kept), after `header` comment lines."""
    body = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    lines = "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines())
    return lines + body
