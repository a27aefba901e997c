"""Retiring a capability (`retire_capabilities: true`): OpenSpec's own test cases, ported.

From Fission-AI/OpenSpec (MIT licence) at commit f1b521dffac38ed6638689cd28b0c204b1eef0f1,
`test/core/archive.test.ts`, "capability retirement (#1302)": the inputs are theirs
(shortened), the outcomes the ones their tests assert. Each case is checked on crewbook
alone (the spec deleted or kept, the change archived or not, the words of the refusal),
and run through the OpenSpec CLI as well, the two trees compared byte for byte.
Not ported: cases about races, prompts, `--no-validate` and `--json` payloads of the CLI
(crewbook has none of these; its archive is one journaled commit, tested by the kill test
below), and nested capabilities (`platform/legacy-layer`, and the symlinked `platform/`
folder: crewbook archives one level of capability folders).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from .test_openspec_parity import CLI, tree

REQUIREMENT = (
    "### Requirement: The system SHALL provide a legacy layer\n"
    "The system SHALL provide a legacy layer to existing consumers.\n\n"
    "#### Scenario: Layer is available\n"
    "- **WHEN** a consumer imports the layer\n"
    "- **THEN** the legacy layer is available")
PURPOSE = ("Holds the behavior contract for the legacy layer that consumers still depend "
           "on today.")
REMOVE_ALL = ("# Legacy Layer - Changes\n\n## REMOVED Requirements\n\n"
              "### Requirement: The system SHALL provide a legacy layer\n"
              "**Reason**: The capability is retired.\n"
              "**Migration**: None; consumers already moved off it.\n")
MARKER = "schema: spec-driven\nretire_capabilities: true\n"
CORE = ("### Requirement: The system SHALL provide a core layer\n"
        "The system SHALL provide a core layer to every consumer.\n\n"
        "#### Scenario: Core is available\n"
        "- **WHEN** a consumer imports the core\n"
        "- **THEN** the core layer is available")
AUDIT_REMOVE = ("# Audit - Changes\n\n## REMOVED Requirements\n\n### Requirement: Audit trail\n"
                "**Reason**: x.\n**Migration**: None.\n")


def main_spec(name: str = "legacy-layer", requirements: str = REQUIREMENT) -> str:
    return (f"# {name} Specification\n\n## Purpose\n{PURPOSE}\n\n## Requirements\n\n"
            f"{requirements}\n")


def lines(*parts: str) -> str:
    return "\n".join(parts) + "\n"


class Case(NamedTuple):
    id: str
    specs: dict[str, str]          # main specs by path under openspec/specs/
    deltas: dict[str, str]         # delta specs by capability
    metadata: str | None           # the change's .openspec.yaml
    archived: bool                 # the change moves to the archive
    gone: tuple[str, ...] = ()     # main specs deleted (retired)
    says: str = ""                 # a phrase the refusal holds
    never: str = ""                # a phrase the refusal must not hold


LEGACY = "legacy-layer/spec.md"
CASES = [
    Case("retires-last-requirement", {LEGACY: main_spec()}, {"legacy-layer": REMOVE_ALL},
         MARKER, True, (LEGACY,)),
    Case("aborts-without-marker", {LEGACY: main_spec()}, {"legacy-layer": REMOVE_ALL},
         None, False, says="retire_capabilities: true"),
    Case("marker-false-not-declared", {LEGACY: main_spec()}, {"legacy-layer": REMOVE_ALL},
         "schema: spec-driven\nretire_capabilities: false\n", False,
         says="retire_capabilities: true", never="cannot be honoured"),
    Case("marker-without-schema", {LEGACY: main_spec()}, {"legacy-layer": REMOVE_ALL},
         "retire_capabilities: true\n", False, says="cannot be honoured"),
    Case("marker-not-boolean", {LEGACY: main_spec()}, {"legacy-layer": REMOVE_ALL},
         "schema: spec-driven\nretire_capabilities: yes-please\n", False,
         says="retire_capabilities"),
    Case("unmarked-with-notes", {LEGACY: main_spec() + "\n## Notes\n\nOwned by the platform "
                                 "team.\n"}, {"legacy-layer": REMOVE_ALL}, None, False,
         says='"Owned by the platform team."', never="retire_capabilities: true"),
    Case("also-broken-no-purpose", {LEGACY: f"# legacy-layer Specification\n\n"
                                    f"## Requirements\n\n{REQUIREMENT}\n"},
         {"legacy-layer": REMOVE_ALL}, None, False, never="retire_capabilities: true"),
    Case("second-requirements-section", {"audit/spec.md": lines(
        "# audit Specification", "", "## Purpose", PURPOSE, "", "## Requirements", "",
        "### Requirement: Audit trail",
        "The system SHALL record an audit entry for every privileged action.", "",
        "#### Scenario: Entry recorded", "- **WHEN** a privileged action runs",
        "- **THEN** an entry is recorded", "", "## Requirements", "",
        "### Seven year retention", "The system SHALL retain audit entries for seven years.",
        "", "#### Scenario: Early purge refused", "- **WHEN** a purge is attempted early",
        "- **THEN** it is refused")}, {"audit": AUDIT_REMOVE}, MARKER, False),
    Case("duplicate-requirement", {"audit/spec.md": lines(
        "# audit Specification", "", "## Purpose", PURPOSE, "", "## Requirements", "",
        "### Requirement: Same", "The system SHALL keep the first behavior.", "",
        "#### Scenario: First", "- **WHEN** the first path runs",
        "- **THEN** the first behavior remains", "", "### Requirement: Same",
        "The system SHALL keep the independently authored second behavior.", "",
        "#### Scenario: Second", "- **WHEN** the second path runs",
        "- **THEN** the second behavior remains")},
         {"audit": AUDIT_REMOVE.replace("Audit trail", "Same")}, MARKER, False),
    Case("h1-after-purpose", {LEGACY: lines(
        "# legacy-layer Specification", "", "## Purpose", PURPOSE, "", "# Architecture Notes",
        "Do not delete this independently authored section.", "", "## Requirements", "",
        REQUIREMENT)}, {"legacy-layer": REMOVE_ALL}, MARKER, False,
         says="cannot account for"),
    Case("commented-heading-boundary", {"audit/spec.md": lines(
        "# audit Specification", "", "## Purpose", PURPOSE, "", "## Requirements", "",
        "### Requirement: Audit trail", "The system SHALL record an audit entry.", "",
        "#### Scenario: Recorded", "- **WHEN** a privileged action runs",
        "- **THEN** an entry is recorded", "",
        "<!-- duplicate header left over from an old split", "## Purpose", "-->", "",
        "### Seven year retention", "The system SHALL retain audit entries for seven years.",
        "", "#### Scenario: Early purge refused", "- **WHEN** a purge is attempted early",
        "- **THEN** it is refused")}, {"audit": AUDIT_REMOVE}, MARKER, False),
    Case("authored-inside-removed-block", {LEGACY: lines(
        "# legacy-layer Specification", "", "## Purpose", PURPOSE, "", "## Requirements", "",
        REQUIREMENT, "", "MIGRATION RUNBOOK (authored by hand, not a heading):",
        "Step 1: rotate the customer keys before 2026-08-01.", "", "| host | owner |",
        "| --- | --- |", "| db-1 | payments |")}, {"legacy-layer": REMOVE_ALL}, MARKER, False,
         says="MIGRATION RUNBOOK"),
    Case("authored-above-requirements", {LEGACY: lines(
        "# legacy-layer Specification", "",
        'NOTE TO MAINTAINERS: the escrow keys live in the "legacy" vault.', "", "## Purpose",
        PURPOSE, "", "## Requirements", "", REQUIREMENT)}, {"legacy-layer": REMOVE_ALL},
         MARKER, False, says="NOTE TO MAINTAINERS"),
    Case("bulleted-note-below-scenarios", {LEGACY: lines(
        "# legacy-layer Specification", "", "## Purpose", PURPOSE, "", "## Requirements", "",
        REQUIREMENT, "",
        '- IMPORTANT: escrow keys live in the "legacy" vault; rotate before deleting.')},
         {"legacy-layer": REMOVE_ALL}, MARKER, False, says="escrow keys"),
    Case("rich-requirement-retires", {LEGACY: lines(
        "# legacy-layer Specification", "", "## Purpose", PURPOSE, "", "## Requirements", "",
        "### Requirement: The system SHALL provide a legacy layer",
        "`openspec legacy` SHALL provide a legacy layer to existing consumers.", "",
        "#### Scenario: Layer is available",
        "- **WHEN** a consumer runs `openspec legacy --check`",
        "- **THEN** these happen in order:", "  1. the layer loads",
        "  2. the consumer proceeds")}, {"legacy-layer": REMOVE_ALL}, MARKER, True, (LEGACY,)),
    Case("setext-section-in-purpose", {LEGACY: lines(
        "# legacy-layer Specification", "", "## Purpose", PURPOSE, "", "Data Migration Notes",
        "--------------------", "Export the table by hand first.", "", "## Requirements", "",
        REQUIREMENT)}, {"legacy-layer": REMOVE_ALL}, MARKER, False,
         says="Data Migration Notes"),
    Case("html-heading-in-purpose", {LEGACY: lines(
        "# legacy-layer Specification", "", "## Purpose", PURPOSE, "",
        "<h2>Data Migration Notes</h2>", "Export the table by hand first.", "",
        "## Requirements", "", REQUIREMENT)}, {"legacy-layer": REMOVE_ALL}, MARKER, False,
         says="Data Migration Notes"),
    Case("setext-inside-requirement", {LEGACY: lines(
        "# legacy-layer Specification", "", "## Purpose", PURPOSE, "", "## Requirements", "",
        "### Requirement: The system SHALL provide a legacy layer",
        "The system SHALL provide a legacy layer to existing consumers.", "",
        "Migration Notes", "---------------", "Keep this hand-written migration note.", "",
        "#### Scenario: Layer is available", "- **WHEN** a consumer imports the layer",
        "- **THEN** the legacy layer is available")}, {"legacy-layer": REMOVE_ALL}, MARKER,
         False, says="Migration Notes"),
    Case("indented-heading-before-scenario", {LEGACY: main_spec(requirements=lines(
        "### Requirement: The system SHALL provide a legacy layer",
        "The system SHALL preserve legacy behavior.", "", "   ### Requirement: Reader-visible",
        "The system SHALL keep this reader-visible requirement.", "",
        "#### Scenario: Legacy applies", "- **WHEN** legacy behavior is requested",
        "- **THEN** it remains available").rstrip())}, {"legacy-layer": REMOVE_ALL}, MARKER,
         False),
    Case("residual-heading-under-requirements", {LEGACY: lines(
        "# legacy-layer Specification", "", "## Purpose", PURPOSE, "", "### Requirements",
        "(a stray sub-heading a previous author left behind)", "", "## Requirements", "",
        "### Legacy note", "The system SHALL keep the legacy note until migration completes.",
        "", "#### Scenario: Note applies", "- **WHEN** a reader consults the note",
        "- **THEN** it applies", "", REQUIREMENT)}, {"legacy-layer": REMOVE_ALL}, MARKER,
         False, says="### Legacy note"),
    Case("other-files-kept", {LEGACY: main_spec(), "legacy-layer/NOTES.md": "Kept by hand.\n"},
         {"legacy-layer": REMOVE_ALL}, MARKER, True, (LEGACY,)),
    Case("nested-capability-kept", {LEGACY: main_spec(),
                                    "legacy-layer/sub/spec.md": main_spec("sub")},
         {"legacy-layer": REMOVE_ALL}, MARKER, True, (LEGACY,)),
    Case("already-gone", {}, {"legacy-layer": REMOVE_ALL}, MARKER, True),
    Case("already-gone-unmarked", {}, {"legacy-layer": REMOVE_ALL}, None, False),
    Case("preamble-heading-written", {LEGACY: main_spec(requirements=lines(
        "### Notes on scope",
        "The system SHALL treat the notes below as normative for the legacy layer.", "",
        "#### Scenario: Notes apply", "- **WHEN** a reader consults the notes",
        "- **THEN** the notes apply", "", REQUIREMENT).rstrip())},
         {"legacy-layer": REMOVE_ALL}, MARKER, True),
    Case("removal-already-synced", {LEGACY: f"# legacy-layer Specification\n\n## Purpose\n"
                                    f"{PURPOSE}\n\n## Requirements\n"},
         {"legacy-layer": REMOVE_ALL}, MARKER, False),
    Case("partial-removal-written", {LEGACY: main_spec(requirements=f"{REQUIREMENT}\n\n{CORE}")},
         {"legacy-layer": REMOVE_ALL}, MARKER, True),
    Case("failing-sibling-deletes-nothing", {LEGACY: main_spec()}, {
        "legacy-layer": REMOVE_ALL, "other-layer": "# Other Layer - Changes\n\n"
        "## ADDED Requirements\n\n### Requirement: The system SHALL do a new thing\n"
        "The system SHALL do a new thing.\n"}, MARKER, False),
    Case("retire-and-add", {LEGACY: main_spec()}, {
        "legacy-layer": REMOVE_ALL, "core-layer": f"# Core Layer - Changes\n\n"
        f"## ADDED Requirements\n\n{CORE}\n"}, MARKER, True, (LEGACY,)),
    Case("rename-then-remove", {LEGACY: main_spec(requirements=lines(
        "### Requirement: The system SHALL serve old clients",
        "The system SHALL serve old clients over the v1 endpoint.", "",
        "#### Scenario: Old client calls v1", "- **WHEN** an old client calls v1",
        "- **THEN** the response is served").rstrip())}, {"legacy-layer": lines(
            "# Legacy Layer - Changes", "", "## RENAMED Requirements", "",
            "- FROM: `### Requirement: The system SHALL serve old clients`",
            "- TO: `### Requirement: The system SHALL provide a legacy layer`", "",
            "## REMOVED Requirements", "",
            "### Requirement: The system SHALL provide a legacy layer",
            "**Reason**: The capability is retired.", "**Migration**: None.")},
         MARKER, True, (LEGACY,)),
]
NAME = "retire-it"
#: The cases run through the CLI by default (each starts node: about a second); all of
#: them with CREWBOOK_PARITY_SEEDS set (the slow mode of the parity tests).
THROUGH_CLI = CASES if os.environ.get("CREWBOOK_PARITY_SEEDS") else [
    c for c in CASES if c.id in {"retires-last-requirement", "aborts-without-marker",
                                 "authored-inside-removed-block", "already-gone",
                                 "retire-and-add", "nested-capability-kept"}]


def build(folder: Path, case: Case) -> Path:
    root = folder / "p"
    change = root / "openspec" / "changes" / NAME
    change.mkdir(parents=True)
    (root / "openspec" / "specs").mkdir(parents=True)
    (change / "tasks.md").write_text("- [x] Task 1\n")
    if case.metadata is not None:
        (change / ".openspec.yaml").write_text(case.metadata)
    for cap, text in case.deltas.items():
        (change / "specs" / cap).mkdir(parents=True)
        (change / "specs" / cap / "spec.md").write_text(text)
    for rel, text in case.specs.items():
        (root / "openspec" / "specs" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "openspec" / "specs" / rel).write_text(text)
    return root


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_retirement(tmp_path: Path, cli: Callable[..., Any], case: Case) -> None:
    root = build(tmp_path, case)
    before = tree(root)
    done = cli("--project", root, "archive", NAME)
    moved = not (root / "openspec" / "changes" / NAME).exists()
    assert (done.code == 0, moved) == (case.archived, case.archived), done.out + done.err
    after = tree(root)
    if not case.archived:
        assert after == before  # a refusal writes and deletes nothing
    for rel in case.specs:
        assert (f"specs/{rel}" in after) == (rel not in case.gone), rel
    for rel in case.gone:
        assert not (root / "openspec" / "specs" / rel).parent.exists() or any(
            (root / "openspec" / "specs" / rel).parent.iterdir())  # pruned when emptied
    text = done.out + done.err
    assert case.says in text
    if case.never:
        assert case.never not in text


def test_preview_says_which_spec_is_retired(tmp_path: Path, cli: Callable[..., Any]) -> None:
    root = build(tmp_path, CASES[0])
    shown = cli("--project", root, "archive", NAME, "--dry-run", "--json").json
    assert [(s["capability"], s["retired"], s["removed"]) for s in shown["specs"]] == [
        ("legacy-layer", True, 1)]
    assert (root / "openspec" / "specs" / LEGACY).is_file()  # a preview writes nothing


@pytest.mark.skipif(shutil.which("node") is None or not CLI.exists(),
                    reason="the OpenSpec CLI is not installed (cd tests/openspec_cli && npm ci)")
@pytest.mark.parametrize("case", THROUGH_CLI, ids=[c.id for c in THROUGH_CLI])
def test_retirement_as_the_cli(tmp_path: Path, cli: Callable[..., Any], case: Case) -> None:
    """The same case through `openspec archive -y`: the same tree, byte for byte."""
    theirs, ours = build(tmp_path / "theirs", case), build(tmp_path / "ours", case)
    env = dict(os.environ, OPENSPEC_TELEMETRY="0", DO_NOT_TRACK="1", NO_COLOR="1", TZ="UTC",
               HOME=str(tmp_path / ".home"))
    subprocess.run([str(CLI), "archive", NAME, "-y"], cwd=theirs, capture_output=True,
                   text=True, env=env, timeout=120, check=False)
    cli("--project", ours, "archive", NAME)
    assert tree(ours) == tree(theirs)
    assert folders(ours) == folders(theirs)  # a retired capability's folder pruned alike


def folders(root: Path) -> list[str]:
    """The folders under `root/openspec` holding something (the CLI makes an empty
    `changes/archive/` even when it refuses; nothing else differs)."""
    return sorted(p.relative_to(root).as_posix() for p in (root / "openspec").rglob("*")
                  if p.is_dir() and any(p.iterdir()))


@pytest.mark.skipif(os.name != "posix", reason="kill -9 and fork are POSIX")
def test_a_killed_retirement_leaves_the_old_project_or_the_new_one(tmp_path: Path) -> None:
    """A retirement beside an ordinary write, killed before and after every file-system
    call: opening the project then finds it wholly old or wholly new."""
    import signal

    from crewbook.artifacts import Project
    from crewbook.artifacts.archive import archive_change

    from .test_archive_commit import _with_hook

    case = next(c for c in CASES if c.id == "retire-and-add")
    old = tree(build(tmp_path / "old", case))
    done = build(tmp_path / "new", case)
    calls = [0]

    def count(_where: str, _name: str) -> None:
        calls[0] += 1

    with _with_hook(count):
        archive_change(Project(done).change(NAME))
    new = tree(done)
    seen = set()
    for nth in range(1, calls[0] + 1):
        root = build(tmp_path / f"k{nth}", case)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            def hook(_where: str, _name: str, nth: int = nth) -> None:
                calls[0] -= 1
                if calls[0] == -nth:
                    os.kill(os.getpid(), signal.SIGKILL)

            calls[0] = 0
            with _with_hook(hook):
                archive_change(Project(root).change(NAME))
            os._exit(0)
        _pid, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status), status
        Project(root)  # opening settles a committed archive (uncommitted staging, hidden,
        found = {k: v for k, v in tree(root).items()  # is dropped by the next archive)
                 if "/.crewbook-" not in k}
        state = "old" if found == old else "new" if found == new else "mixed"
        assert state != "mixed", f"killed at step {nth}"
        seen.add(state)
    assert seen == {"old", "new"}


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_a_spec_linked_from_outside_is_never_retired(tmp_path: Path,
                                                     cli: Callable[..., Any]) -> None:
    """archive.test.ts 'does not claim it deleted the target of a symlinked spec.md': the
    CLI refuses ("outside the allowed directory"); so does crewbook, deleting nothing."""
    root = build(tmp_path, CASES[0])
    shared = tmp_path / "shared-legacy.md"
    shared.write_text(main_spec())
    link = root / "openspec" / "specs" / LEGACY
    link.unlink()
    link.symlink_to(shared)
    done = cli("--project", root, "archive", NAME)
    assert done.code == 1
    assert "link" in done.err
    assert link.is_symlink()
    assert shared.read_text() == main_spec()
    assert (root / "openspec" / "changes" / NAME).is_dir()
