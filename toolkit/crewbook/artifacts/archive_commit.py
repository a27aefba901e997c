"""Commit an archive as one unit: staged, journaled, under the project's lock.

An archive changes several files (each updated main spec) and moves the change folder.
Done one by one, a crash or a second archive could leave a mix. Here, all inside
``<changes>/archive/`` (names starting with ``.``, so no listing shows them):

1. the project's archive lock ``.crewbook.lock`` is taken (a second archive waits, then
   finds the change gone and is refused);
2. a crashed archive is settled (`settle`), and the result is computed under the lock;
3. the new specs are written to a staging folder ``.crewbook-pending-<target>/``, whose
   ``owner.json`` records the folder's own identity (device and inode);
4. the journal ``.crewbook-journal.json`` is written in one `os.replace`: the commit point;
5. the moves are made (each an atomic rename, each idempotent), then the staging folder
   and the journal are removed.

A kill before step 4 leaves the old project (the staging folder is dropped later); after
it, whoever opens the project next (`Project(...)`, any archive) rolls forward under the
lock. The journal and staging are crewbook's own: the journal names only plain names
(never a path), every path is checked to stay inside the project after following links,
and the identity recorded must be the folder's on this disk. A journal or staging folder
shipped in a cloned repository fails that test and is refused, never executed.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

from ..core.paths import inside, kind_of, path_problem, read_capped
from ..errors import InvalidInputError, Problem, UnsafePathError
from .openspec import ARCHIVE

if TYPE_CHECKING:
    from .change import Change
    from .project import Project

T = TypeVar("T")

PENDING_PREFIX: Final = ".crewbook-pending-"
JOURNAL: Final = ".crewbook-journal.json"
OWNER: Final = "owner.json"
#: Seconds an archive (or a reader finding a journal) waits for another archive.
LOCK_WAIT: Final = 60.0
#: Largest journal read (thousands of specs are well under it).
MAX_JOURNAL_BYTES: Final = 1 << 20
_KEYS: Final = ("v", "change", "target", "staging", "specs", "owner")
#: Optional journal keys: `retire`, the main specs a retired capability deletes.
_OPTIONAL: Final = ("retire",)


class ArchiveRefused(InvalidInputError):
    """The change cannot be archived: its problems say why and what to do."""


def archive_folder(project: Project) -> Path:
    """``<changes>/archive/``, where archived changes, the lock and the journal live."""
    return project.changes_folder / ARCHIVE


def _rel(project: Project, path: Path) -> str:
    return path.relative_to(project.root).as_posix()


def _inside(project: Project, path: Path, what: str) -> Path:
    """`path` (under the project root) checked to stay inside the project after
    following links; `UnsafePathError` naming it otherwise."""
    return inside(project.root, _rel(project, path), what)


def _plain_name(value: Any, key: str, shown: str) -> str:
    """`value` when it is one plain file name (no separator, no ``..``)."""
    if (not isinstance(value, str) or not value or value in (".", "..") or "/" in value
            or "\\" in value or path_problem(value) is not None):
        raise ArchiveRefused(f"{shown} is refused and not executed", [Problem(
            "journal_invalid", f"{key} must be one plain name inside the project, not "
            f"{str(value)[:80]!r}; remove {shown} (it was not written by this crewbook)",
            shown, key=key)])
    return value


def _identity(path: Path) -> list[int] | None:
    """The device and inode of the real folder `path` (None for a link or a file)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    import stat

    return [st.st_dev, st.st_ino] if stat.S_ISDIR(st.st_mode) else None


def change_folder(change: Change) -> Path:
    """The folder of `change`, checked to be a change of its project: a direct child of
    the project's changes folder, a real folder (not a link), inside the project."""
    project = change.project
    folder, changes = change.folder, project.changes_folder
    shown = str(folder)
    try:
        parent = folder.parent.resolve()
        outside = parent != changes.resolve()
    except (OSError, RuntimeError):
        outside = True
    if outside or folder.name in ("", ".", "..", ARCHIVE) or folder.name.startswith("."):
        raise ArchiveRefused(f"{shown} is not a change of the project at {project.root}",
                             [Problem("not_a_change", "only a change of the project can be "
                                      f"archived: give its name (a folder of "
                                      f"{_rel(project, changes)}/)", shown)])
    if os.path.islink(folder):
        raise ArchiveRefused(f"{_rel(project, folder)} is a link", [Problem(
            "change_is_link", "a change folder that is a link is not archived; replace the "
                              "link by the folder itself", _rel(project, folder))])
    return _inside(project, changes / folder.name, "change folder")


def _fsync_write(path: Path, text: str) -> None:
    with open(path, "x", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


def _fsync_folder(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class FolderLock:
    """An exclusive lock on a folder itself (``flock`` on the folder's descriptor), so an
    archive leaves no lock file in the project: the archived tree is the OpenSpec CLI's,
    byte for byte. Reentrant within a process; a forked child holds none of its parent's
    turns (it takes its own)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._fd: int | None = None
        self._depth = 0
        self._pid = os.getpid()
        self._threads = threading.RLock()  # threads of this process take turns too

    def acquire(self, timeout: float) -> bool:
        """Take the lock, waiting up to `timeout` seconds; False when it stayed busy."""
        import fcntl
        import time

        if self._pid != os.getpid():  # a forked child: the parent's turn is not ours
            self._fd, self._depth, self._pid = None, 0, os.getpid()
            self._threads = threading.RLock()
        if not self._threads.acquire(timeout=timeout):
            return False
        if self._depth:  # this thread already holds it
            self._depth += 1
            return True
        fd = os.open(self.folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    self._threads.release()
                    return False
                time.sleep(0.01)
                continue
            self._fd, self._depth = fd, 1
            return True

    def release(self) -> None:
        """Give one turn back; the last one unlocks the folder."""
        if self._pid != os.getpid() or not self._depth:
            return
        self._depth -= 1
        if not self._depth and self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None
        self._threads.release()


_FOLDER_LOCKS: dict[str, FolderLock] = {}


def _lock(project: Project) -> FolderLock:
    archive = _inside(project, archive_folder(project), "archive folder")
    archive.mkdir(parents=True, exist_ok=True)
    key = os.path.realpath(archive)
    lock = _FOLDER_LOCKS.get(key)
    if lock is None:
        lock = _FOLDER_LOCKS[key] = FolderLock(archive)
    return lock


def _acquire(project: Project, lock: FolderLock, wait: float) -> bool:
    return lock.acquire(wait)


def commit_archive(change: Change,
                   prepare: Callable[[], tuple[T, str, Mapping[str, str | None]]]) -> T:
    """Archive `change` as one commit. `prepare()` is called under the lock and returns
    (what to hand back, the archive folder's name, {``<capability>/spec.md``: new text,
    or None to delete it: a retired capability}); it raises to refuse. The change must be
    a change of its project."""
    project = change.project
    folder = change_folder(change)
    lock = _lock(project)
    if not _acquire(project, lock, LOCK_WAIT):
        raise ArchiveRefused(f"another archive of {project.root} is running", [Problem(
            "archive_busy", f"waited {LOCK_WAIT:g} s for the lock; try again when it is "
            "done", _rel(project, archive_folder(project)))])
    try:
        settle(project, strict=True)
        if not folder.is_dir():
            raise ArchiveRefused(f"change {change.name!r} is no longer in "
                                 f"{_rel(project, project.changes_folder)}/", [Problem(
                                     "change_gone", "it was archived or removed meanwhile "
                                     "(by another archive?); nothing was changed",
                                     _rel(project, folder))])
        result, target, specs = prepare()
        _commit(project, folder.name, _plain_name(target, "target", "archive name"), specs)
        return result
    finally:
        lock.release()


def _commit(project: Project, change: str, target: str, specs: Mapping[str, str | None]
            ) -> None:
    archive = archive_folder(project)
    staging = archive / f"{PENDING_PREFIX}{target}"
    _inside(project, archive / target, "archive target")
    if kind_of(staging) != "missing" or os.path.islink(staging):
        raise ArchiveRefused(f"{_rel(project, staging)} is in the way", [Problem(
            "staging_exists", "remove it and archive again", _rel(project, staging))])
    staging.mkdir()
    owner = _identity(staging)
    _fsync_write(staging / OWNER, json.dumps({"owner": owner}))
    rels = sorted(rel for rel, text in specs.items() if text is not None)
    retire = sorted(rel for rel, text in specs.items() if text is None)
    for rel in rels:
        _spec_paths(project, staging, rel, "staged spec")
        file = staging / "specs" / rel
        file.parent.mkdir(parents=True, exist_ok=True)
        _fsync_write(file, specs[rel] or "")
    for rel in retire:
        _spec_paths(project, staging, rel, "retired spec")
    journal: dict[str, Any] = {"v": 1, "change": change, "target": target,
                               "staging": staging.name, "specs": rels, "owner": owner}
    if retire:
        journal["retire"] = retire
    tmp = archive / (JOURNAL + ".tmp")
    tmp.unlink(missing_ok=True)
    _fsync_write(tmp, json.dumps(journal, indent=1))
    os.replace(tmp, archive / JOURNAL)  # the commit point
    _fsync_folder(archive)
    _roll_forward(project, journal)


def _spec_paths(project: Project, staging: Path, rel: Any, shown: str) -> tuple[Path, Path]:
    """The staged file and the main spec of `rel` (``<capability>/spec.md``), both checked
    to stay inside the project."""
    parts = rel.split("/") if isinstance(rel, str) else []
    if len(parts) != 2 or parts[1] != "spec.md":
        raise ArchiveRefused(f"{shown} is refused and not executed", [Problem(
            "journal_invalid", f"a spec must be '<capability>/spec.md', not "
            f"{str(rel)[:80]!r}", shown, key="specs")])
    _plain_name(parts[0], "specs", shown)
    main = _inside(project, project.specs_folder / rel, "main spec")
    staged = _inside(project, staging / "specs" / rel, "staged spec")
    return staged, main


def _read_journal(project: Project) -> dict[str, Any]:
    """The journal, its shape and every name in it checked, and its staging folder
    checked to be the one crewbook made here; `ArchiveRefused` otherwise."""
    archive = archive_folder(project)
    path = archive / JOURNAL
    shown = _rel(project, path)

    def refuse(key: str, why: str) -> ArchiveRefused:
        return ArchiveRefused(f"{shown} is refused and not executed", [Problem(
            "journal_invalid", f"{why}; remove {shown} and the .crewbook-pending-* folder "
            "beside it (they were not written by crewbook in this folder)", shown, key=key)])

    raw = read_capped(path, MAX_JOURNAL_BYTES, shown=shown)
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise refuse("", f"it is not JSON ({exc})") from None
    if (not isinstance(data, dict) or not set(_KEYS) <= set(data) <= {*_KEYS, *_OPTIONAL}
            or data["v"] != 1):
        raise refuse("", f"it must be an object with the keys {', '.join(_KEYS)} (and "
                     f"optionally {', '.join(_OPTIONAL)})")
    _plain_name(data["change"], "change", shown)
    _plain_name(data["target"], "target", shown)
    staging_name = _plain_name(data["staging"], "staging", shown)
    if not staging_name.startswith(PENDING_PREFIX):
        raise refuse("staging", f"staging must start with {PENDING_PREFIX!r}")
    if not isinstance(data["specs"], list) or not isinstance(data.get("retire", []), list):
        raise refuse("specs", "specs and retire must be lists")
    staging = _inside(project, archive / staging_name, "staging folder")
    owner = data["owner"]
    for rel in [*data["specs"], *data.get("retire", [])]:
        _spec_paths(project, staging, rel, shown)
    source = _inside(project, project.changes_folder / data["change"], "change folder")
    _inside(project, archive / data["target"], "archive target")
    if _identity(staging) is None and _identity(source) is None:
        return data  # killed after the moves: only the journal's removal is left
    if owner is None or owner != _identity(staging):
        raise refuse("owner", "its staging folder is not the one crewbook made here (a "
                     "journal copied or shipped in a repository)")
    return data


def _roll_forward(project: Project, journal: Mapping[str, Any]) -> None:
    """Finish a committed archive; every step is idempotent, so a kill during it is
    finished by the next call."""
    archive = archive_folder(project)
    staging = archive / journal["staging"]
    for rel in journal["specs"]:
        staged, main = _spec_paths(project, staging, rel, "journal")
        if kind_of(staged) == "file":
            main.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staged, main)
    for rel in journal.get("retire", []):  # after every write, as the OpenSpec CLI
        _staged, main = _spec_paths(project, staging, rel, "journal")
        if kind_of(main) == "file" or os.path.islink(main):
            main.unlink()
        if (kind_of(main.parent) == "folder" and not os.path.islink(main.parent)
                and not os.listdir(main.parent)):
            main.parent.rmdir()  # the capability's folder, emptied; never specs/ itself
    source = project.changes_folder / journal["change"]
    target = archive / journal["target"]
    if _identity(source) is not None and kind_of(target) == "missing":
        os.rename(source, target)
    if _identity(staging) is not None:
        shutil.rmtree(staging)
    (archive / JOURNAL).unlink(missing_ok=True)
    _fsync_folder(archive)


def _owned(staging: Path) -> bool:
    """Whether `staging` is a staging folder crewbook made here (its owner file records
    its own identity)."""
    identity = _identity(staging)
    if identity is None:
        return False
    try:
        owner = json.loads(read_capped(staging / OWNER, 4096)).get("owner")
    except (InvalidInputError, ValueError, AttributeError, LookupError):
        return False
    return bool(owner == identity)


def _just_made(staging: Path) -> bool:
    """Whether `staging` is a real folder holding at most a regular owner file (an
    archive killed while it made it): nothing to execute, nothing of anyone's to lose."""
    if _identity(staging) is None:
        return False
    entries = os.listdir(staging)
    return entries == [] or (entries == [OWNER] and kind_of(staging / OWNER) == "file"
                             and not os.path.islink(staging / OWNER))


def settle(project: Project, *, strict: bool) -> list[str]:
    """Settle what a crashed archive left (call under the lock): roll a committed journal
    forward, drop crewbook's own uncommitted staging folders. Returns the changes
    finished. A journal or staging folder crewbook did not write is never executed:
    `ArchiveRefused` when `strict`, else left alone."""
    archive = archive_folder(project)
    if kind_of(archive) != "folder":
        return []
    done: list[str] = []
    if kind_of(archive / JOURNAL) != "missing" or os.path.islink(archive / JOURNAL):
        try:
            journal = _read_journal(project)
        except (ArchiveRefused, UnsafePathError, InvalidInputError):
            if strict:
                raise
            return done
        _roll_forward(project, journal)
        done.append(journal["change"])
    if not strict:
        return done
    foreign = []
    for staging in sorted(archive.glob(f"{PENDING_PREFIX}*")):
        if _owned(staging):
            shutil.rmtree(staging)  # never committed: the archive did not happen
        elif _just_made(staging):
            (staging / OWNER).unlink(missing_ok=True)  # killed before its owner file was
            staging.rmdir()                            # whole: nothing in it
        else:
            foreign.append(staging)
    if foreign:
        raise ArchiveRefused("archive refused: a staging folder crewbook did not write is "
                             "in the project", [Problem(
                                 "foreign_staging", "it is not executed (a plan shipped in "
                                 "a repository or left by an older crewbook); look at it, "
                                 "then remove it and archive again", _rel(project, f))
                                 for f in foreign])
    return done


def recover(project: Project) -> list[str]:
    """`settle` under the project's archive lock (refusing what crewbook did not write)."""
    if kind_of(archive_folder(project)) != "folder":
        return []
    lock = _lock(project)
    if not _acquire(project, lock, LOCK_WAIT):
        return []
    try:
        return settle(project, strict=True)
    finally:
        lock.release()


def settle_on_open(project: Project) -> tuple[Problem, ...]:
    """Called when a project is opened and a journal is there: wait for a running archive
    or finish a crashed one, so a reader never sees half an archive. Never raises: what
    cannot be settled is returned as a warning."""
    shown = f"{_rel(project, archive_folder(project))}/{JOURNAL}"
    try:
        lock = _lock(project)
        if not _acquire(project, lock, LOCK_WAIT):
            return (Problem("archive_busy", "an archive is running; what is read may be "
                            "half of it", shown, severity="warning"),)
        try:
            settle(project, strict=False)
        finally:
            lock.release()
    except (InvalidInputError, UnsafePathError, OSError) as exc:
        return (Problem("archive_unsettled", f"an archive left unfinished could not be "
                        f"settled ({exc}); run `crewbook archive` to see why", shown,
                        severity="warning"),)
    if kind_of(archive_folder(project) / JOURNAL) != "missing":
        return (Problem("journal_refused", "this archive journal was not written by "
                        "crewbook here and is not executed; remove it", shown,
                        severity="warning"),)
    return ()


__all__ = ["JOURNAL", "PENDING_PREFIX", "ArchiveRefused", "archive_folder", "change_folder",
           "commit_archive", "recover", "settle", "settle_on_open"]
