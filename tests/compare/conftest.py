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


def write_lite_v2(tour: Path) -> Path:
    """The redesign of the notebook (08_compare): `lite` with the brief split (a `problem`
    first) and a `review` step before `tasks`, as `_codev/schemas/lite-v2`."""
    import shutil

    import yaml

    lite = tour / "_codev" / "schemas" / "lite"
    v2 = tour / "_codev" / "schemas" / "lite-v2"
    shutil.copytree(lite, v2)
    data = yaml.safe_load((lite / "schema.yaml").read_text("utf-8"))
    data["name"] = "lite-v2"
    brief, specs, tasks = data["artifacts"]
    brief["requires"] = ["problem"]
    review = {"id": "review", "generates": "review.md", "requires": ["specs"],
              "role": {"id": "reviewer", "name": {"en": "Reviewer"},
                       "question": "Do the spec deltas say what the brief asks for?"}}
    tasks["requires"] = ["review"]
    data["artifacts"] = [{"id": "problem", "generates": "problem.md"}, brief, specs, review,
                         tasks]
    (v2 / "schema.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return v2
