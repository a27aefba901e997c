"""What a path holds (`input_kind`), `diff` on paths, and `diff_at_revision` in a real git repo."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from crewbook import CompareError, NotFoundError
from crewbook.compare import PipelineDiff, SchemaDiff, diff, diff_at_revision, input_kind

DATA = Path(__file__).parent.parent / "data"
SEED = DATA / "pipelines" / "role_pipeline.toml"
HISTORY = DATA / "ledgers" / "history"


def test_input_kinds(tour: Path, tmp_path: Path) -> None:
    lite = tour / "_codev" / "schemas" / "lite"
    assert input_kind(lite).kind == "schema"
    assert input_kind(lite / "schema.yaml").kind == "schema"
    assert input_kind(SEED).kind == "pipeline"
    assert input_kind(HISTORY / "run-0001.jsonl").kind == "run"
    ledger = input_kind(f"{HISTORY}:run-0002")
    assert (ledger.kind, ledger.path, ledger.run) == ("run", HISTORY, "run-0002")
    assert input_kind(DATA / "ledgers" / "speckit-project").kind == "run"
    family = input_kind("claude")
    assert (family.kind, family.family) == ("profile", "claude")
    profile = tmp_path / "p.yaml"
    profile.write_text("family: codex\n", encoding="utf-8")
    assert input_kind(profile).kind == "profile"


def test_input_kind_errors(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="no such file or folder"):
        input_kind(tmp_path / "nope")
    other = tmp_path / "other.yaml"
    other.write_text("colour: blue\n", encoding="utf-8")
    with pytest.raises(CompareError, match=r"its keys \(colour\) are neither"):
        input_kind(other)
    (tmp_path / "empty").mkdir()
    with pytest.raises(CompareError, match="cannot tell what the folder"):
        input_kind(tmp_path / "empty")
    text = tmp_path / "notes.txt"
    text.write_text("x", encoding="utf-8")
    with pytest.raises(CompareError, match="cannot compare"):
        input_kind(text)


def test_diff_picks_the_kind_and_refuses_mixed_kinds(tour: Path) -> None:
    lite = tour / "_codev" / "schemas" / "lite"
    assert isinstance(diff(lite, lite / "schema.yaml"), SchemaDiff)
    assert isinstance(diff(SEED, SEED), PipelineDiff)
    assert diff(f"{HISTORY}:run-0001", f"{HISTORY}:run-0001").empty
    with pytest.raises(CompareError, match="cannot compare a schema with a pipeline"):
        diff(lite, SEED)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture
def repo(tmp_path: Path, tour: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    shutil.copytree(tour / "_codev", root / "_codev")
    shutil.copytree(DATA / "pipelines", root / "pipes",
                    ignore=shutil.ignore_patterns("broken", "workspace"))
    (root / "profile.yaml").write_text("family: claude\n", encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "one")
    return root


def test_diff_at_revision_leaves_the_work_tree_alone(repo: Path) -> None:
    schema = repo / "_codev" / "schemas" / "lite" / "schema.yaml"
    schema.write_text(schema.read_text("utf-8").replace("requires: [specs]",
                                                        "requires: [brief]"), encoding="utf-8")
    pipeline = repo / "pipes" / "role_pipeline.toml"
    pipeline.write_text(pipeline.read_text("utf-8").replace("max_retries = 3",
                                                            "max_retries = 6"), encoding="utf-8")
    (repo / "profile.yaml").write_text("family: codex\n", encoding="utf-8")
    status = _git(repo, "status", "--porcelain")
    d = diff_at_revision("HEAD", repo / "_codev" / "schemas" / "lite")
    assert [(e.item, e.field) for e in d.section("artifact")] == [("tasks", "requires")]
    assert d.a.endswith("lite@HEAD")
    assert diff_at_revision("HEAD", schema).section("artifact")  # the file form too
    p = diff_at_revision("HEAD", pipeline)
    assert [(e.item, e.field, e.before, e.after) for e in p.entries] == [
        ("implementer", "max_retries", 3, 6)]
    assert diff_at_revision("HEAD", repo / "profile.yaml").section("cell")
    assert _git(repo, "status", "--porcelain") == status  # nothing staged or written
    assert diff_at_revision("HEAD", repo / "_codev" / "schemas" / "research" / ".." / "lite")


def test_diff_at_revision_errors(repo: Path) -> None:
    lite = repo / "_codev" / "schemas" / "lite"
    with pytest.raises(NotFoundError, match="no git revision 'nope'"):
        diff_at_revision("nope", lite)
    new = repo / "_codev" / "schemas" / "fresh"
    shutil.copytree(lite, new)
    with pytest.raises(NotFoundError, match="did not exist at revision HEAD"):
        diff_at_revision("HEAD", new)
    with pytest.raises(CompareError, match="not at a git revision"):
        diff_at_revision("HEAD", HISTORY / "run-0001.jsonl")
