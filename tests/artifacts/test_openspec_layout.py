"""Opening OpenSpec projects in place: the `openspec/` root, its config, change metadata,
archived changes, and listings where one broken change never hides the others."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from crewbook.artifacts import Project, open_change
from crewbook.errors import ConfigError, ProjectNotFoundError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def osproj(tmp_path: Path) -> Path:
    """A small OpenSpec project: two active changes, one archived, one main spec."""
    root = tmp_path / "repo"
    base = root / "openspec"
    write(base / "config.yaml", "schema: spec-driven\ncontext: hi\n")
    write(base / "changes" / "add-a" / ".openspec.yaml",
          "schema: spec-driven\ncreated: 2026-02-21\ngoal: faster\nrisk_level: low\n"
          "affected_areas: [api]\n")
    write(base / "changes" / "add-a" / "proposal.md", "# p\n")
    write(base / "changes" / "add-a" / "tasks.md", "- [x] one\n- [ ] two\n1. [ ] three\n")
    write(base / "changes" / "add-b" / "proposal.md", "# p\n")  # no metadata at all
    write(base / "changes" / "archive" / "2026-01-10-old-one" / ".openspec.yaml",
          "schema: spec-driven\ncreated: 2026-01-02\n")
    write(base / "changes" / "archive" / "2026-01-10-old-one" / "tasks.md", "- [x] done\n")
    write(base / "specs" / "auth" / "spec.md", "# auth\n\n## Purpose\nx\n\n## Requirements\n"
          "### Requirement: Login\nThe system SHALL log in.\n\n#### Scenario: ok\n- WHEN x\n")
    return root


def test_root_found_from_openspec_folder_walking_up(osproj: Path) -> None:
    project = Project(osproj / "openspec" / "changes" / "add-a")
    assert project.root == osproj.resolve()
    assert project.layout == "openspec"
    assert project.changes_folder == osproj.resolve() / "openspec" / "changes"


def test_project_accepts_the_openspec_folder_itself(osproj: Path) -> None:
    assert Project(osproj / "openspec").layout == "openspec"


def test_both_layouts_say_which_is_used(osproj: Path) -> None:
    (osproj / "_codev").mkdir()
    project = Project(osproj)
    assert project.layout == "codev"
    assert [w.code for w in project.warnings] == ["two_layouts"]
    assert "openspec" in project.warnings[0].message
    assert Project(osproj / "openspec").layout == "openspec"  # the way to pick the other


def test_no_project_names_both_folders(tmp_path: Path) -> None:
    with pytest.raises(ProjectNotFoundError, match="_codev/` or `openspec/"):
        Project(tmp_path)


def test_active_changes_exclude_archive(osproj: Path) -> None:
    assert [c.name for c in Project(osproj).changes()] == ["add-a", "add-b"]


def test_metadata_yaml_date_and_unused_keys_warn(osproj: Path) -> None:
    change = Project(osproj).change("add-a")
    assert change.file.created == "2026-02-21"
    keys = sorted(w.key or "" for w in change.warnings)
    assert keys == ["affected_areas", "goal", "risk_level"]
    assert all(w.severity == "warning" and w.code == "unused_key" for w in change.warnings)
    assert all(w.line is not None for w in change.warnings)
    status = change.status()
    assert {p.key for p in status.problems} >= {"goal"}  # never silent


def test_change_without_metadata_uses_config_schema(osproj: Path) -> None:
    change = Project(osproj).change("add-b")
    assert change.schema_name == "spec-driven"
    assert change.warnings == ()


def test_openspec_task_forms_are_counted(osproj: Path) -> None:
    status = Project(osproj).status("add-a")
    assert (status.apply.done, status.apply.total) == (1, 3)


def test_archived_changes_have_their_date(osproj: Path) -> None:
    archived = Project(osproj).archived()
    assert [(a.name, a.archived) for a in archived] == [("old-one", dt.date(2026, 1, 10))]
    assert archived[0].change is not None
    assert archived[0].change.status().apply.done == 1


def test_config_default_schema_key_warns_and_never_raises(osproj: Path) -> None:
    write(osproj / "openspec" / "config.yaml", "defaultSchema: spec-driven\nplanning: {a: 1}\n")
    project = Project(osproj)
    assert project.schema().name == "spec-driven"
    codes = {(w.key, w.code) for w in project.warnings}
    assert codes == {("defaultSchema", "unused_key"), ("planning", "unused_key")}
    assert "schema:" in next(w.message for w in project.warnings if w.key == "defaultSchema")


def test_config_wrong_type_is_an_error_naming_the_key(osproj: Path) -> None:
    write(osproj / "openspec" / "config.yaml", "schema: [a, b]\n")
    with pytest.raises(ConfigError) as info:
        _ = Project(osproj).config
    assert [(p.key, p.line) for p in info.value.problems] == [("schema", 1)]


def test_broken_change_listed_with_others(osproj: Path, cli: Callable[..., Any]) -> None:
    write(osproj / "openspec" / "changes" / "bad" / ".openspec.yaml", "schema: 12\n")
    scan = Project(osproj).scan()
    assert [c.name for c in scan.changes] == ["add-a", "add-b"]
    assert scan.broken == ("bad",)
    result = cli("--project", osproj, "status", "--json")
    assert result.code == 1
    doc = result.json
    assert [c["change"] for c in doc["changes"]] == ["add-a", "add-b", "bad"]
    assert doc["changes"][2]["problems"]  # listed with its problem, never dropped
    assert any("bad/.openspec.yaml" in (p["path"] or "") for p in doc["problems"])
    text = cli("--project", osproj, "status")
    assert "Change add-a" in text.out
    assert "Change add-b" in text.out
    assert "bad" in text.out


def test_status_of_openspec_project_exits_zero_when_fine(osproj: Path,
                                                         cli: Callable[..., Any]) -> None:
    result = cli("--project", osproj, "status", "--json")
    assert result.code == 0
    assert result.json["layout"] == "openspec"


def test_codev_folder_reads_openspec_metadata(tmp_path: Path) -> None:
    write(tmp_path / "_codev" / "changes" / "x" / ".openspec.yaml", "created: 2026-02-21\n")
    change = open_change(tmp_path / "_codev" / "changes" / "x")
    assert (change.schema_name, change.file.created) == ("spec-driven", "2026-02-21")


def test_codev_changes_folder_without_any_change_says_what_is_missing(
        tmp_path: Path, cli: Callable[..., Any]) -> None:
    write(tmp_path / "_codev" / "changes" / "one" / "proposal.md", "# p\n")
    write(tmp_path / "_codev" / "changes" / "two" / "tasks.md", "- [ ] t\n")
    result = cli("--project", tmp_path, "status", "--json")
    assert result.code == 1
    codes = [p["code"] for p in result.json["problems"]]
    assert codes == ["not_a_change", "not_a_change", "no_changes_recognised"]
    assert "change.yaml" in result.json["problems"][-1]["message"]


def test_graph_honours_project_option(osproj: Path, tmp_path: Path,
                                      cli: Callable[..., Any], monkeypatch: Any) -> None:
    write(osproj / "openspec" / "schemas" / "mine" / "schema.yaml",
          "name: mine\nartifacts:\n  - id: brief-doc\n    generates: brief.md\n"
          "apply:\n  requires: [brief-doc]\n  tracks: tasks.md\n")
    monkeypatch.chdir(tmp_path)  # not inside the project
    result = cli("graph", "--project", osproj, "--schema", "mine")
    assert result.code == 0
    assert "brief-doc" in result.out


def test_history_frame(osproj: Path) -> None:
    df = Project(osproj).history(git=False)
    assert list(df["change"]) == ["old-one", "add-a", "add-b"]
    assert list(df["state"].astype(str)) == ["archived", "active", "active"]
    assert df.loc[0, "cycle_days"] == 8
    assert str(df["created"].dtype) == "datetime64[ns]"
    assert df.loc[1, "tasks_total"] == 3


def test_history_has_git_dates_under_both_names(osproj: Path, monkeypatch: Any) -> None:
    """The first and last commit touching a change count its archive folder too."""
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("git is not installed")

    def git(*args: str, when: str) -> None:
        env = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when, "GIT_AUTHOR_NAME": "t",
               "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
               "GIT_COMMITTER_EMAIL": "t@example.org", "HOME": str(osproj)}
        subprocess.run(["git", "-C", str(osproj), *args], check=True, capture_output=True,
                       env={**env, "PATH": __import__("os").environ["PATH"]})

    git("init", "-q", when="2026-01-01T00:00:00+00:00")
    git("add", "-A", when="2026-01-01T00:00:00+00:00")
    git("commit", "-qm", "one", when="2026-01-02T10:00:00+00:00")
    write(osproj / "openspec" / "changes" / "add-a" / "design.md", "# d\n")
    git("add", "-A", when="2026-01-01T00:00:00+00:00")
    git("commit", "-qm", "two", when="2026-01-05T10:00:00+00:00")
    df = Project(osproj).history().set_index("change")
    assert str(df.loc["add-a", "git_first"]) == "2026-01-02 10:00:00+00:00"
    assert str(df.loc["add-a", "git_last"]) == "2026-01-05 10:00:00+00:00"
    assert str(df.loc["old-one", "git_first"]) == "2026-01-02 10:00:00+00:00"


def test_a_root_folder_named_openspec_is_a_root(tmp_path: Path) -> None:
    """A clone of OpenSpec's repository is a folder `openspec/` holding `openspec/`."""
    write(tmp_path / "openspec" / "openspec" / "changes" / "c" / "proposal.md", "# p\n")
    project = Project(tmp_path / "openspec")
    assert project.root == (tmp_path / "openspec").resolve()
    assert [c.name for c in project.changes()] == ["c"]


METADATA_CASES = {
    "known keys": "schema: spec-driven\ncreated: 2026-01-05\n",
    "unused keys": "schema: spec-driven\ngoal: improve it\nrisk_level: low\n"
                   "affected_areas: [api, ui]\n",
    "quoted key": 'schema: spec-driven\n"goal": 1\n',
    "nested value": "schema: spec-driven\ngoal:\n  - a\nrisk: |\n  goal: not a key\n",
    "crlf": "schema: spec-driven\r\ngoal: 1\r\n",
    "space before colon": "schema: spec-driven\ngoal : 1\n",
    "comment and flow": "# note\nschema: spec-driven\n\ngoal: [1,\n  2]\nx-y: z\n",
    "no schema": "created: 2026-01-05\ngoal: 1\n",
    "wrong type": "schema: spec-driven\ndescription: [1]\ngoal: 1\n",
}


@pytest.mark.parametrize("text", METADATA_CASES.values(), ids=list(METADATA_CASES))
def test_quick_metadata_reader_says_what_the_full_reader_says(
        tmp_path: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The libyaml reader without positions (most `.openspec.yaml` files, unused keys
    included) gives the change and the warnings, line and key, of the full reader."""
    from crewbook.artifacts import openspec

    file = tmp_path / ".openspec.yaml"
    file.write_bytes(text.encode())
    quick = openspec.read_metadata(file, "m.yaml", "spec-driven")
    monkeypatch.setattr(openspec, "_quick_metadata", lambda *_a: None)
    full = openspec.read_metadata(file, "m.yaml", "spec-driven")
    assert (quick[0].model_dump() if quick[0] else None) == (
        full[0].model_dump() if full[0] else None)
    assert quick[1] == full[1]
    assert all(p.line for p in full[1])


PLAIN_CASES = [
    "schema: spec-driven\ncreated: 2026-01-05\n", "schema: spec-driven\n",
    "schema: spec-driven\nskip_specs: true\nretire_capabilities: false\n",
    "created: 2026-01-05\nschema:   my-flow2  \n\n", "schema: yes\n", "schema: null\n",
    "schema: off\n", "schema: 0x1f\n", "schema: 123\n", "schema: 2026-01-05\n",
    "schema: a--b\n", "schema: spec-driven\ncreated: 20260105\n",
    "schema: spec-driven\ncreated: 2026-1-5\n", "schema: spec-driven\nskip_specs: yes\n",
    "schema: spec-driven\nskip_specs: True\n", "schema: a\nschema: b\n",
    "schema: spec-driven # note\n", "schema: spec-driven\r\n", "schema:spec-driven\n",
    "\ufeffschema: spec-driven\n", "schema: spec-driven\ngoal: x\n", " schema: spec-driven\n",
    "schema: spéc\n", "schema: spec-driven\ncreated: 2026-02-28\nskip_specs: false\n",
]


@pytest.mark.parametrize("text", PLAIN_CASES)
def test_plain_metadata_reads_what_yaml_reads_or_nothing(text: str) -> None:
    """The plain-line reader of `.openspec.yaml` gives what YAML gives, or leaves the
    file to YAML (None); the usual files are read by it."""
    import yaml

    from crewbook.artifacts.openspec import plain_metadata

    raw = text.encode()
    plain = plain_metadata(raw)
    if plain is not None:
        assert plain == yaml.load(raw, Loader=yaml.CSafeLoader)
        assert type(plain.get("created")) is type(
            yaml.load(raw, Loader=yaml.CSafeLoader).get("created"))
    assert (plain is not None) == (text in PLAIN_CASES[:4] or text == PLAIN_CASES[-1]), text
