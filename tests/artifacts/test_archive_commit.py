"""The archive's staging, journal, lock and recovery: a plan crewbook did not write is
refused and never executed, a change outside the project is never moved, kill -9 at
every step leaves the old project or the new one, and two archives never both act."""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from crewbook.artifacts import Project, archive_change
from crewbook.artifacts.archive import ArchiveRefused, recover_archives
from crewbook.artifacts.archive_commit import JOURNAL
from crewbook.errors import ChangeNotFoundError

pytestmark = pytest.mark.skipif(os.name != "posix", reason="kill -9 and fork are POSIX")

MAIN = """# {cap} Specification

## Purpose
The {cap} part.

## Requirements
### Requirement: Base {cap}
The system SHALL do {cap}.

#### Scenario: done
- **WHEN** asked
- **THEN** done
"""

DELTA = """## ADDED Requirements
### Requirement: Extra {cap}
The system SHALL do more {cap}.

#### Scenario: more
- **WHEN** asked again
- **THEN** more
"""

CAPS = [f"cap{i:02d}" for i in range(8)]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def make_project(root: Path, caps: list[str] = CAPS, name: str = "change-x") -> Path:
    base = root / "openspec"
    for cap in caps:
        write(base / "specs" / cap / "spec.md", MAIN.format(cap=cap))
        write(base / "changes" / name / "specs" / cap / "spec.md", DELTA.format(cap=cap))
    write(base / "changes" / name / "proposal.md", "# p\n")
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and ".crewbook" not in p.name}


def state_of(root: Path, caps: list[str] = CAPS) -> str:
    """"old" or "new" when the project is wholly one of them, else a description."""
    project = Project(root)  # opening settles an archive a kill left committed
    active = [c.name for c in project.changes()]
    archived = [a.name for a in project.archived()]
    extra = ["Extra" in (root / "openspec/specs" / c / "spec.md").read_text() for c in caps]
    leftovers = sorted(p.name for p in (root / "openspec/changes/archive").glob(".crewbook*")
                       ) if (root / "openspec/changes/archive").is_dir() else []
    if active == ["change-x"] and archived == [] and not any(extra):
        return "old"
    if active == [] and archived == ["change-x"] and all(extra) and leftovers == []:
        return "new"
    return f"mixed: active={active} archived={archived} specs={extra} left={leftovers}"


# ---------------------------------------------------------------- escapes


def shipped_plan(root: Path, plan: dict[str, Any] | str) -> Path:
    folder = root / "openspec/changes/archive/.crewbook-pending-x"
    text = plan if isinstance(plan, str) else json.dumps(plan)
    write(folder / "plan.json", text)
    return folder


def test_a_shipped_plan_never_moves_a_folder_outside_the_project(
        tmp_path: Path, cli: Callable[..., Any]) -> None:
    root = make_project(tmp_path / "repo")
    victim = write(tmp_path / "victim" / "data.txt", "precious").parent
    stolen = tmp_path / "stolen"
    shipped_plan(root, {"change": "x", "source": str(victim), "target": str(stolen),
                        "specs": []})
    done = cli("--project", root, "archive", "change-x")
    assert done.code == 1, done.out + done.err
    assert "Traceback" not in done.err
    assert "crewbook-pending-x" in done.err
    assert (victim / "data.txt").read_text() == "precious"
    assert not stolen.exists()
    assert state_of(root) == "old"  # refused: nothing archived either


def test_a_shipped_plan_never_writes_a_file_outside_the_project(
        tmp_path: Path, cli: Callable[..., Any]) -> None:
    root = make_project(tmp_path / "repo")
    outside = write(tmp_path / "f", "kept")
    shipped_plan(root, {"change": "x", "source": "", "target": "", "specs": ["../../../f"]})
    # what the old recovery would have moved: staging/specs/../../../f onto specs/../../../f
    write(root / "openspec/changes/f", "overwritten")
    done = cli("--project", root, "archive", "change-x")
    assert done.code == 1
    assert outside.read_text() == "kept"
    assert "Traceback" not in done.err


@pytest.mark.parametrize("plan", ["not json {", "[1, 2]", json.dumps({"change": "x"})])
def test_a_shipped_plan_of_any_shape_is_a_clean_refusal(
        tmp_path: Path, cli: Callable[..., Any], plan: str) -> None:
    root = make_project(tmp_path / "repo")
    shipped_plan(root, plan)
    done = cli("--project", root, "archive", "change-x")
    assert done.code == 1
    assert "Traceback" not in done.err
    assert "crewbook-pending-x" in done.err
    assert "foreign_staging" in done.err


def test_a_shipped_journal_is_refused_and_never_executed(
        tmp_path: Path, cli: Callable[..., Any]) -> None:
    """A journal and staging folder as crewbook writes them, but shipped (copied): the
    staging's identity is not the one recorded, so nothing is moved or written."""
    root = make_project(tmp_path / "repo")
    archive = root / "openspec/changes/archive"
    staging = archive / ".crewbook-pending-2026-01-01-change-x"
    write(staging / "specs/cap00/spec.md", "# hijacked\n")
    write(staging / "owner.json", json.dumps({"owner": [1, 2]}))
    write(archive / JOURNAL, json.dumps({
        "v": 1, "change": "change-x", "target": "2026-01-01-change-x",
        "staging": staging.name, "specs": ["cap00/spec.md"], "owner": [1, 2]}))
    before = snapshot(root)
    assert any(p.code == "journal_refused" for p in Project(root).notes)  # readers warn
    assert snapshot(root) == before
    done = cli("--project", root, "archive", "change-x")
    assert done.code == 1
    assert "not executed" in done.err
    assert snapshot(root) == before


@pytest.mark.parametrize("bad", ["../../../victim", "/abs", "a/b", "..", ""])
def test_a_journal_naming_a_path_is_refused(tmp_path: Path, bad: str) -> None:
    root = make_project(tmp_path / "repo")
    archive = root / "openspec/changes/archive"
    staging = archive / ".crewbook-pending-t"
    staging.mkdir(parents=True)
    st = os.lstat(staging)
    write(archive / JOURNAL, json.dumps({
        "v": 1, "change": bad, "target": "t", "staging": staging.name, "specs": [],
        "owner": [st.st_dev, st.st_ino]}))
    with pytest.raises(ArchiveRefused) as info:
        recover_archives(Project(root))
    assert info.value.problems[0].key == "change"


def test_a_folder_outside_the_project_is_never_archived(
        tmp_path: Path, cli: Callable[..., Any]) -> None:
    root = make_project(tmp_path / "repo")
    outside = make_project(tmp_path / "other", name="change-y") / "openspec/changes/change-y"
    done = cli("--project", root, "archive", str(outside))
    assert done.code == 1, done.out + done.err
    assert "not a change of the project" in done.err
    assert outside.is_dir()
    assert state_of(root) == "old"


def test_an_archived_change_or_a_link_is_not_archived_again(tmp_path: Path) -> None:
    root = make_project(tmp_path / "repo")
    elsewhere = make_project(tmp_path / "other", name="change-y") / "openspec/changes/change-y"
    link = root / "openspec/changes/change-y"
    link.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(ArchiveRefused) as info:
        archive_change(Project(root).change("change-y"))
    assert info.value.problems[0].code == "change_is_link"
    assert elsewhere.is_dir()


# ---------------------------------------------------------------- commit and recovery


def test_archive_makes_the_new_project_and_leaves_no_staging(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    archive_change(Project(root).change("change-x"))
    assert state_of(root) == "new"


def test_what_archive_returns_says_it_was_done(tmp_path: Path,
                                              cli: Callable[..., Any]) -> None:
    """The preview says "would archive"; the archive's report, in Python and from the
    command line, says "archived" (it said "would archive" after the fact)."""
    root = make_project(tmp_path / "a")
    preview = Project(root).change("change-x").archive_preview()
    assert "would archive" in str(preview)
    assert not preview.to_dict()["archived"]
    done = archive_change(Project(root).change("change-x"))
    assert done.archived
    assert done.to_dict()["archived"]
    assert str(done).startswith("Archive of change-x: archived → openspec/changes/archive/")
    assert "would" not in str(done)
    assert "preview" not in str(done) + done.diff()
    other = make_project(tmp_path / "b")
    said = cli("--project", other, "archive", "change-x")
    assert said.code == 0
    assert "archived →" in said.out
    assert "would" not in said.out


#: The file-system calls an archive makes; the kill test stops the archive at each.
MUTATIONS = (("os", "replace"), ("os", "rename"), ("os", "unlink"), ("os", "mkdir"),
             ("os", "fsync"), ("shutil", "rmtree"))


@contextmanager
def _with_hook(hook: Callable[[str, str], None]) -> Iterator[None]:
    """Call `hook(where, name)` before ("before") and after ("after") every mutation."""
    saved = []
    for module_name, name in MUTATIONS:
        module = os if module_name == "os" else shutil
        real = getattr(module, name)
        saved.append((module, name, real))

        def wrapped(*a: Any, _real: Any = real, _name: str = name, **k: Any) -> Any:
            hook("before", _name)
            out = _real(*a, **k)
            hook("after", _name)
            return out

        setattr(module, name, wrapped)
    try:
        yield
    finally:
        for module, name, real in saved:
            setattr(module, name, real)


def _archive_in_child(root: Path, kill_at: int) -> int:
    """Fork; the child archives and kills itself (SIGKILL) at hook call `kill_at`.
    Returns the child's wait status."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            calls = [0]

            def hook(_where: str, _name: str) -> None:
                calls[0] += 1
                if calls[0] == kill_at:
                    os.kill(os.getpid(), signal.SIGKILL)

            with _with_hook(hook):
                archive_change(Project(root).change("change-x"))
            os._exit(0)
        except BaseException:
            os._exit(3)
    _pid, status = os.waitpid(pid, 0)
    return status


def test_kill_9_at_every_step_leaves_the_old_project_or_the_new_one(tmp_path: Path) -> None:
    """Killed before and after every file-system call of an archive: opening the project
    afterwards finds it wholly old or wholly new, and a next archive completes it."""
    template = make_project(tmp_path / "template", caps=CAPS[:2])
    calls = [0]

    def count(_where: str, _name: str) -> None:
        calls[0] += 1

    counted = make_project(tmp_path / "counted", caps=CAPS[:2])
    with _with_hook(count):
        archive_change(Project(counted).change("change-x"))
    assert state_of(counted, CAPS[:2]) == "new"
    seen = set()
    for nth in range(1, calls[0] + 1):
        root = tmp_path / f"k{nth}"
        shutil.copytree(template, root)
        status = _archive_in_child(root, nth)
        assert os.WIFSIGNALED(status), status
        assert os.WTERMSIG(status) == signal.SIGKILL
        state = state_of(root, CAPS[:2])
        assert state in ("old", "new"), f"killed at step {nth}: {state}"
        seen.add(state)
        if state == "old":
            archive_change(Project(root).change("change-x"))
            assert state_of(root, CAPS[:2]) == "new"
    assert seen == {"old", "new"}  # the kills fell on both sides of the commit point


def test_two_archives_at_once_never_both_act(tmp_path: Path) -> None:
    """Two processes archive the same change at the same instant: one does, the other is
    refused cleanly, and every main spec has the change's requirement."""
    caps = [f"s{i:02d}" for i in range(20)]
    for trial in range(8):  # the loser may be reading the change as the winner moves it
        root = make_project(tmp_path / f"t{trial}", caps=caps)
        read_end, write_end = os.pipe()
        pids = []
        for _ in range(2):
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child
                code = 3
                try:
                    os.close(write_end)
                    os.read(read_end, 1)  # the starting gun
                    archive_change(Project(root).change("change-x"))
                    code = 0
                except (ArchiveRefused, ChangeNotFoundError):  # refused under the lock,
                    code = 1  # or (a loaded machine) opened after the other had finished
                finally:
                    os._exit(code)
            pids.append(pid)
        os.close(read_end)
        os.close(write_end)  # both children wake at once
        codes = sorted(os.WEXITSTATUS(os.waitpid(p, 0)[1]) for p in pids)
        assert codes == [0, 1], codes
        assert state_of(root, caps) == "new"
        for cap in caps:
            text = (root / "openspec/specs" / cap / "spec.md").read_text()
            assert text.count("### Requirement: Extra") == 1, cap


def test_a_change_archived_while_it_is_read_is_refused_as_gone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check before the lock reads the change while another archive moves it: the
    lock decides, and the loser is refused as ``change_gone``, never a FileNotFoundError."""
    import crewbook.artifacts.archive as archive

    root = make_project(tmp_path, caps=CAPS[:2])
    change = Project(root).change("change-x")
    real = archive.preview_archive
    calls = 0

    def moved_while_read(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:  # the other archive wins while this one reads the deltas
            archive_change(Project(root).change("change-x"))
            raise FileNotFoundError(2, "No such file or directory", "spec.md")
        return real(*args, **kwargs)

    monkeypatch.setattr(archive, "preview_archive", moved_while_read)
    with pytest.raises(ArchiveRefused) as refused:
        archive_change(change)
    assert [p.code for p in refused.value.problems] == ["change_gone"]
    assert state_of(root, CAPS[:2]) == "new"


def test_a_reader_opening_the_project_waits_for_a_running_archive(tmp_path: Path) -> None:
    """While an archive holds the lock with its journal committed, a reader opening the
    project waits, then sees the new project whole."""
    root = make_project(tmp_path, caps=CAPS[:2])
    read_end, write_end = os.pipe()
    go_read, go_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(read_end)

            replaced = [0]

            def hook(where: str, name: str) -> None:
                journal = root / "openspec/changes/archive" / JOURNAL
                if where == "after" and name == "replace" and journal.exists():
                    replaced[0] += 1
                    if replaced[0] == 2:  # committed, one spec of two moved
                        os.write(write_end, b"x")
                        os.read(go_read, 1)

            with _with_hook(hook):
                archive_change(Project(root).change("change-x"))
            os._exit(0)
        except BaseException:
            os._exit(3)
    os.close(write_end)
    assert os.read(read_end, 1) == b"x"
    # the child goes on a moment after this reader opens the project mid-archive
    threading.Timer(0.2, os.write, (go_write, b"g")).start()
    assert state_of(root, CAPS[:2]) == "new"
    assert os.WEXITSTATUS(os.waitpid(pid, 0)[1]) == 0
