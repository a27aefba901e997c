"""Golden DOT files of the bundled schemas and the tour change; regenerate with
``CREWBOOK_UPDATE_GOLDEN=1 pytest tests/draw -p no:nbval -o addopts=""`` (see conftest)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

import crewbook
from crewbook.draw import render_svg


def drawings(tour: Path) -> dict[str, str]:
    project = crewbook.Project(tour)
    return {
        "spec-driven.dot": crewbook.get_schema("spec-driven").dot(),
        "tour-lite.dot": project.schema("lite").dot(),
        "tour-add-csv-export.dot": project.status("add-csv-export").dot(),
        "tour-research.dot": crewbook.validate_schema(
            tour / "_codev/schemas/research", display_root=tour).dot(),
        "tour-schemas.dot": project.schemas().dot(),
    }


def test_golden_dot(tour: Path, golden: Callable[[str, str], None]) -> None:
    for name, text in drawings(tour).items():
        golden(name, text)


def test_drawn_twice_identical(tour: Path, tmp_path: Path) -> None:
    other = crewbook.example_project(dest=tmp_path / "elsewhere" / "tour")
    assert drawings(tour) == drawings(other), "no path, time or order leaks into the DOT"


@pytest.mark.requires_dot
def test_golden_files_render_to_svg(tour: Path) -> None:
    for name, text in drawings(tour).items():
        svg = render_svg(text)
        titles = {t.split("/")[-1] for t in re.findall(r"<title>(.*?)</title>", svg)}
        assert titles & {"brief", "proposal", "findings"}, name
        assert "apply:gate" in titles, name
