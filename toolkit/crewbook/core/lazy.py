"""Public names loaded on first use (PEP 562), so importing a package stays light.

`crewbook` and `crewbook.routing` list each public name with the module defining it;
the module is imported the first time a name of it is read, and the value is kept in
the package. The `crewbook` command builds its parser from such packages without
loading pydantic models, pandas or pyarrow: `crewbook --version` answers at once.
Type checkers read the same names from the package's `if TYPE_CHECKING:` imports.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from importlib.util import find_spec
from types import ModuleType
from typing import Any


def lazy_names(package: str, modules: Mapping[str, tuple[str, ...]],
               namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level `__getattr__` and `__dir__` of `package`, whose public names are
    `modules` (module, relative to the package → the names it defines); `namespace` is
    the package's `globals()`, where a name is kept once loaded."""
    where = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(where))

    return __getattr__, __dir__


def import_jsonschema() -> ModuleType:
    """`jsonschema`, imported without building `rfc3987_syntax`'s grammar until an
    ``iri`` format is checked.

    When installed (Jupyter's `jsonschema[format-nongpl]` brings it), `jsonschema`
    imports it at once for its ``iri`` format check, and it compiles a Lark grammar:
    1-2 s of CPU, the biggest part of an MCP server's first tool call (its arguments
    are checked against a schema). Here `jsonschema` finds a stand-in whose
    `is_valid_syntax` imports the real module on its first call: the same checks, paid
    for only when used. Use it for the first import of `jsonschema` on a start-up path.
    """
    loaded = sys.modules.get("jsonschema")
    if loaded is not None:
        return loaded
    if "rfc3987_syntax" in sys.modules or find_spec("rfc3987_syntax") is None:
        return import_module("jsonschema")
    stand_in = ModuleType("rfc3987_syntax")

    def is_valid_syntax(*args: Any, **kwargs: Any) -> Any:
        if sys.modules.get("rfc3987_syntax") is stand_in:
            del sys.modules["rfc3987_syntax"]
        return import_module("rfc3987_syntax").is_valid_syntax(*args, **kwargs)

    stand_in.is_valid_syntax = is_valid_syntax  # type: ignore[attr-defined]
    sys.modules["rfc3987_syntax"] = stand_in
    try:
        return import_module("jsonschema")
    finally:
        if sys.modules.get("rfc3987_syntax") is stand_in:
            del sys.modules["rfc3987_syntax"]
