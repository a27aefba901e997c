"""Compare fixtures: a private CREWBOOK_HOME, so routing never reads the user's own files."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every compare test gets its own CREWBOOK_HOME: the real one is never touched."""
    folder = tmp_path / "crewbook-home"
    monkeypatch.setenv("CREWBOOK_HOME", str(folder))
    return folder
