"""Generic fixtures: the tour project, a project builder, and a CLI runner.

Only generic helpers live here; concept-specific fixtures stay next to their tests.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import settings

import crewbook
from crewbook.commands import main

# No wall-clock deadlines (CI machines are shared and slow at times) and no example
# database left in the work tree; each test's own @settings still applies on top.
settings.register_profile("crewbook", deadline=None, database=None)
settings.load_profile("crewbook")

DATA = Path(__file__).parent / "data"


def yaml_text(content: str | Mapping[str, Any]) -> str:
    """`content` as YAML text (a string is written as is)."""
    if isinstance(content, str):
        return content
    return yaml.safe_dump(dict(content), sort_keys=False, allow_unicode=True)


@dataclass
class ProjectMaker:
    """Writes a codev project under `root`: schemas, config and changes."""

    root: Path

    @property
    def codev(self) -> Path:
        return self.root / "_codev"

    def write(self, rel: str, text: str) -> Path:
        """Write `text` at `rel` (relative to the project root), creating folders."""
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def schema(
        self,
        folder: str,
        content: str | Mapping[str, Any],
        templates: Mapping[str, str] | Sequence[str] = (),
    ) -> Path:
        """Write `_codev/schemas/<folder>/schema.yaml` (and templates); returns the folder."""
        path = self.codev / "schemas" / folder
        path.mkdir(parents=True, exist_ok=True)
        (path / "schema.yaml").write_text(yaml_text(content), encoding="utf-8")
        items = (
            templates.items()
            if isinstance(templates, Mapping)
            else ((name, f"# {name}\n") for name in templates)
        )
        for name, text in items:
            target = path / "templates" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        return path

    def chain_schema(self, folder: str, *ids: str, name: str | None = None) -> Path:
        """A valid schema whose artifacts `ids` each require the previous one."""
        artifacts: list[dict[str, Any]] = []
        for i, art_id in enumerate(ids):
            art: dict[str, Any] = {"id": art_id, "generates": f"{art_id}.md"}
            if i:
                art["requires"] = [ids[i - 1]]
            artifacts.append(art)
        return self.schema(
            folder,
            {
                "name": name or folder,
                "artifacts": artifacts,
                "apply": {"requires": [ids[-1]], "tracks": f"{ids[-1]}.md"},
            },
        )

    def config(self, content: str | Mapping[str, Any]) -> Path:
        """Write `_codev/config.yaml`."""
        return self.write("_codev/config.yaml", yaml_text(content))

    def change(
        self,
        name: str,
        schema: str = "spec-driven",
        files: Mapping[str, str] | None = None,
        **fields: Any,
    ) -> Path:
        """Write `_codev/changes/<name>/change.yaml` and `files`; returns the change folder."""
        folder = self.codev / "changes" / name
        folder.mkdir(parents=True, exist_ok=True)
        record = {"schema": schema, **fields}
        (folder / "change.yaml").write_text(yaml_text(record), encoding="utf-8")
        for rel, text in (files or {}).items():
            target = folder / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        return folder


@pytest.fixture
def make_project(tmp_path: Path) -> Callable[..., ProjectMaker]:
    """`make_project(name="project")`: an empty project (`_codev/schemas/`) in tmp_path."""

    def make(name: str = "project") -> ProjectMaker:
        root = tmp_path / name
        (root / "_codev" / "schemas").mkdir(parents=True, exist_ok=True)
        return ProjectMaker(root)

    return make


@pytest.fixture
def tour(tmp_path: Path) -> Path:
    """A fresh copy of the bundled tour project (lite, a broken research schema, a change)."""
    return crewbook.example_project(dest=tmp_path / "tour")


@dataclass
class CliResult:
    """What one `crewbook` invocation did."""

    code: int
    out: str
    err: str

    @property
    def json(self) -> Any:
        return json.loads(self.out)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    """`cli("validate", path, "--json")`: run `crewbook.commands.main` and capture its output."""

    def run(*argv: str | Path) -> CliResult:
        capsys.readouterr()
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse usage errors and --version
            code = exc.code if isinstance(exc.code, int) else 1
        out, err = capsys.readouterr()
        return CliResult(code, out, err)

    return run


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own CREWBOOK_HOME (no global profile, no custom presets): the
    real one is never read or touched, so results do not depend on the machine."""
    folder = tmp_path / "crewbook-home"
    monkeypatch.setenv("CREWBOOK_HOME", str(folder))
    return folder
