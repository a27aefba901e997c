"""OpenSpec's own test cases, ported: task counting, main-spec validation, archive.

Ported from Fission-AI/OpenSpec (MIT licence) at commit
f1b521dffac38ed6638689cd28b0c204b1eef0f1: `test/utils/task-progress.test.ts`,
`test/core/validation.test.ts` (validateSpec, main-spec SHALL/MUST), and
`test/core/archive.test.ts` (merge rules, Purpose carry-over, refusals; its capability
retirement cases are in `test_openspec_retire.py`). The inputs
are theirs, shortened; the expected outcomes are the ones their tests assert. Archive
cases are also run through the CLI itself in `test_openspec_parity.py` (ARCHIVE_CASES).
"""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from crewbook.artifacts import Project
from crewbook.artifacts.archive import archive_change
from crewbook.artifacts.checklist import parse_tasks
from crewbook.artifacts.spec_checks import check_main_spec

from .test_archive_semantics import PURPOSE, REQ_A, REQ_B, main_spec, project, spec_bytes

# -- task-progress.test.ts: (content, total, completed)
TASKS = [
    ("## 1. Implementation\n- [x] 1.1 Parent task\n  - [ ] 1.1.1 Unfinished sub-task\n"
     "    - [x] 1.1.1.1 Deeper sub-task\n- [x] 1.2 Second parent\n", 4, 3),
    ("- [ ] 1.1 First\n* [x] 1.2 Second\n- [X] 1.3 Third\n", 3, 2),
    ("- [x] 1.1 Parent\n  - [ ] 1.1.1 Child\n    - [ ] 1.1.1.1 Grandchild\n"
     "\t- [ ] 1.1.2 Tab child\n", 4, 1),
    ("- [ ] 1.1 First   \r\n  - [x] 1.1.1 Child\r\n", 2, 1),
    ("- [ ]\n- [x]   \n", 2, 1),
    ("# Tasks\n## 1. Group\n- A plain bullet\n1. A numbered item\nProse about [x] brackets.\n"
     "- [ ] 1.1 Only this one counts\n", 1, 0),
    ("## 1. Work\n- [ ] 1.1 Real task\n\nWrite tasks like this:\n\n   ```md\n"
     "   - [ ] 2.1 Example task\n   ```\n", 2, 0),
    ("- [x] 1.1 Done\n```bash\nnpm test\n- [ ] 2.1 Real work\n", 2, 1),
    ("```md\n- [ ] 1.1 Task one\n- [x] 1.2 Task two\n```\n", 2, 1),
    ("- [ ] 1.1 Space checkbox\n* [x] 1.2 Star bullet, done\n- [X] 1.3 Uppercase done\n"
     "- [\t] 1.4 Tab inside the brackets\n- [\u00a0] 1.5 Non-breaking space\n"
     "-[x] 1.6 No space after the bullet\n", 6, 3),
]


@pytest.mark.parametrize(("content", "total", "done"), TASKS)
def test_task_counting(content: str, total: int, done: int) -> None:
    tasks = parse_tasks(content, "openspec")
    assert (len(tasks), sum(t.done for t in tasks)) == (total, done)


# -- validation.test.ts, validateSpec: (content, valid, error codes expected)
VALID_SPEC = """# User Authentication Spec

## Purpose
This specification defines the requirements for user authentication in the system.

## Requirements

### The system SHALL provide secure user authentication
The system SHALL provide secure user authentication mechanisms.

#### Scenario: Successful login
Given a user with valid credentials
When they submit the login form
Then they are authenticated and redirected to the dashboard
"""
HEAD = ("# Test Specification\n\n## Purpose\nThis specification validates that stray delta "
        "headers are rejected in main specs.\n\n## Requirements\n\n")
A_BLOCK = "### Requirement: A\nThe system SHALL do A.\n\n#### Scenario: A works\n- **WHEN** foo\n"
B_BLOCK = "### Requirement: B\nThe system SHALL do B.\n\n#### Scenario: B works\n- **WHEN** baz\n"
SPECS = [
    ("valid", VALID_SPEC, set()),
    ("missing overview", "# U\n\n## Requirements\n\n### The system SHALL x\n\n"
     "#### Scenario: Login\nGiven a user\n", {"spec_no_purpose"}),
    ("delta header", HEAD + A_BLOCK + "\n## MODIFIED Requirements\n\n" + B_BLOCK,
     {"spec_delta_header", "requirement_outside_requirements"}),
    ("after requirements", HEAD + A_BLOCK + "\n## Edge Cases\n\n" + B_BLOCK,
     {"requirement_outside_requirements"}),
    ("fenced delta example", HEAD + "### Requirement: Explain\nThe system SHALL allow "
     "quoting.\n\n```markdown\n## ADDED Requirements\n\n### Requirement: Example\n```\n\n"
     "#### Scenario: reader\n- **WHEN** a reader reviews\n", set()),
    ("keyword in header only", HEAD + "### Requirement: The system SHALL log\nIt logs.\n\n"
     "#### Scenario: s\n- WHEN x\n", set()),
    ("lowercase shall", HEAD + "### Requirement: L\nThe system shall log.\n\n"
     "#### Scenario: s\n- WHEN x\n", set()),
    ("wrapped keyword", HEAD + "### Requirement: W\nThe system, when asked,\nSHALL log.\n\n"
     "#### Scenario: s\n- WHEN x\n", set()),
    ("metadata before text", HEAD + "### Requirement: M\n**ID**: REQ-1\nThe system SHALL "
     "log.\n\n#### Scenario: s\n- WHEN x\n", set()),
    ("header-only requirement", HEAD + "### Requirement: H\n\n#### Scenario: s\n- WHEN x\n",
     {"requirement_no_text"}),
]


@pytest.mark.parametrize(("label", "content", "errors"), SPECS, ids=[s[0] for s in SPECS])
def test_main_spec_validation(label: str, content: str, errors: set[str]) -> None:
    found = {p.code for p in check_main_spec(content, "spec.md") if p.severity == "error"}
    assert found == errors


def test_strict_fails_on_warnings_only_specs() -> None:
    """validation.test.ts 'strict mode': a spec with only warnings is valid unless strict."""
    weak = HEAD + "### Requirement: L\nThe system logs.\n\n#### Scenario: s\n- WHEN x\n"
    problems = check_main_spec(weak, "spec.md")
    assert [p.severity for p in problems] == ["warning"]


# -- archive.test.ts: (id, main spec, delta, archived?, text the main spec must hold)
TODAY = dt.date(2026, 12, 4)
ARCHIVE_CASES: list[tuple[str, str | None, str, bool, str | None]] = [
    ("added-synced", main_spec(REQ_A, REQ_B), "## ADDED Requirements\n" + REQ_B, True, None),
    ("added-differs", main_spec(REQ_A, REQ_B),
     "## ADDED Requirements\n" + REQ_B.replace("b.", "bee."), False, None),
    ("renamed-synced", main_spec(REQ_A, REQ_B), "## RENAMED Requirements\n"
     "- FROM: `### Requirement: Old`\n- TO: `### Requirement: B`\n", True, None),
    ("renamed-neither", main_spec(REQ_A), "## RENAMED Requirements\n"
     "- FROM: `### Requirement: Old`\n- TO: `### Requirement: New`\n", False, None),
    ("removed-and-renamed", main_spec(REQ_A, REQ_B), "## RENAMED Requirements\n"
     "- FROM: `### Requirement: A`\n- TO: `### Requirement: C`\n\n"
     "## REMOVED Requirements\n### Requirement: A\n", False, None),
    ("removed-synced", main_spec(REQ_A, REQ_B),
     "## REMOVED Requirements\n### Requirement: Gone\n", True, None),
    ("modified-synced", main_spec(REQ_A, REQ_B), "## MODIFIED Requirements\n" + REQ_B, True,
     None),
    ("renamed-synced-case-variant", main_spec(REQ_A, REQ_B, REQ_A.replace(
        "Requirement: A", "Requirement: old").replace("Scenario: a", "Scenario: o")),
     "## RENAMED Requirements\n- FROM: `### Requirement: Old`\n- TO: `### Requirement: B`\n",
     False, None),
    ("removed-near-miss", main_spec(REQ_A, REQ_B),
     "## REMOVED Requirements\n### Requirement: a\n", False, None),
    ("removed-on-new-spec", None, "## ADDED Requirements\n" + REQ_B +
     "\n## REMOVED Requirements\n### Requirement: Gone\n", True, "### Requirement: B"),
    ("purpose-carried", None, f"## Purpose\n{PURPOSE}\n\n## ADDED Requirements\n" + REQ_B,
     True, PURPOSE),
    ("purpose-fenced-header", None, "```\n## Purpose\nnot real\n```\n\n## ADDED Requirements\n"
     + REQ_B, True, "TBD - created by archiving change"),
    ("purpose-hides-requirement", None, "## Purpose\nIntro.\n### Requirement: Hidden\n"
     "The system SHALL hide.\n\n## ADDED Requirements\n" + REQ_B, True,
     "TBD - created by archiving change"),
    ("purpose-heading", None, "## Purpose\n\n# Not a spec title\nSome body text that is "
     "comfortably longer than the strict-mode minimum.\n\n## ADDED Requirements\n" + REQ_B,
     True, "TBD - created by archiving change"),
    ("purpose-commented-out", None, "<!--\n## Purpose\nold\n-->\n## Purpose\n" + PURPOSE +
     "\n\n## ADDED Requirements\n" + REQ_B, True, PURPOSE),
    ("purpose-arrow", None, "## Purpose\nIngest --> transform --> load, for every source we "
     "read.\n\n## ADDED Requirements\n" + REQ_B, True, "Ingest --> transform"),
    ("existing-purpose-kept", main_spec(REQ_A), "## Purpose\nAnother purpose entirely, long "
     "enough to count as one.\n\n## ADDED Requirements\n" + REQ_B, True, PURPOSE),
    ("modified-on-new-spec", None, "## MODIFIED Requirements\n" + REQ_B, False, None),
    ("renamed-on-new-spec", None, "## RENAMED Requirements\n- FROM: `### Requirement: X`\n"
     "- TO: `### Requirement: Y`\n", False, None),
    ("trim-only-header", main_spec(REQ_A), "## MODIFIED Requirements\n" + REQ_A.replace(
        "Requirement: A", "Requirement:   A  ").replace("SHALL a.", "SHALL a, always."),
     True, "SHALL a, always."),
    ("modified-missing", main_spec(REQ_A), "## MODIFIED Requirements\n" + REQ_B, False, None),
    ("modified-drops-scenario", main_spec(REQ_A), "## MODIFIED Requirements\n"
     "### Requirement: A\nThe system SHALL a.\n\n#### Scenario: other\n- WHEN o\n", False,
     None),
    ("hidden-requirement", main_spec(REQ_A) + "\n## Notes\n\n" + REQ_B.replace("B", "C"),
     "## ADDED Requirements\n" + REQ_B, False, None),
    ("modified-old-name", main_spec(REQ_A), "## RENAMED Requirements\n"
     "- FROM: `### Requirement: A`\n- TO: `### Requirement: A2`\n\n"
     "## MODIFIED Requirements\n" + REQ_A, False, None),
    ("lowercase-delta-header", main_spec(REQ_A), "## added requirements\n" + REQ_B, True,
     "### Requirement: B"),
]


@pytest.mark.parametrize("case", ARCHIVE_CASES, ids=[c[0] for c in ARCHIVE_CASES])
def test_archive(tmp_path: Path, case: tuple[str, str | None, str, bool, str | None]) -> None:
    _id, main, delta, archived, holds = case
    root = project(tmp_path, main, delta)
    if not archived:
        with pytest.raises(Exception, match="cannot be archived"):
            archive_change(Project(root).change("add-b"), today=TODAY)
        assert (root / "openspec" / "changes" / "add-b").is_dir()
        if main is not None:
            assert spec_bytes(root) == main.encode()
        return
    archive_change(Project(root).change("add-b"), today=TODAY)
    assert (root / "openspec" / "changes" / "archive" / "2026-12-04-add-b").is_dir()
    if holds is not None:
        assert holds in spec_bytes(root).decode()


# -- task-progress.test.ts, getTaskProgressForChange (#1202): the tracked artifact's glob
GLOB_SCHEMA = """name: glob-tasks
version: 1
description: tasks artifact uses a nested glob
artifacts:
  - id: proposal
    generates: proposal.md
    description: Proposal
    template: proposal.md
    requires: []
  - id: tasks
    generates: "**/tasks.md"
    description: Nested tasks
    template: tasks.md
    requires: [proposal]
apply:
  requires: [tasks]
  tracks: "**/tasks.md"
"""
CUSTOM_TRACK = """name: custom-track
version: 1
artifacts:
  - id: proposal
    generates: proposal.md
    description: Proposal
    template: proposal.md
    requires: []
  - id: checklist
    generates: "work/*.md"
    description: Work checklist
    template: tasks.md
    requires: [proposal]
apply:
  requires: [checklist]
  tracks: "work/*.md"
"""
#: change: (schema, {file: content}, (completed, total))
PROGRESS: dict[str, tuple[str, dict[str, str], tuple[int, int]]] = {
    "globchange": ("glob-tasks", {"backend/tasks.md": "- [x] 1.1 a\n- [x] 1.2 b\n",
                                  "frontend/tasks.md": "- [x] 2.1 a\n- [ ] 2.2 b\n- [ ] 2.3 c\n"},
                   (3, 5)),
    "target": ("glob-tasks", {"backend/tasks.md": "- [x] a\n- [ ] b\n"}, (1, 2)),
    "sibling": ("glob-tasks", {"backend/tasks.md": "- [x] s1\n- [x] s2\n"}, (2, 2)),
    "customchange": ("custom-track", {"work/a.md": "- [x] a\n- [ ] b\n"}, (1, 2)),
    "badschema": ("does-not-exist", {"tasks.md": "- [x] a\n- [ ] b\n"}, (1, 2)),
    "plain": ("", {"tasks.md": "- [x] a\n- [x] b\n- [ ] c\n"}, (2, 3)),
    "notasks": ("glob-tasks", {"proposal.md": "## Why\nx\n"}, (0, 0)),
    "nested": ("", {"tasks.md": TASKS[0][0]}, (3, 4)),
}


def test_task_progress_follows_the_tracked_glob(tmp_path: Path,
                                                cli: Callable[..., Any]) -> None:
    """Tasks are counted in every file the tracked artifact's glob matches inside the
    change (never in archive/ or a sibling), under a tracked artifact of any name; a
    change whose schema is unknown falls back to its tasks.md."""
    from .test_openspec_parity import CLI, openspec  # it imports this module's cases

    base = tmp_path / "openspec"
    for name, text in (("glob-tasks", GLOB_SCHEMA), ("custom-track", CUSTOM_TRACK)):
        (base / "schemas" / name).mkdir(parents=True)
        (base / "schemas" / name / "schema.yaml").write_text(text)
        (base / "schemas" / name / "templates").mkdir()
        for template in ("proposal.md", "tasks.md"):
            (base / "schemas" / name / "templates" / template).write_text("# T\n")
    (base / "changes" / "archive" / "old").mkdir(parents=True)
    (base / "changes" / "archive" / "old" / "tasks.md").write_text("- [x] x\n- [x] y\n")
    for change, (schema, files, _) in PROGRESS.items():
        folder = base / "changes" / change
        folder.mkdir(parents=True)
        if schema:
            (folder / ".openspec.yaml").write_text(f"schema: {schema}\n")
        for rel, content in files.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_text(content)
    listed = cli("--project", tmp_path, "list", "--json").json["changes"]
    counts = {c["name"]: (c["completedTasks"], c["totalTasks"]) for c in listed}
    assert counts == {name: case[2] for name, case in PROGRESS.items()}
    status = cli("--project", tmp_path, "status", "--json").json["changes"]
    assert {c["change"]: (c["apply"]["done"], c["apply"]["total"]) for c in status} == counts
    if shutil.which("node") is not None and CLI.exists():  # the CLI itself, when installed
        theirs = {c["name"]: (c["completedTasks"], c["totalTasks"])
                  for c in openspec(tmp_path, "list", "--json")["changes"]}
        assert theirs == counts
