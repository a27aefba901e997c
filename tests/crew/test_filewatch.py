"""`crew.backlog.FileWatch`: the per-act look at a tasks file sees every way a file changes
(an edit in place, a rename over it, a deletion, a symbolic link swapped), with a held
descriptor on POSIX and the path elsewhere."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from crewbook.crew import backlog
from crewbook.crew.backlog import FileWatch


@pytest.fixture(params=["held", "path"])
def hold(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Every test runs with the descriptor kept (POSIX) and with `stat` of the path."""
    held = request.param == "held" and os.name == "posix"
    monkeypatch.setattr(backlog, "_HOLD", held)
    return held


def _file(tmp_path: Path, text: str = "- [ ] 1.1 a\n") -> Path:
    path = tmp_path / "tasks.md"
    path.write_text(text)
    return path


def test_an_untouched_file_is_the_same(tmp_path: Path, hold: bool) -> None:
    watch = FileWatch(str(_file(tmp_path)))
    assert watch.same()
    assert watch.same()
    assert (watch._fd is not None) is hold


def test_an_edit_in_place_of_the_same_size_is_seen(tmp_path: Path, hold: bool) -> None:
    path = _file(tmp_path)
    watch = FileWatch(str(path))
    before = path.stat().st_mtime_ns
    path.write_text("- [x] 1.1 a\n")  # a box checked: same size
    os.utime(path, ns=(before + 1_000_000, before + 1_000_000))  # past a coarse clock tick
    assert not watch.same()


def test_a_file_renamed_over_it_or_deleted_is_seen(tmp_path: Path, hold: bool) -> None:
    path = _file(tmp_path)
    watch = FileWatch(str(path))
    new = tmp_path / "new.md"
    new.write_text("- [ ] 1.1 a\n")
    stamp = path.stat().st_mtime_ns
    os.utime(new, ns=(stamp, stamp))  # same time, same size: only the file differs
    os.replace(new, path)
    assert not watch.same()
    watch = FileWatch(str(path))
    path.unlink()
    assert not watch.same()


def test_an_absent_file_stays_the_same_until_it_appears(tmp_path: Path, hold: bool) -> None:
    path = tmp_path / "tasks.md"
    watch = FileWatch(str(path))
    assert watch._fd is None
    assert watch.same()
    path.write_text("x")
    assert not watch.same()


@pytest.mark.skipif(os.name != "posix", reason="symbolic links need POSIX here")
def test_a_symbolic_link_is_watched_by_its_path(tmp_path: Path, hold: bool) -> None:
    one, two = _file(tmp_path), tmp_path / "two.md"
    two.write_text("- [ ] 2.1 b, longer\n")
    link = tmp_path / "link.md"
    link.symlink_to(one)
    watch = FileWatch(str(link))
    assert watch._fd is None  # the link could be pointed elsewhere: not held
    assert watch.same()
    link.unlink()
    link.symlink_to(two)
    assert not watch.same()


def test_close_lets_the_descriptor_go_and_keeps_watching(tmp_path: Path, hold: bool) -> None:
    path = _file(tmp_path)
    watch = FileWatch(str(path))
    fd = watch._fd
    watch.close()
    assert watch._fd is None
    assert watch.same()
    if fd is not None:
        with pytest.raises(OSError, match="Bad file descriptor"):
            os.fstat(fd)  # closed
    path.write_text("- [ ] 1.1 a longer text\n")
    assert not watch.same()


def test_a_backlog_sees_a_hand_edit_at_the_next_look(tmp_path: Path, hold: bool) -> None:
    """The crew's path: `Backlog.epic` re-reads a change's tasks file when it changed."""
    import crewbook

    root = crewbook.example_project(dest=tmp_path / "tour")
    tasks = root / "_codev" / "changes" / "add-csv-export" / "tasks.md"
    tasks.write_text("# Tasks\n\n## Story 1\n\n- [ ] 1.1 first\n")
    log = backlog.Backlog(crewbook.Project(root))
    assert [s.title for s in log.epic("add-csv-export").stories] == ["Story 1"]
    tasks.write_text("# Tasks\n\n## Story 1\n\n- [ ] 1.1 first\n\n## Story 2\n\n- [ ] 2.1 b\n")
    assert [s.title for s in log.epic("add-csv-export").stories] == ["Story 1", "Story 2"]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc")
def test_loops_dropped_let_their_descriptors_go(tmp_path: Path) -> None:
    """Each loop's backlog holds the tasks file open; a loop no longer used closes it (no
    descriptor piles up over thousands of loops, as in a sweep)."""
    import crewbook
    from crewbook.crew import CrewReport, CrewState
    from crewbook.crew.engine import CrewLoop
    from crewbook.crew.model import BarCommand, CrewConfig

    root = crewbook.example_project(dest=tmp_path / "tour")
    (root / "_codev" / "changes" / "add-csv-export" / "tasks.md").write_text(
        "# Tasks\n\n## Story 1\n\n- [ ] 1.1 first\n")
    project = crewbook.Project(root)
    config = CrewConfig(goal="g", max_rounds=0, bar={"test": BarCommand(command="true")})
    before = len(os.listdir("/proc/self/fd"))
    for i in range(40):
        loop = CrewLoop(CrewState(run=f"r{i}", config=config, epic="add-csv-export",
                                  story="Story 1"), project=project, run_bar=False)
        loop.report(CrewReport("analyst", "done", "framed"))
        assert loop.backlog._epics["add-csv-export"][0]._fd is not None or not backlog._HOLD
    del loop
    assert len(os.listdir("/proc/self/fd")) <= before + 1


def test_new_backlogs_open_a_change_again_only_when_its_change_yaml_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each loop (a CLI or MCP call opens one) reads its backlog; the change itself is
    opened once per project while its change.yaml is unchanged."""
    import crewbook

    root = crewbook.example_project(dest=tmp_path / "tour")
    project = crewbook.Project(root)
    opened: list[str] = []
    real = backlog.open_change
    monkeypatch.setattr(backlog, "open_change",
                        lambda name, proj: opened.append(name) or real(name, proj))
    first = backlog.Backlog(project).epic("add-csv-export")
    second = backlog.Backlog(project).epic("add-csv-export")
    assert opened == ["add-csv-export"]
    assert (second.name, second.tracks) == (first.name, first.tracks)
    meta = root / "_codev" / "changes" / "add-csv-export" / "change.yaml"
    meta.write_text(meta.read_text() + "\n")  # edited: opened again
    backlog.Backlog(project).epic("add-csv-export")
    assert opened == ["add-csv-export", "add-csv-export"]
