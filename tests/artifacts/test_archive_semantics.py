"""Archive with the OpenSpec CLI's semantics: what it refuses, what it writes, byte for
byte (each case checked by hand against `openspec archive -y` 1.13.2)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from crewbook.artifacts import Project
from crewbook.artifacts.archive import archive_change, archive_name

PURPOSE = "This capability covers the whole login flow for every user of the app."
REQ_A = "### Requirement: A\nThe system SHALL a.\n\n#### Scenario: a\n- WHEN a\n- THEN a\n"
REQ_B = "### Requirement: B\nThe system SHALL b.\n\n#### Scenario: b\n- WHEN b\n- THEN b\n"
TODAY = dt.date(2026, 12, 4)


def main_spec(*reqs: str, purpose: str = PURPOSE) -> str:
    return f"# auth Specification\n\n## Purpose\n{purpose}\n\n## Requirements\n\n" + \
        "\n".join(reqs)


def project(tmp_path: Path, main: str | bytes | None, delta: str | None,
            name: str = "add-b") -> Path:
    root = tmp_path / "p"
    change = root / "openspec" / "changes" / name
    change.mkdir(parents=True)
    (change / "proposal.md").write_text("## Why\nBecause.\n")
    if main is not None:
        (root / "openspec" / "specs" / "auth").mkdir(parents=True)
        data = main if isinstance(main, bytes) else main.encode()
        (root / "openspec" / "specs" / "auth" / "spec.md").write_bytes(data)
    if delta is not None:
        (change / "specs" / "auth").mkdir(parents=True)
        (change / "specs" / "auth" / "spec.md").write_text(delta)
    return root


def spec_bytes(root: Path, cap: str = "auth") -> bytes:
    return (root / "openspec" / "specs" / cap / "spec.md").read_bytes()


def archive(root: Path, name: str = "add-b") -> Any:
    return archive_change(Project(root).change(name), today=TODAY)


def test_a_duplicated_heading_refuses_instead_of_dropping_a_block(
        tmp_path: Path, cli: Callable[..., Any]) -> None:
    first = REQ_A
    second = REQ_A.replace("SHALL a.", "SHALL also a.").replace("Scenario: a", "Scenario: a2")
    before = main_spec(first, second)
    root = project(tmp_path, before, "## ADDED Requirements\n" + REQ_B)
    done = cli("--project", root, "archive", "add-b", "--json")
    assert done.code == 1
    assert "duplicate_requirement" in done.out + done.err or "repeats" in done.out + done.err
    assert spec_bytes(root) == before.encode()  # nothing lost, nothing written
    assert (root / "openspec" / "changes" / "add-b").is_dir()


def test_a_dated_name_keeps_its_date(tmp_path: Path) -> None:
    root = project(tmp_path, main_spec(REQ_A), "## ADDED Requirements\n" + REQ_B,
                   name="2025-03-04-add-b")
    change = Project(root).change("2025-03-04-add-b")
    assert archive_name(change, TODAY) == "2025-03-04-add-b"
    archive(root, "2025-03-04-add-b")
    assert (root / "openspec" / "changes" / "archive" / "2025-03-04-add-b").is_dir()


def test_a_change_without_deltas_archives_and_touches_no_spec(tmp_path: Path) -> None:
    before = main_spec(REQ_A)
    root = project(tmp_path, before, None)
    archive(root)
    assert (root / "openspec" / "changes" / "archive" / "2026-12-04-add-b").is_dir()
    assert spec_bytes(root) == before.encode()


def test_an_already_synced_added_is_a_no_op(tmp_path: Path) -> None:
    before = main_spec(REQ_A, REQ_B) + "\n\n\n"  # odd blank lines: left as they are
    root = project(tmp_path, before, "## ADDED Requirements\n" + REQ_B)
    archive(root)
    assert spec_bytes(root) == before.encode()


def test_an_added_with_other_text_is_refused(tmp_path: Path) -> None:
    root = project(tmp_path, main_spec(REQ_A, REQ_B),
                   "## ADDED Requirements\n" + REQ_B.replace("SHALL b", "SHALL bb"))
    with pytest.raises(Exception, match="already exists"):
        archive(root)


def test_crlf_main_spec_stays_crlf(tmp_path: Path) -> None:
    before = main_spec(REQ_A).replace("\n", "\r\n").encode()
    root = project(tmp_path, before, "## ADDED Requirements\n" + REQ_B)
    archive(root)
    expected = main_spec(REQ_A, REQ_B).rstrip("\n").replace("\n", "\r\n") + "\r\n"
    assert spec_bytes(root) == expected.encode()


@pytest.mark.parametrize("purpose", ["", "<!-- what is it for? -->",
                                     "```\nonly a sample\n```",
                                     "Hides\n### Requirement: X\nThe system SHALL x.\n"])
def test_a_new_spec_gets_the_placeholder_purpose(tmp_path: Path, purpose: str) -> None:
    delta = f"## Purpose\n{purpose}\n\n## ADDED Requirements\n{REQ_B}"
    root = project(tmp_path, None, delta)
    archive(root)
    text = spec_bytes(root).decode()
    assert "TBD - created by archiving change add-b. Update Purpose after archive." in text


def test_a_new_spec_carries_a_readable_purpose(tmp_path: Path) -> None:
    root = project(tmp_path, None, f"## Purpose\n{PURPOSE}\n\n## ADDED Requirements\n{REQ_B}")
    archive(root)
    assert spec_bytes(root).decode() == (
        f"# auth Specification\n\n## Purpose\n{PURPOSE}\n\n## Requirements\n\n{REQ_B}")


@pytest.mark.parametrize(("main", "delta"), [
    (main_spec(REQ_A), "## REMOVED Requirements\n### Requirement: A\n"),  # last one removed
    (main_spec(REQ_A, purpose=""), "## ADDED Requirements\n" + REQ_B),  # no Purpose
    (main_spec(REQ_A, "### Requirement: C\nThe system SHALL c.\n"),  # C has no scenario
     "## ADDED Requirements\n" + REQ_B),
])
def test_archive_refuses_when_the_result_is_invalid(tmp_path: Path, main: str,
                                                    delta: str) -> None:
    root = project(tmp_path, main, delta)
    with pytest.raises(Exception, match="cannot be archived"):
        archive(root)
    assert spec_bytes(root) == main.encode()


#: (id, main spec, delta, change name): archived by both tools, trees compared byte for
#: byte in test_openspec_parity.py.
CASES: list[tuple[str, str | bytes | None, str | None, str]] = [
    ("duplicate-heading", main_spec(REQ_A, REQ_A.replace("a.", "aa.")),
     "## ADDED Requirements\n" + REQ_B, "add-b"),
    ("dated", main_spec(REQ_A), "## ADDED Requirements\n" + REQ_B, "2025-03-04-add-b"),
    ("no-deltas", main_spec(REQ_A), None, "add-b"),
    ("synced-added", main_spec(REQ_A, REQ_B) + "\n\n\n", "## ADDED Requirements\n" + REQ_B,
     "add-b"),
    ("synced-renamed", main_spec(REQ_A, REQ_B),
     "## RENAMED Requirements\n- FROM: `### Requirement: Old`\n- TO: `### Requirement: B`\n",
     "add-b"),
    ("crlf", main_spec(REQ_A).replace("\n", "\r\n").encode(),
     "## ADDED Requirements\n" + REQ_B, "add-b"),
    ("double-blank", main_spec(REQ_A).replace("## Purpose\n", "## Purpose\n\n\n"),
     "## ADDED Requirements\n" + REQ_B, "add-b"),
    ("new-empty-purpose", None, "## Purpose\n\n## ADDED Requirements\n" + REQ_B, "add-b"),
    ("new-comment-purpose", None,
     "## Purpose\n<!-- fill in -->\n\n## ADDED Requirements\n" + REQ_B, "add-b"),
    ("new-fenced-purpose", None,
     "## Purpose\n```\nx\n```\n\n## ADDED Requirements\n" + REQ_B, "add-b"),
    ("new-purpose-with-comment", None,
     f"## Purpose\n{PURPOSE}\n<!-- note -->\n\n## ADDED Requirements\n" + REQ_B, "add-b"),
    ("new-purpose", None, f"## Purpose\n{PURPOSE}\n\n## ADDED Requirements\n" + REQ_B,
     "add-b"),
    ("last-removed", main_spec(REQ_A), "## REMOVED Requirements\n### Requirement: A\n",
     "add-b"),
    ("no-purpose", main_spec(REQ_A, purpose=""), "## ADDED Requirements\n" + REQ_B, "add-b"),
    ("added-no-space", main_spec(REQ_A), "## ADDED Requirements\n" +
     REQ_B.replace("### Requirement:", "###Requirement:"), "add-b"),
    ("modified", main_spec(REQ_A, REQ_B), "## MODIFIED Requirements\n" +
     REQ_A.replace("SHALL a.", "SHALL a, always.") + "\n#### Scenario: new\n- WHEN n\n",
     "add-b"),
]


def build_case(folder: Path, case: tuple[str, str | bytes | None, str | None, str]) -> Path:
    """The project of one case, in `folder`."""
    _id, main, delta, name = case
    return project(folder, main, delta, name)


def test_a_main_spec_md_that_is_a_folder_makes_the_change_invalid(
        tmp_path: Path, cli: Callable[..., Any]) -> None:
    root = project(tmp_path, None, "## ADDED Requirements\n" + REQ_B)
    (root / "openspec" / "specs" / "auth" / "spec.md").mkdir(parents=True)
    done = cli("validate", root, "--json")
    assert "main_spec_unreadable" in {p["code"] for p in done.json["problems"]}
    assert cli("--project", root, "archive", "add-b").code == 1
    assert (root / "openspec" / "specs" / "auth" / "spec.md").is_dir()


#: skip_specs marker cases: (id, .openspec.yaml, what to put under specs/)
SKIP_CASES = [
    ("declared", "schema: spec-driven\nskip_specs: true\n", None),
    ("no-schema", "skip_specs: true\n", None),
    ("specs-is-a-file", "schema: spec-driven\nskip_specs: true\n", "file"),
    ("dot-files-only", "schema: spec-driven\nskip_specs: true\n", "dot"),
    ("real-files", "schema: spec-driven\nskip_specs: true\n", "note"),
    # the marker with a schema the project lacks is not honoured: no deltas, refused
    ("unknown-schema", "schema: no-such-schema\nskip_specs: true\n", None),
    # `specs` a file without the marker: the CLI's archive stops on it (ENOTDIR)
    ("specs-file-no-marker", "schema: spec-driven\n", "file"),
]


def build_skip_case(folder: Path, case: tuple[str, str, str | None]) -> Path:
    """A project whose change `skip-b` carries the skip_specs case."""
    _id, meta, specs = case
    root = project(folder, main_spec(REQ_A), None, "skip-b")
    change = root / "openspec" / "changes" / "skip-b"
    (change / ".openspec.yaml").write_text(meta)
    if specs == "file":
        (change / "specs").write_text("not a folder\n")
    elif specs == "dot":
        (change / "specs").mkdir()
        (change / "specs" / ".keep").write_text("")
    elif specs == "note":
        (change / "specs").mkdir()
        (change / "specs" / "notes.txt").write_text("a note\n")
    return root


@pytest.mark.parametrize(("case", "archived"), [
    (SKIP_CASES[0], True), (SKIP_CASES[1], False), (SKIP_CASES[2], False),
    (SKIP_CASES[3], True), (SKIP_CASES[4], False), (SKIP_CASES[5], False),
    (SKIP_CASES[6], False)], ids=[c[0] for c in SKIP_CASES])
def test_the_skip_specs_marker(tmp_path: Path, cli: Callable[..., Any],
                               case: tuple[str, str, str | None], archived: bool) -> None:
    root = build_skip_case(tmp_path, case)
    assert (cli("validate", root / "openspec" / "changes" / "skip-b").code == 0) == archived
    cli("--project", root, "archive", "skip-b")
    assert (root / "openspec" / "changes" / "skip-b").exists() != archived


def test_specs_as_a_file_is_an_error_in_status(tmp_path: Path, cli: Callable[..., Any]
                                               ) -> None:
    """`specs` a file: the CLI's status stops on it (ENOTDIR); crewbook's status says so
    as an error, with or without the marker, and still shows the rest."""
    for case in (SKIP_CASES[2], SKIP_CASES[6]):
        root = build_skip_case(tmp_path / case[0], case)
        done = cli("--project", root, "status", "--json")
        change = done.json["changes"][0]
        assert [p["code"] for p in change["problems"]] == ["specs_not_a_folder"]
        assert change["problems"][0]["path"] == "openspec/changes/skip-b/specs"
        assert change["artifacts"]
    assert done.code == 1


def test_delta_files_from_the_status_scan_match_a_walk(tmp_path: Path) -> None:
    """validate reuses the status scan to find delta files; it finds what a walk finds."""
    from crewbook.artifacts.delta_checks import _specs_from, _unread_from, unread_delta_files
    from crewbook.artifacts.specs import spec_files
    from crewbook.artifacts.status import scan_files
    from crewbook.artifacts.synthetic import make_openspec_project

    root = make_openspec_project(tmp_path / "p", 12, seed=5, mistakes=True)
    change = root / "openspec" / "changes" / "login-change-0000"
    (change / "specs" / "area" / "nested").mkdir(parents=True)
    (change / "specs" / "area" / "nested" / "spec.md").write_text("## ADDED Requirements\n")
    (change / "specs" / "note.md").write_text("## ADDED Requirements\n")
    (change / "specs" / ".hidden").mkdir()
    (change / "specs" / ".hidden" / "spec.md").write_text("## ADDED Requirements\n")
    (change / "specs" / "spec.md").write_text("## ADDED Requirements\n")
    seen = 0
    for folder in sorted((root / "openspec" / "changes").iterdir()):
        scanned = scan_files(folder)
        if scanned is None or folder.name == "archive":
            continue
        assert _specs_from(scanned, folder) == spec_files(folder / "specs"), folder.name
        assert _unread_from(scanned, folder) == unread_delta_files(folder / "specs")
        seen += 1
    assert seen >= 12
