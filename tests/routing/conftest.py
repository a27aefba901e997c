"""Routing fixtures: a private CREWBOOK_HOME, the tour project with tasks, and the CLI."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

TASKS_MD = """\
## 1. Export

- [ ] 1.1 Add the Export CSV button to the invoice list
- [ ] 1.2 Write the CSV serializer (UTF-8 with a BOM)
- [x] 1.3 Name the file invoices-YYYY-MM.csv

## 2. Check

- [ ] 2.1 Test a month with accents and an empty month
"""


@pytest.fixture
def project(tour: Path) -> Path:
    """The tour project, its change `add-csv-export` given four tasks."""
    (tour / "_codev" / "changes" / "add-csv-export" / "tasks.md").write_text(
        TASKS_MD, encoding="utf-8"
    )
    return tour


@pytest.fixture
def routing_cli(
    cli: Callable[..., object], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., object]:
    """`cli(...)`, the whole `crewbook` command (kept as a name for the routing tests)."""
    return cli
