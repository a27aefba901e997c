"""Every data file the package reads from its own folders ships with it: the patterns of
``[tool.setuptools.package-data]`` in pyproject.toml cover each file under
``toolkit/crewbook`` that is not Python (a family's ``roles.yaml``, the routing
defaults, schemas, examples). An editable install reads the source tree, so a file left
out of the patterns works here and is missing from a wheel."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "toolkit" / "crewbook"


def _data_files() -> set[Path]:
    return {p for p in PACKAGE.rglob("*") if p.is_file() and "__pycache__" not in p.parts
            and p.suffix not in (".py", ".pyc")}


def _shipped(patterns: list[str]) -> set[Path]:
    return {p for pattern in patterns for p in PACKAGE.glob(pattern) if p.is_file()}


def test_the_package_data_patterns_cover_every_data_file() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["crewbook"]
    data = _data_files()
    assert PACKAGE / "crew" / "roles.yaml" in data  # what the families' routing reads
    assert PACKAGE / "delivery" / "roles.yaml" in data
    missing = sorted(str(p.relative_to(PACKAGE)) for p in data - _shipped(patterns))
    assert not missing, f"data files no package-data pattern ships: {missing}"


def test_a_file_outside_the_patterns_is_found() -> None:
    # the check itself: a pattern list without YAML leaves the roles files out
    patterns = ["py.typed", "**/*.md", "**/*.json", "**/*.toml", "examples/**/*"]
    missing = _data_files() - _shipped(patterns)
    assert PACKAGE / "crew" / "roles.yaml" in missing
