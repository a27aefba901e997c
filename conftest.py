"""Set-up shared by every test run (tests/ and the notebooks under nbval).

Nothing on the user's machine may change a result: a routing profile in
`~/.config/crewbook/`, or a `CREWBOOK_HOME` exported in their shell, would change what a
notebook prints. nbval starts each notebook's kernel as a child of this process, so
pointing `CREWBOOK_HOME` and `XDG_CONFIG_HOME` at empty folders here, before any test
runs, isolates the kernels as well as the unit tests (which also get their own
`CREWBOOK_HOME` per test, `tests/conftest.py`). `HOME` stays: crewbook reads nothing
under it once `CREWBOOK_HOME` is set, and a fresh one would make matplotlib rebuild its
font cache in every kernel.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

#: The variables that would point crewbook at the user's own routing files.
ISOLATED = ("CREWBOOK_HOME", "XDG_CONFIG_HOME")

_folders: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    """Point every isolated variable at a fresh empty folder, for this process and the
    kernels it starts."""
    base = tempfile.mkdtemp(prefix="crewbook-tests-")
    _folders.append(base)
    for name in ISOLATED:
        folder = os.path.join(base, name.lower())
        os.mkdir(folder)
        os.environ[name] = folder


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the folders made by `pytest_configure`."""
    while _folders:
        shutil.rmtree(_folders.pop(), ignore_errors=True)
