"""Example projects shipped with crewbook, copied out before use so they can be changed."""

from __future__ import annotations

import shutil
import tempfile
from importlib import resources
from pathlib import Path

from ..errors import AlreadyExistsError, NotFoundError, did_you_mean


def example_names() -> list[str]:
    """Names of the bundled example projects."""
    root = resources.files(__package__)
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("_"))


def example_project(name: str = "tour", dest: Path | str | None = None) -> Path:
    """Copy the example project `name` to `dest` (default: a new temporary folder).

    Returns the copy's root, which holds `_codev/`. The bundled original is never
    changed, so every call starts from the same state.
    """
    if name not in example_names():
        raise NotFoundError(
            f"no example project {name!r}"
            + (did_you_mean(name, example_names()) or f"; examples: {', '.join(example_names())}")
        )
    target = (
        Path(dest)
        if dest is not None
        else Path(tempfile.mkdtemp(prefix=f"crewbook-{name}-")) / name
    )
    if target.exists() and any(target.iterdir()):
        raise AlreadyExistsError(f"{target} exists and is not empty; choose another folder", target)
    source = Path(str(resources.files(__package__).joinpath(name)))
    shutil.copytree(
        source, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__")
    )
    return target


def storied_tour(dest: Path | str) -> Path:
    """The tour project copied to `dest`, its change given two stories of two tasks each:
    a backlog the crew and autonomous loops can work through."""
    root = example_project("tour", dest)
    lines = ["# Tasks", ""]
    for story in (1, 2):
        lines += [f"## Story {story}", "", f"- [ ] {story}.1 First", f"- [ ] {story}.2 Second", ""]
    (root / "_codev" / "changes" / "add-csv-export" / "tasks.md").write_text("\n".join(lines),
                                                                            "utf-8")
    return root
