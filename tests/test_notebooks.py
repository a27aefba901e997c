"""The notebooks' own hygiene: nbval markers it honours, one kernelspec, cell ids."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))
MARKER = re.compile(r"#\s*(NBVAL_\w+|PYTEST_VALIDATE_IGNORE_OUTPUT)(.*)$")


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_nbval_markers_are_alone_on_their_line(path: Path) -> None:
    """nbval honours a marker only when the comment is exactly the marker."""
    bad = []
    for number, cell in enumerate(load(path)["cells"]):
        for line in "".join(cell["source"]).splitlines():
            found = MARKER.search(line)
            if found and (found.group(2).strip() or line.strip() != f"# {found.group(1)}"):
                bad.append(f"cell {number}: {line.strip()}")
    assert bad == [], "put the explanation on the next line"


def test_one_kernelspec_and_language_info() -> None:
    metadata = {path.name: load(path)["metadata"] for path in NOTEBOOKS}
    specs = {json.dumps([m.get("kernelspec"), m.get("language_info")], sort_keys=True)
             for m in metadata.values()}
    assert len(specs) == 1, metadata
    first = next(iter(metadata.values()))
    assert first["kernelspec"]["display_name"] == "Python 3 (ipykernel)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_cells_have_ids_and_no_timestamps(path: Path) -> None:
    """nbformat 4.5 wants cell ids (a notebook without them opens as modified)."""
    nb = load(path)
    assert (nb["nbformat"], nb["nbformat_minor"]) == (4, 5)
    ids = [cell.get("id") for cell in nb["cells"]]
    assert None not in ids
    assert len(set(ids)) == len(ids)
    assert not any("execution" in cell.get("metadata", {}) for cell in nb["cells"])
    assert "widgets" not in nb["metadata"], "no saved widget state"
