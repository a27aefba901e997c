"""The packages whose public names load on first use (`crewbook.core.lazy`)."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

LAZY_PACKAGES = ("crewbook", "crewbook.artifacts", "crewbook.draw", "crewbook.routing")


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_no_public_name_is_also_a_submodule(package: str) -> None:
    """Importing a submodule sets the package's attribute of that name to the module, so
    a lazy public name equal to a submodule's name (``crewbook.artifacts.instructions``
    was a function and a module) turns into the module once anything imports it."""
    module = importlib.import_module(package)
    names = {name for names in module._LAZY.values() for name in names}
    submodules = {info.name for info in pkgutil.iter_modules(module.__path__)}
    assert names & submodules == set()


def test_a_public_function_stays_a_function_after_its_module_is_imported() -> None:
    code = ("import crewbook.commands.artifacts, crewbook.artifacts as a\n"
            "from crewbook.artifacts import agent_instructions\n"
            "print(callable(a.instructions), type(a.instructions).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["True", "function"]
