"""Crew fixtures: a private CREWBOOK_HOME, the tour project with stories, portable bars."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

TASKS_MD = """\
# Tasks

## Export

- [ ] 1.1 Add the Export CSV button to the invoice list
- [ ] 1.2 Write the CSV serializer (UTF-8 with a BOM)

## Check

- [ ] 2.1 Test a month with accents and an empty month
"""

PY = shlex.quote(sys.executable)
#: A bar command that passes, and one that fails, on every platform with Python.
GREEN = f"{PY} -c \"print('ok')\""
RED = f"{PY} -c \"import sys; print('boom'); sys.exit(1)\""


@pytest.fixture
def project(tour: Path) -> Path:
    """The tour project, its change `add-csv-export` given two stories (three tasks)."""
    (tour / "_codev" / "changes" / "add-csv-export" / "tasks.md").write_text(
        TASKS_MD, encoding="utf-8")
    return tour
