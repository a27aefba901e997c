"""`crewbook diff`: every pair type, with and without --json, mixed kinds, and --git.

CREWBOOK_HOME is private to each test (the autouse `home` fixture of conftest.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

DATA = Path(__file__).parent.parent / "data"
SEED = DATA / "pipelines" / "role_pipeline.toml"
HISTORY = DATA / "ledgers" / "history"
SPECKIT = DATA / "ledgers" / "speckit-project" / ".specify" / "workflows" / "runs"

Cli = Callable[..., Any]


@pytest.fixture
def redesign(tour: Path) -> Path:
    """The tour's `lite` schema with a review step before tasks, as `lite-v2`."""
    lite = tour / "_codev" / "schemas" / "lite"
    v2 = tour / "_codev" / "schemas" / "lite-v2"
    shutil.copytree(lite, v2)
    data = yaml.safe_load((lite / "schema.yaml").read_text("utf-8"))
    data["name"] = "lite-v2"
    data["artifacts"].insert(2, {"id": "review", "generates": "review.md",
                                 "requires": ["specs"]})
    data["artifacts"][3]["requires"] = ["review"]
    (v2 / "schema.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return v2


def test_schemas_text_and_json(cli: Cli, tour: Path, redesign: Path) -> None:
    lite = tour / "_codev" / "schemas" / "lite"
    r = cli("diff", lite, redesign)
    assert r.code == 0, r.err
    assert r.out.startswith("schema lite → lite-v2:")
    assert "+ artifact review added" in r.out
    assert "add-csv-export: tasks blocked (ready → blocked): waits for review" in r.out
    j = cli("diff", lite, redesign, "--json")
    assert j.code == 0
    data = j.json
    assert data["kind"] == "schema"
    assert data["empty"] is False
    assert {"section": "artifact", "change": "added", "item": "review", "field": None,
            "before": None, "after": None, "note": None} in data["changes"]
    assert {"change": "add-csv-export", "artifact": "tasks", "what": "blocked",
            "before": "ready", "after": "blocked",
            "note": "waits for review"} in data["consequences"]
    same = cli("diff", lite, lite / "schema.yaml", "--json", "--exit-code")
    assert same.code == 0
    assert same.json["empty"] is True
    assert cli("diff", lite, redesign, "--exit-code").code == 1


def test_pipelines(cli: Cli, tmp_path: Path) -> None:
    folder = tmp_path / "pipes"
    shutil.copytree(DATA / "pipelines", folder, ignore=shutil.ignore_patterns("broken"))
    edited = folder / "edited.toml"
    edited.write_text(SEED.read_text("utf-8").replace("max_retries = 3", "max_retries = 1"),
                      encoding="utf-8")
    r = cli("diff", SEED, edited, "--json")
    assert r.code == 0, r.out
    assert r.json["kind"] == "pipeline"
    assert r.json["changes"] == [{"section": "stage", "change": "changed", "item": "implementer",
                                  "field": "max_retries", "before": 3, "after": 1,
                                  "note": None}]
    assert "stage implementer max_retries: 3 → 1" in cli("diff", SEED, edited).out


def test_profiles(cli: Cli, tmp_path: Path) -> None:
    a = tmp_path / "a.yaml"
    a.write_text("family: claude\n", encoding="utf-8")
    b = tmp_path / "b.yaml"
    b.write_text("family: claude\nmatrix:\n  light:\n    low:\n      model: claude-sonnet-4-5\n"
                 "      thinking_budget: 0\n", encoding="utf-8")
    r = cli("diff", a, b, "--json")
    assert r.code == 0, r.out
    assert r.json["kind"] == "profile"
    cells = [c for c in r.json["changes"] if c["section"] == "cell"]
    assert cells == [{"section": "cell", "change": "changed", "item": "light/low",
                      "field": "model", "before": "claude-haiku-4-5",
                      "after": "claude-sonnet-4-5", "note": None}]
    families = cli("diff", "claude", "codex", "--json")
    assert families.code == 0
    assert families.json["counts"]["changed"] > 9


def test_runs_recorded_and_spec_kit(cli: Cli) -> None:
    r = cli("diff", f"{HISTORY}:run-0001", f"{HISTORY}:run-0003", "--json")
    assert r.code == 0, r.out
    assert r.json["kind"] == "run"
    assert r.json["diverged_at"] == 4
    one = cli("diff", HISTORY / "run-0001.jsonl", HISTORY / "run-0001.jsonl", "--json")
    assert one.json["empty"] is True
    spec = cli("diff", SPECKIT / "3f9a1c2e", SPECKIT / "b71e04d9")
    assert spec.code == 0, spec.err
    assert "diverged at act 4" in spec.out


def test_mixed_kinds_are_refused(cli: Cli, tour: Path) -> None:
    lite = tour / "_codev" / "schemas" / "lite"
    r = cli("diff", lite, SEED, "--json")
    assert r.code == 1
    error = r.json["error"]
    assert error["type"] == "CompareError"
    assert "cannot compare a schema with a pipeline" in error["message"]
    text = cli("diff", f"{HISTORY}:run-0001", SEED)
    assert text.code == 1
    assert "cannot compare a run with a pipeline" in text.err


def test_usage_and_missing(cli: Cli, tmp_path: Path) -> None:
    r = cli("diff", SEED, "--json")
    assert r.code == 2
    assert r.json["error"]["type"] == "UsageError"
    assert cli("diff", "--git", "HEAD", SEED, SEED).code == 2
    missing = cli("diff", SEED, tmp_path / "nope.toml", "--json")
    assert missing.code == 2
    assert "no such file or folder" in missing.json["error"]["message"]
    run = cli("diff", f"{HISTORY}:run-0001", f"{HISTORY}:run-9", "--json")
    assert run.code == 2
    assert "no run 'run-9'" in run.json["error"]["message"]


def test_git_form(cli: Cli, tour: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(tour, repo)

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], check=True,
                              capture_output=True, text=True).stdout

    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "one")
    schema = repo / "_codev" / "schemas" / "lite" / "schema.yaml"
    schema.write_text(schema.read_text("utf-8").replace("requires: [specs]",
                                                        "requires: [brief]"), encoding="utf-8")
    before = git("status", "--porcelain")
    monkeypatch.chdir(repo)
    r = cli("diff", "--git", "HEAD", "--json", "--", "_codev/schemas/lite")
    assert r.code == 0, r.out
    data = r.json
    assert (data["a"], data["b"]) == ("_codev/schemas/lite@HEAD", "_codev/schemas/lite")
    assert [(c["item"], c["field"]) for c in data["changes"] if c["section"] == "artifact"] == [
        ("tasks", "requires")]
    assert git("status", "--porcelain") == before
    text = cli("diff", "--git", "HEAD", "--", "_codev/schemas/lite/schema.yaml")
    assert "artifact tasks requires: [specs] → [brief]" in text.out
    bad = cli("diff", "--json", "--git", "no-such-rev", "--", "_codev/schemas/lite")
    assert bad.code == 2
    assert "no git revision 'no-such-rev'" in bad.json["error"]["message"]


def test_output_drawing(cli: Cli, tour: Path, redesign: Path, tmp_path: Path) -> None:
    lite = tour / "_codev" / "schemas" / "lite"
    out = tmp_path / "diff.dot"
    r = cli("diff", lite, redesign, "-o", out, "--json")
    assert r.code == 0
    assert r.json["output"] == str(out)
    dot = out.read_text("utf-8")
    assert dot.startswith('digraph "lite-diff"')
    assert '"review" [label=<<b>review</b>' in dot
    mmd = tmp_path / "diff.mmd"
    cli("diff", lite, redesign, "-o", mmd)
    assert "classDef st_added" in mmd.read_text("utf-8")
    assert json.loads(cli("diff", lite, redesign, "--json").out)["kind"] == "schema"
