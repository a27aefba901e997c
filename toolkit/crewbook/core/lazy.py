"""Public names loaded on first use (PEP 562), so importing a package stays light.

`crewbook` and `crewbook.routing` list each public name with the module defining it;
the module is imported the first time a name of it is read, and the value is kept in
the package. The `crewbook` command builds its parser from such packages without
loading pydantic models, pandas or pyarrow: `crewbook --version` answers at once.
Type checkers read the same names from the package's `if TYPE_CHECKING:` imports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
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
