"""`core.commit.turn_lock`: one lock per path in a process, its path checked once."""

from __future__ import annotations

from pathlib import Path

import pytest

from crewbook.core import commit
from crewbook.core.paths import file_or_absent
from crewbook.errors import InvalidInputError


def test_a_lock_path_that_is_a_folder_is_refused_by_name(tmp_path: Path) -> None:
    folder = tmp_path / "held.lock"
    folder.mkdir()
    with pytest.raises(InvalidInputError, match=r"is a folder, not a file") as raised:
        commit.turn_lock(folder)
    assert f"{folder}: the lock file must be a regular file" in str(raised.value)


def test_the_path_is_looked_at_once_when_its_lock_is_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    looked: list[Path] = []
    def counting(path: Path, what: str) -> Path:
        looked.append(path)
        return file_or_absent(path, what)

    monkeypatch.setattr(commit, "file_or_absent", counting)
    path = tmp_path / "turn.lock"
    first = commit.turn_lock(path)
    again = [commit.turn_lock(path) for _ in range(3)]  # every act takes the turn
    assert all(lock is first for lock in again)
    assert looked == [path]
