"""crewbook against the OpenSpec CLI, the reference implementation (a differential oracle).

On generated projects and on real ones (`tests/data/openspec_real/`, one held out),
`crewbook status --json` and `crewbook validate --json` must agree with `openspec list
--json`, `openspec status --all --json` and `openspec validate --all --json` on every
active change: names, completed and total tasks, done/ready/blocked per artifact, valid
or not; and `crewbook archive --dry-run` must produce the specs `openspec archive` writes.

The CLI is installed by `.ci/run` (`npm ci` in `tests/openspec_cli/`); without node or the
CLI every test here is skipped. It runs offline.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from crewbook.artifacts import Project, preview_archive
from crewbook.artifacts.synthetic import make_openspec_project

from .test_archive_semantics import CASES, SKIP_CASES, build_case, build_skip_case
from .test_openspec_ported import ARCHIVE_CASES

#: OpenSpec's own archive cases run through the CLI too in the slow mode
#: (CREWBOOK_PARITY_SEEDS set); test_openspec_ported.py checks them without it.
ALL_CASES = CASES + ([(c[0], c[1], c[2], "add-b") for c in ARCHIVE_CASES]
                     if os.environ.get("CREWBOOK_PARITY_SEEDS") else [])

CLI = Path(__file__).parents[1] / "openspec_cli" / "node_modules" / ".bin" / "openspec"
REAL = Path(__file__).parents[1] / "data" / "openspec_real"

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not CLI.exists(),
    reason="the OpenSpec CLI is not installed (cd tests/openspec_cli && npm ci)",
)


def openspec(root: Path, *args: str) -> Any:
    """Run the OpenSpec CLI in `root` (telemetry off, no colour) and parse its JSON."""
    env = dict(os.environ, OPENSPEC_TELEMETRY="0", DO_NOT_TRACK="1", NO_COLOR="1",
               HOME=str(root.parent / ".home"))
    done = subprocess.run([str(CLI), *args], cwd=root, capture_output=True, text=True,
                          env=env, timeout=120, check=False)
    assert done.stdout.strip(), f"openspec {' '.join(args)} printed nothing: {done.stderr}"
    return json.loads(done.stdout)


def compare(root: Path, cli: Callable[..., Any]) -> int:
    """Assert crewbook and OpenSpec agree on every active change of `root`; return how
    many changes were compared."""
    listed = {c["name"]: c for c in openspec(root, "list", "--json")["changes"]}
    status = {c["changeName"]: c for c in openspec(root, "status", "--all", "--json")["changes"]}
    checked = {i["id"]: i["valid"] for i in openspec(root, "validate", "--all", "--json")["items"]
               if i["type"] == "change"}
    ours = cli("--project", root, "status", "--json").json
    mine = {c["change"]: c for c in ours["changes"]}
    assert sorted(mine) == sorted(listed) == sorted(status) == sorted(checked)
    report = cli("validate", root, "--json").json
    invalid = {Path(p["path"]).relative_to("openspec/changes").parts[0]
               for p in report["problems"]
               if p["severity"] == "error" and p["path"].startswith("openspec/changes/")}
    ours_listed = {c["name"]: c for c in cli("--project", root, "list", "--json").json["changes"]}
    fields = ("completedTasks", "totalTasks", "status")
    assert {n: [c[f] for f in fields] for n, c in ours_listed.items()} == {
        n: [c[f] for f in fields] for n, c in listed.items()}
    specs = openspec(root, "list", "--specs", "--json")["specs"]
    assert cli("--project", root, "list", "--specs", "--json").json["specs"] == specs
    spec_valid = {i["id"]: i["valid"] for i in openspec(root, "validate", "--specs", "--json")[
        "items"]}
    bad_specs = {Path(p["path"]).parent.relative_to("openspec/specs").as_posix()
                 for p in report["problems"]
                 if p["severity"] == "error" and p["path"].startswith("openspec/specs/")}
    assert {i: i not in bad_specs for i in spec_valid} == spec_valid
    for name, change in mine.items():
        assert (change["apply"]["done"], change["apply"]["total"]) == (
            listed[name]["completedTasks"], listed[name]["totalTasks"]), name
        assert {a["id"]: a["status"] for a in change["artifacts"]} == {
            a["id"]: a["status"] for a in status[name]["artifacts"]}, name
        assert (name not in invalid) == checked[name], name
    return len(mine)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_generated_projects_agree(tmp_path: Path, cli: Callable[..., Any], seed: int) -> None:
    root = make_openspec_project(tmp_path / "p", 25, seed=seed)
    assert compare(root, cli) == 25


@pytest.mark.parametrize("sample", ["openspec_repo", "openspec_example",
                                    "heldout_openspec_repo_2026_01"])
def test_real_projects_agree(tmp_path: Path, cli: Callable[..., Any], sample: str) -> None:
    root = tmp_path / sample
    shutil.copytree(REAL / sample, root)
    assert compare(root, cli) >= 1


def test_generated_project_has_both_verdicts(tmp_path: Path, cli: Callable[..., Any]) -> None:
    """The generated projects exercise the checks: some changes valid, some not."""
    root = make_openspec_project(tmp_path / "p", 25, seed=1)
    verdicts = {i["valid"] for i in openspec(root, "validate", "--all", "--json")["items"]}
    assert verdicts == {True, False}


@pytest.mark.parametrize("sample", ["openspec_repo", "generated"])
def test_archive_preview_matches_openspec_archive(tmp_path: Path, sample: str) -> None:
    """For each change the preview accepts, `openspec archive` writes exactly the
    previewed specs; for each change it refuses, OpenSpec refuses too."""
    root = tmp_path / "p"
    if sample == "generated":
        make_openspec_project(root, 8, seed=4)
    else:
        shutil.copytree(REAL / sample, root)
    names = [c.name for c in Project(root).changes()]
    agreed = 0
    for name in names:
        project = Project(root)
        preview = preview_archive(project.change(name))
        env = dict(os.environ, OPENSPEC_TELEMETRY="0", DO_NOT_TRACK="1", NO_COLOR="1",
                   HOME=str(tmp_path / ".home"))
        subprocess.run([str(CLI), "archive", name, "-y"], cwd=root, capture_output=True,
                       text=True, env=env, timeout=120, check=False)
        archived = not (project.changes_folder / name).exists()
        assert archived == preview.ok, name
        if archived and preview.ok:
            for update in preview.updates:
                assert (root / update.path).read_text("utf-8") == update.after, update.path
            agreed += 1
    assert agreed >= 2


def tree(root: Path) -> dict[str, bytes]:
    """Every file under `root/openspec`, by relative path, with its bytes."""
    base = root / "openspec"
    return {p.relative_to(base).as_posix(): p.read_bytes()
            for p in sorted(base.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("case", ALL_CASES, ids=[c[0] for c in ALL_CASES])
def test_archive_cases_write_the_same_bytes(tmp_path: Path, cli: Callable[..., Any],
                                            case: tuple[Any, ...]) -> None:
    """Each archive case run through both tools: the same refusal, or the same tree."""
    theirs = build_case(tmp_path / "theirs", case)
    ours = build_case(tmp_path / "ours", case)
    env = dict(os.environ, OPENSPEC_TELEMETRY="0", DO_NOT_TRACK="1", NO_COLOR="1", TZ="UTC",
               HOME=str(tmp_path / ".home"))
    subprocess.run([str(CLI), "archive", case[3], "-y"], cwd=theirs, capture_output=True,
                   text=True, env=env, timeout=120, check=False)
    cli("--project", ours, "archive", case[3])
    assert tree(ours) == tree(theirs)


@pytest.mark.parametrize("case", SKIP_CASES, ids=[c[0] for c in SKIP_CASES])
def test_skip_specs_cases_agree(tmp_path: Path, cli: Callable[..., Any],
                                case: tuple[str, str, str | None]) -> None:
    """The skip_specs marker: same validity, same archive outcome and tree."""
    theirs = build_skip_case(tmp_path / "theirs", case)
    ours = build_skip_case(tmp_path / "ours", case)
    valid = {i["id"]: i["valid"] for i in openspec(theirs, "validate", "--all", "--json")[
        "items"] if i["type"] == "change"}
    assert (cli("validate", ours / "openspec" / "changes" / "skip-b").code == 0) == valid[
        "skip-b"]
    env = dict(os.environ, OPENSPEC_TELEMETRY="0", DO_NOT_TRACK="1", NO_COLOR="1", TZ="UTC",
               HOME=str(tmp_path / ".home"))
    subprocess.run([str(CLI), "archive", "skip-b", "-y"], cwd=theirs, capture_output=True,
                   text=True, env=env, timeout=120, check=False)
    cli("--project", ours, "archive", "skip-b")
    assert tree(ours) == tree(theirs)
