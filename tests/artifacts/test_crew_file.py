"""`_codev/crew.yaml`, read for every family (`crewbook.artifacts.crew_file`): the first
stack's test command, the autonomy mode, a reader's memory that sees every edit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from crewbook.artifacts.crew_file import (
    CREW_FILE,
    Remembered,
    autonomy,
    default_test_command,
    read_crew_file,
)
from crewbook.errors import CrewError


def _write(root: Path, text: str) -> Path:
    path = root / CREW_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_first_stack_with_a_test_cycle_gives_the_default_test_command(
        tmp_path: Path) -> None:
    assert default_test_command(tmp_path) is None  # no file: no stack
    _write(tmp_path, "stacks:\n  - {name: docs, cwd: site, build: make}\n"
                     "  - {name: python, cwd: api}\n  - {name: node}\n")
    assert default_test_command(tmp_path) == ("python -m pytest -q", "api")


def test_a_remembered_read_sees_an_edit_of_the_same_size(tmp_path: Path) -> None:
    path = _write(tmp_path, "autonomy: auto\nworkshop: [aaaa]\n")
    memory: Remembered = {}
    assert read_crew_file(tmp_path, memory).workshop == ("aaaa",)
    assert read_crew_file(tmp_path, memory) is read_crew_file(tmp_path, memory)
    stat = path.stat()
    path.write_text("autonomy: auto\nworkshop: [bbbb]\n")  # same size
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert read_crew_file(tmp_path, memory).workshop == ("bbbb",)


def test_the_autonomy_mode(tmp_path: Path) -> None:
    assert autonomy(tmp_path / "nowhere") == "auto"  # no project found
    (tmp_path / "_codev").mkdir()
    (tmp_path / "_codev" / "config.yaml").write_text("schema: spec-driven\n")
    _write(tmp_path, "autonomy: semi-auto\n")
    assert autonomy(tmp_path) == "semi-auto"
    _write(tmp_path, "autonomy: sometimes\n")
    with pytest.raises(CrewError, match=r"crew\.yaml"):
        autonomy(tmp_path)  # fails closed
