"""A change summary (the input of the review policy, C7) and its three sources.

A `ChangeSummary` lists the changed paths with their added / removed lines and the
flags the policy cares about (binary, symlink, submodule). Build it:

- from ``git diff --numstat`` output, optionally followed by ``--summary`` lines (one
  ``git diff --numstat --summary`` call prints both): `from_numstat`; NUL-separated
  ``git diff --numstat -z`` output (renames as ``A\tR\t\0old\0new\0``) too;
- from a unified diff (``git diff``, ``diff -u``): `from_unified_diff`;
- by hand: ``ChangeSummary.of({"src/app.py": (12, 3)}, symlinks=["current"])``;
- from whatever text you have: `parse_change` tells the formats apart, and
  `read_change` returns an `Unreadable` instead of raising, because for the policy an
  unreadable change means "reviewer required" (when in doubt, required).

Parsing is strict: a line that belongs to no known format, a NUL byte outside ``-z``
output, or a path holding a control character makes the whole text unreadable (a
guess could hide a sensitive file: C7, when in doubt, required).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from ..errors import InvalidInputError, Problem

if TYPE_CHECKING:
    import subprocess

    import pandas as pd

FileStatus = Literal["added", "deleted", "modified", "renamed", "copied"]
#: Where a summary came from: ``blank`` is blank input text (an empty read proves
#: nothing), ``git`` a change crewbook read from git itself (`from_git`).
Source = Literal["numstat", "diff", "manual", "empty", "blank", "git"]
#: Where a line that says what a file is came from (see `ChangeSummary.context_at`).
SurroundingKind = Literal["hunk", "context", "new", "old"]

#: git file modes that mark a symlink and a submodule (gitlink).
SYMLINK_MODE: Final = "120000"
SUBMODULE_MODE: Final = "160000"


@dataclass(frozen=True)
class FileChange:
    """One changed path. `added`/`removed` are None when unknown (a binary file)."""

    path: str
    added: int | None = 0
    removed: int | None = 0
    status: FileStatus = "modified"
    old_path: str | None = None
    binary: bool = False
    symlink: bool = False
    submodule: bool = False
    mode_change: tuple[str, str] | None = None
    #: Text patterns the diff's changed lines matched (see `crewbook.delivery.review`).
    content: tuple[str, ...] = ()

    @property
    def lines(self) -> int:
        """Added plus removed lines (unknown counts as 0; `binary` says why)."""
        return (self.added or 0) + (self.removed or 0)

    @property
    def paths(self) -> tuple[str, ...]:
        """The path and, for a rename or copy, the old path."""
        return (self.path,) if self.old_path is None else (self.old_path, self.path)


@dataclass(frozen=True)
class ChangeSummary:
    """What a change touches: its files (in order) and where the summary came from."""

    files: tuple[FileChange, ...] = ()
    source: Source = "manual"
    #: Content lines of the diff (for the text patterns); empty for numstat or by hand.
    changed_text: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    #: The same lines with where they are: (path, line in the new file, or in the old
    #: file for a removed line, signed text).
    changed_at: tuple[tuple[str, int, str], ...] = field(default=(), repr=False)
    #: Whether the source can show file modes (a symlink retarget, a submodule bump):
    #: numstat output and plain ``diff -u`` cannot.
    modes_shown: bool = True
    #: What the changed files *are*, beyond their changed lines: (path, line, text,
    #: kind) with kind ``hunk`` (the function or class git names after ``@@``; line: the
    #: hunk's first new line), ``context`` (an unchanged line of a hunk), ``new`` / ``old``
    #: (a line of the whole file after / before the change, read by `from_git`).
    context_at: tuple[tuple[str, int, str, SurroundingKind], ...] = field(default=(),
                                                                         repr=False)

    @classmethod
    def of(cls, lines: Mapping[str, tuple[int, int] | int] | None = None, *,
           binaries: Iterable[str] = (), symlinks: Iterable[str] = (),
           submodules: Iterable[str] = ()) -> ChangeSummary:
        """By hand: ``{"path": (added, removed)}`` (an int is added lines) plus flagged paths."""
        files: dict[str, FileChange] = {}
        for path, count in (lines or {}).items():
            added, removed = (count, 0) if isinstance(count, int) else count
            files[path] = FileChange(path, added, removed)
        for flag, paths in (("binary", binaries), ("symlink", symlinks),
                            ("submodule", submodules)):
            for path in paths:
                unknown = flag == "binary"
                base = files.get(path, FileChange(path, None if unknown else 0,
                                                  None if unknown else 0))
                files[path] = replace(base, binary=base.binary or flag == "binary",
                                      symlink=base.symlink or flag == "symlink",
                                      submodule=base.submodule or flag == "submodule")
        return cls(tuple(files.values()), "manual")

    @property
    def established(self) -> bool:
        """Whether an empty summary proves that nothing changed (not blank input text)."""
        return self.source != "blank"

    @property
    def empty(self) -> bool:
        """Whether the change changes nothing (no file at all)."""
        return not self.files

    @property
    def changed_lines(self) -> int:
        """Added plus removed lines over every file."""
        return sum(f.lines for f in self.files)

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path the change touches (old paths of renames included), in order."""
        return tuple(dict.fromkeys(p for f in self.files for p in f.paths))

    def frame(self) -> pd.DataFrame:
        """One row per file: ``path``, ``old_path``, ``status`` (category), ``added``,
        ``removed``, ``lines`` (Int64; NA when unknown), ``binary``, ``symlink``,
        ``submodule`` (bool)."""
        import pandas as pd

        frame = pd.DataFrame([{
            "path": f.path, "old_path": f.old_path, "status": f.status, "added": f.added,
            "removed": f.removed,
            "lines": None if f.added is None and f.removed is None else f.lines,
            "binary": f.binary, "symlink": f.symlink, "submodule": f.submodule,
        } for f in self.files], columns=["path", "old_path", "status", "added", "removed",
                                         "lines", "binary", "symlink", "submodule"])
        for col in ("added", "removed", "lines"):
            frame[col] = frame[col].astype("Int64")
        for col in ("binary", "symlink", "submodule"):
            frame[col] = frame[col].astype(bool)
        frame["status"] = pd.Categorical(
            frame["status"], categories=["added", "deleted", "modified", "renamed", "copied"])
        return frame

    def __repr__(self) -> str:
        flags = [name for name in ("binary", "symlink", "submodule")
                 if any(getattr(f, name) for f in self.files)]
        return (f"<ChangeSummary ({self.source}): {len(self.files)} files, "
                f"{self.changed_lines} changed lines" + (f", {', '.join(flags)}" if flags else "")
                + ">")

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td><code>{html.escape(f.path)}</code></td><td>{f.status}</td>"
            f"<td>{'–' if f.added is None else f.added}</td>"
            f"<td>{'–' if f.removed is None else f.removed}</td>"
            f"<td>{html.escape(', '.join(n for n in ('binary', 'symlink', 'submodule') if getattr(f, n)))}</td></tr>"  # noqa: E501
            for f in self.files)
        return (f"<table class='crewbook-change'><caption>{html.escape(repr(self))}</caption>"
                "<tr><th>path</th><th>status</th><th>+</th><th>−</th><th>flags</th></tr>"
                f"{rows}</table>")


@dataclass(frozen=True)
class Unreadable:
    """A change (or a policy) that could not be read, and why."""

    reason: str

    def __str__(self) -> str:
        return self.reason


# ----------------------------------------------------------------------- numstat
_NUMSTAT = re.compile(r"^(\d+|-)\t(\d+|-)\t(.+)$")
_SUMMARY_MODE = re.compile(r"^ (create|delete) mode (\d{6}) (.+)$")
_SUMMARY_CHMOD = re.compile(r"^ mode change (\d{6}) => (\d{6}) (.+)$")
_SUMMARY_MOVE = re.compile(r"^ (rename|copy) (.+) \((\d+)%\)$")
_BRACES = re.compile(r"^(.*)\{(.*) => (.*)\}(.*)$")


def _unbrace(text: str) -> tuple[str | None, str]:
    """git's rename notation (``a/{x => y}/z``, ``old => new``) → (old, new)."""
    match = _BRACES.match(text)
    if match:
        head, old, new, tail = match.groups()
        return (re.sub("//+", "/", f"{head}{old}{tail}"),
                re.sub("//+", "/", f"{head}{new}{tail}"))
    if " => " in text:
        old, new = text.split(" => ", 1)
        return old, new
    return None, text


def _unquote(path: str) -> str:
    """A path as git prints it, C-quoted when it holds unusual characters."""
    if len(path) >= 2 and path[0] == path[-1] == '"':
        raw = path[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
        return raw.encode("latin-1", "ignore").decode("utf-8", "replace")
    return path


def from_numstat(numstat: str, summary: str = "") -> ChangeSummary:
    """A summary from ``git diff --numstat`` (and ``--summary``) output.

    Binary files (``-\\t-\\tpath``) have unknown line counts; ``create mode 120000``
    marks a symlink, ``160000`` a submodule. Raises `InvalidInputError` on any line
    that is neither numstat nor summary.
    """
    files: dict[str, FileChange] = {}
    problems: list[Problem] = []
    text = numstat + ("\n" + summary if summary else "")
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if m := _NUMSTAT.match(line):
            added, removed, name = m.groups()
            old, new = _unbrace(name)
            binary = added == "-" and removed == "-"
            path = _unquote(new)
            counted = FileChange(
                path, None if added == "-" else int(added),
                None if removed == "-" else int(removed),
                status="renamed" if old is not None else "modified",
                old_path=_unquote(old) if old is not None else None, binary=binary)
            if (base := files.get(path)) is not None:  # summary lines came first: keep
                counted = replace(  # what they said (symlink, submodule, status, mode)
                    base, added=counted.added, removed=counted.removed,
                    binary=base.binary or binary, old_path=base.old_path or counted.old_path,
                    status=base.status if base.status != "modified" else counted.status)
            files[path] = counted
        elif m := _SUMMARY_MODE.match(line):
            what, mode, name = m.groups()
            path = _unquote(name)
            base = files.get(path, FileChange(path))
            files[path] = replace(base, status="added" if what == "create" else "deleted",
                                  symlink=base.symlink or mode == SYMLINK_MODE,
                                  submodule=base.submodule or mode == SUBMODULE_MODE)
        elif m := _SUMMARY_CHMOD.match(line):
            old_mode, new_mode, name = m.groups()
            path = _unquote(name)
            base = files.get(path, FileChange(path))
            files[path] = replace(
                base, mode_change=(old_mode, new_mode),
                symlink=base.symlink or SYMLINK_MODE in (old_mode, new_mode),
                submodule=base.submodule or SUBMODULE_MODE in (old_mode, new_mode))
        elif m := _SUMMARY_MOVE.match(line):
            what, name, _ = m.groups()
            old, new = _unbrace(name)
            path = _unquote(new)
            base = files.get(path, FileChange(path))
            files[path] = replace(base, status="renamed" if what == "rename" else "copied",
                                  old_path=_unquote(old) if old else base.old_path)
        else:
            problems.append(Problem("unreadable_change", f"not git numstat or summary output: "
                                    f"{line[:80]!r}", "<numstat>", number))
    if problems:
        raise InvalidInputError("cannot read the change", problems)
    return ChangeSummary(tuple(files.values()), "numstat", modes_shown=False)


def from_numstat_z(text: str) -> ChangeSummary:
    """A summary from ``git diff --numstat -z`` output: records end with NUL; a record is
    ``added\tremoved\tpath``, or ``added\tremoved\t`` followed by the old and the new
    path of a rename or copy as two more NUL-ended fields. Paths are not quoted.
    Raises `InvalidInputError` on anything else (a cut record included)."""
    fields = text.split("\0")
    if fields and fields[-1].strip() == "":
        fields.pop()  # the NUL ending the last record (and maybe a newline after it)
    files: dict[str, FileChange] = {}
    problems: list[Problem] = []
    i = 0
    while i < len(fields):
        record = fields[i].lstrip("\n")
        number = i + 1
        i += 1
        m = _NUMSTAT_Z.match(record)
        if m is None:
            problems.append(Problem("unreadable_change", "not `git diff --numstat -z` "
                                    f"output: {record[:80]!r}", "<numstat -z>", number))
            break
        added, removed, name = m.groups()
        old: str | None = None
        if not name:  # a rename or copy: old and new paths follow
            if i + 2 > len(fields):
                problems.append(Problem("unreadable_change", "a rename record of "
                                        "`--numstat -z` is cut short", "<numstat -z>", number))
                break
            old, name = fields[i], fields[i + 1]
            i += 2
        binary = added == "-" and removed == "-"
        files[name] = FileChange(
            name, None if added == "-" else int(added), None if removed == "-" else int(removed),
            status="renamed" if old is not None else "modified", old_path=old, binary=binary)
    if problems:
        raise InvalidInputError("cannot read the change", problems)
    return ChangeSummary(tuple(files.values()), "numstat", modes_shown=False)


_NUMSTAT_Z = re.compile(r"^(\d+|-)\t(\d+|-)\t(.*)$", re.DOTALL)


def _check_paths(change: ChangeSummary) -> ChangeSummary:
    """`change`, or `InvalidInputError` when a path is empty or holds a control
    character (a NUL, a newline, an escape): such a name was misread, and a misread
    name could hide a sensitive file."""
    problems = [
        Problem("unreadable_change", f"the path {path[:80]!r} is empty or holds a control "
                "character; it was probably misread", "<change>")
        for path in change.paths
        if not path or any(ord(c) < 32 or ord(c) == 127 for c in path)
    ]
    if problems:
        raise InvalidInputError("cannot read the change", problems)
    return change


# ------------------------------------------------------------------ unified diff
_GIT_HEADER = re.compile(r"^diff --git (\"?a/.+?\"?) (\"?b/.+\"?)$")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")
_INDEX = re.compile(r"^index [0-9a-f]+\.\.[0-9a-f]+(?: (\d{6}))?$")
_EXTENDED = ("similarity index ", "dissimilarity index ", "rename from ", "rename to ",
             "copy from ", "copy to ", "old mode ", "new mode ", "new file mode ",
             "deleted file mode ", "index ")


def _strip_prefix(path: str) -> str | None:
    path = _unquote(path.split("\t", 1)[0].rstrip())
    if path == "/dev/null":
        return None
    for prefix in ("a/", "b/"):
        if path.startswith(prefix):
            return path[len(prefix):]
    return path


@dataclass
class _Entry:
    path: str | None = None
    old_path: str | None = None
    added: int = 0
    removed: int = 0
    status: FileStatus = "modified"
    binary: bool = False
    symlink: bool = False
    submodule: bool = False
    old_mode: str | None = None
    new_mode: str | None = None
    text: list[tuple[str, str]] = field(default_factory=list)
    at: list[int] = field(default_factory=list)
    #: (line, text, kind) of hunk headers and context lines (`ChangeSummary.context_at`).
    around: list[tuple[int, str, SurroundingKind]] = field(default_factory=list)
    git: bool = False

    def finish(self) -> FileChange | None:
        path = self.path or self.old_path
        if path is None:
            return None
        mode = (self.old_mode, self.new_mode) if self.old_mode and self.new_mode else None
        renamed = self.old_path is not None and self.old_path != path
        return FileChange(
            path, None if self.binary else self.added, None if self.binary else self.removed,
            status=self.status if self.status != "modified" or not renamed else "renamed",
            old_path=self.old_path if renamed else None, binary=self.binary,
            symlink=self.symlink, submodule=self.submodule, mode_change=mode)


def from_unified_diff(diff: str) -> ChangeSummary:
    """A summary from a unified diff (``git diff`` or ``diff -u``), hunks counted.

    Understands git's extended headers (new/deleted file mode, renames, copies, mode
    changes, ``Binary files … differ``, ``GIT binary patch``, ``Subproject commit``).
    Raises `InvalidInputError` on text that is not a unified diff.
    """
    entries: list[_Entry] = []
    current: _Entry | None = None
    old_left = new_left = old_at = new_at = 0
    problems: list[Problem] = []
    lines = diff.splitlines()
    i = 0

    def bad(number: int, line: str, why: str) -> None:
        problems.append(Problem("unreadable_change", f"{why}: {line[:80]!r}", "<diff>", number))

    while i < len(lines):
        line = lines[i]
        number = i + 1
        i += 1
        if old_left > 0 or new_left > 0:  # inside a hunk
            assert current is not None
            tag = line[:1]
            if tag == "+":
                current.added += 1
                new_left -= 1
                current.text.append(("+", line[1:]))
                current.at.append(new_at)
                new_at += 1
            elif tag == "-":
                current.removed += 1
                old_left -= 1
                current.text.append(("-", line[1:]))
                current.at.append(old_at)
                old_at += 1
            elif tag == " " or line == "":
                if line.strip():
                    current.around.append((new_at, line[1:], "context"))
                old_left -= 1
                new_left -= 1
                old_at += 1
                new_at += 1
            elif line.startswith("\\"):
                pass
            else:
                bad(number, line, "a hunk ends before its line counts say")
                old_left = new_left = 0
            if current.submodule is False and line[1:].startswith("Subproject commit "):
                current.submodule = True
            continue
        if line.startswith("\\"):  # "\ No newline at end of file" after the last hunk line
            continue
        if line.startswith("diff ") and not line.startswith("diff --git "):
            current = None  # `diff -ru a b` between files: the ---/+++ pair follows
            continue
        if m := _GIT_HEADER.match(line):
            current = _Entry(path=_strip_prefix(m.group(2)), old_path=_strip_prefix(m.group(1)),
                             git=True)
            entries.append(current)
            continue
        if line.startswith("--- ") and i < len(lines) and lines[i].startswith("+++ "):
            old, new = _strip_prefix(line[4:]), _strip_prefix(lines[i][4:])
            i += 1
            if current is None or current.text or current.added or current.removed or (
                    current.path not in (new, old) and current.old_path not in (old, new)):
                current = _Entry()
                entries.append(current)
            current.old_path, current.path = old, new
            if old is None:
                current.status = "added"
            elif new is None:
                current.status, current.path = "deleted", old
            continue
        if m := _HUNK.match(line):
            if current is None:
                bad(number, line, "a hunk before any file header")
                continue
            old_at, new_at = int(m.group(1)), int(m.group(3))
            old_left = int(m.group(2)) if m.group(2) is not None else 1
            new_left = int(m.group(4)) if m.group(4) is not None else 1
            if m.group(5).strip():  # git's funcname: the function or class around the hunk
                current.around.append((new_at, m.group(5), "hunk"))
            continue
        if current is not None and line.startswith(_EXTENDED):
            _extended(current, line)
            continue
        if current is not None and (line.startswith("Binary files ")
                                    or line == "GIT binary patch"):
            current.binary = True
            if line == "GIT binary patch":  # skip the literal/delta blocks
                while i < len(lines) and not lines[i].startswith("diff --git "):
                    i += 1
            continue
        if not line.strip() and current is not None:
            continue
        bad(number, line, "not part of a unified diff")
    if problems:
        raise InvalidInputError("cannot read the change", problems)
    files: list[FileChange] = []
    text: list[tuple[str, str]] = []
    at: list[tuple[str, int, str]] = []
    around: list[tuple[str, int, str, SurroundingKind]] = []
    for entry in entries:
        change = entry.finish()
        if change is not None:
            files.append(change)
            text += [(change.path, f"{sign}{body}") for sign, body in entry.text]
            at += [(change.path, number, f"{sign}{body}")
                   for number, (sign, body) in zip(entry.at, entry.text, strict=True)]
            around += [(change.path, number, body, kind) for number, body, kind in entry.around]
    return ChangeSummary(tuple(files), "diff", tuple(text), tuple(at),
                         modes_shown=all(entry.git for entry in entries),
                         context_at=tuple(around))


def _extended(entry: _Entry, line: str) -> None:
    """Apply one git extended header line to `entry`."""
    word = line.split(" ", 1)[0]
    if line.startswith("new file mode "):
        entry.status, mode = "added", line.rsplit(" ", 1)[1]
        entry.symlink |= mode == SYMLINK_MODE
        entry.submodule |= mode == SUBMODULE_MODE
    elif line.startswith("deleted file mode "):
        entry.status, mode = "deleted", line.rsplit(" ", 1)[1]
        entry.symlink |= mode == SYMLINK_MODE
        entry.submodule |= mode == SUBMODULE_MODE
    elif line.startswith("old mode "):
        entry.old_mode = line.rsplit(" ", 1)[1]
    elif line.startswith("new mode "):
        entry.new_mode = line.rsplit(" ", 1)[1]
        modes = {entry.old_mode, entry.new_mode}
        entry.symlink |= SYMLINK_MODE in modes
        entry.submodule |= SUBMODULE_MODE in modes
    elif line.startswith(("rename from ", "copy from ")):
        entry.old_path = _unquote(line.split(" ", 2)[2])
        entry.status = "renamed" if word == "rename" else "copied"
    elif line.startswith(("rename to ", "copy to ")):
        entry.path = _unquote(line.split(" ", 2)[2])
    elif m := _INDEX.match(line):
        mode = m.group(1)
        entry.symlink |= mode == SYMLINK_MODE
        entry.submodule |= mode == SUBMODULE_MODE


# ---------------------------------------------------------------------- detection
def change_format(text: str) -> Source | None:
    """Which format `text` is in: ``diff``, ``numstat``, ``empty``, or None (unknown)."""
    if "\0" in text:
        return "numstat" if _NUMSTAT_Z.match(text.lstrip("\n").split("\0", 1)[0]) else None
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return "empty"
    if any(line.startswith("diff --git ") for line in lines) or any(
            a.startswith("--- ") and b.startswith("+++ ") for a, b in pairwise(lines)):
        return "diff"
    if any(_NUMSTAT.match(line) or _SUMMARY_MODE.match(line) or _SUMMARY_MOVE.match(line)
           or _SUMMARY_CHMOD.match(line) for line in lines):
        return "numstat"
    return None


def parse_change(text: str) -> ChangeSummary:
    """A summary from a unified diff or numstat(+summary) text; an empty text is an empty
    change. Raises `InvalidInputError` when the text is neither."""
    kind = change_format(text)
    if kind == "empty":  # blank text: no proof that nothing changed (see `established`)
        return ChangeSummary((), "blank")
    if kind == "diff":
        return _check_paths(from_unified_diff(text))
    if kind == "numstat":
        return _check_paths(from_numstat_z(text) if "\0" in text else from_numstat(text))
    first = next((line for line in text.splitlines() if line.strip()), text)
    raise InvalidInputError("cannot read the change", [Problem(
        "unreadable_change", "neither a unified diff nor `git diff --numstat` output: "
        f"{first[:80]!r}", "<change>", 1)])


def read_change(text: str | bytes) -> ChangeSummary | Unreadable:
    """`parse_change`, but an unreadable text (or bytes that are not UTF-8) is returned as
    `Unreadable` with the reason: the review policy then requires the reviewer."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            return Unreadable(f"the change is not UTF-8 text (byte {exc.start})")
    try:
        return parse_change(text)
    except InvalidInputError as exc:
        first = exc.problems[0] if exc.problems else None
        where = f"line {first.line}: " if first is not None and first.line else ""
        return Unreadable(f"the change cannot be read ({where}"
                          f"{first.message if first else exc.message})")
    except (ValueError, LookupError) as exc:  # a count of 5,000 digits, a broken escape
        return Unreadable(f"the change cannot be read ({exc})")


def with_modes(change: ChangeSummary | Unreadable) -> ChangeSummary | Unreadable:
    """`change` if its source shows file modes, else `Unreadable`: numstat output (even
    with ``--summary``) and a plain ``diff -u`` cannot show a symlink retarget or a
    submodule bump, so the C7 exceptions for them could never apply."""
    if isinstance(change, Unreadable) or change.modes_shown or change.empty:
        return change
    return Unreadable(
        f"cannot read the change: {change.source} input cannot show file modes (a symlink "
        "retarget or a submodule bump would be invisible); use `--git BASE..HEAD` or a "
        "`git diff` unified diff, or pass --no-modes to accept it")


#: Largest change text read (a diff file, stdin, git's output): beyond, it is refused.
MAX_CHANGE_BYTES: Final = 32 * 1024 * 1024
#: How long git may take to print a change.
GIT_TIMEOUT_S: Final = 120


def from_git(spec: str, cwd: Path | str = ".") -> ChangeSummary | Unreadable:
    """The change ``BASE..HEAD`` (or ``BASE...HEAD``; a lone ``BASE`` means
    ``BASE..HEAD``) read from git itself as a unified diff, which carries file modes (a
    symlink retarget, a submodule bump) and the changed lines.

    Both ends must name commits: a mistyped branch is `Unreadable`, never an empty
    change. An empty diff between two commits that exist is an established "changes
    nothing" (source ``git``). Output over `MAX_CHANGE_BYTES` is `Unreadable`.
    """
    import subprocess

    sep = "..." if "..." in spec else ".."
    base, _, head = spec.partition(sep)
    head = head or "HEAD"
    if not base or base.startswith("-") or head.startswith("-") or sep in head:
        return Unreadable(f"cannot read the change: {spec!r} is not BASE..HEAD")
    git = ["git", "-C", str(cwd), "-c", "core.quotepath=on"]

    def run(*args: str, input: str | None = None) -> subprocess.CompletedProcess[bytes] | str:
        try:
            return subprocess.run([*git, *args], capture_output=True, check=False,
                                  timeout=GIT_TIMEOUT_S,
                                  input=None if input is None else input.encode())
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"cannot run git ({exc})"

    for rev in (base, head):
        done = run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
        if isinstance(done, str):
            return Unreadable(f"cannot read the change: {done}")
        if done.returncode != 0:
            return Unreadable(f"cannot read the change: git knows no commit {rev!r} in "
                              f"{cwd} (a mistyped branch?)")
    done = run("diff", "--no-color", "--no-ext-diff", "--no-textconv", "--submodule=short",
               "-M", f"{base}{sep}{head}", "--")
    if isinstance(done, str):
        return Unreadable(f"cannot read the change: {done}")
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return Unreadable(f"cannot read the change: git diff failed ({err[0] if err else ''})")
    if len(done.stdout) > MAX_CHANGE_BYTES:
        return Unreadable(f"cannot read the change: git printed more than "
                          f"{MAX_CHANGE_BYTES // 2**20} MiB")
    change = read_change(done.stdout)
    if isinstance(change, Unreadable):
        return change
    if sep == "...":  # the diff runs from the merge base: read the old files there
        found = run("merge-base", "--end-of-options", base, head)
        if isinstance(found, str) or found.returncode != 0:
            return Unreadable("cannot read the change: git finds no merge base of "
                              f"{base!r} and {head!r}")
        base = found.stdout.decode("ascii", "replace").strip()
    whole = _whole_files(change, base, head, run)
    return replace(change, source="git", context_at=change.context_at + whole)


#: Largest file version `from_git` reads whole (beyond, only its hunks are seen), and
#: the most it reads over all the files of one change.
MAX_FILE_BYTES: Final = 512 * 1024
MAX_FILES_BYTES: Final = 16 * 1024 * 1024


def _whole_files(change: ChangeSummary, base: str, head: str,
                 run: Callable[..., subprocess.CompletedProcess[bytes] | str],
                 ) -> tuple[tuple[str, int, str, SurroundingKind], ...]:
    """Every line of both versions of each changed text file (``old`` from `base`, ``new``
    from `head`), read with one ``git cat-file --batch``: what a file *is* (its imports,
    its classes) shows there even when its changed lines do not show it. A file over
    `MAX_FILE_BYTES`, a binary, a symlink or a submodule is skipped (its hunks remain)."""
    wanted: list[tuple[str, str, SurroundingKind]] = []
    for f in change.files:
        if f.binary or f.symlink or f.submodule:
            continue
        if f.status != "added":
            wanted.append((f.path, f"{base}:{f.old_path or f.path}", "old"))
        if f.status != "deleted":
            wanted.append((f.path, f"{head}:{f.path}", "new"))
    if not wanted:
        return ()
    done = run("cat-file", "--batch", input="".join(f"{spec}\n" for _, spec, _ in wanted))
    if isinstance(done, str) or done.returncode != 0:
        return ()
    out = done.stdout
    lines: list[tuple[str, int, str, SurroundingKind]] = []
    at = total = 0
    for path, _, kind in wanted:
        end = out.find(b"\n", at)
        header = out[at:end].split()
        at = end + 1
        if len(header) != 3 or header[1] != b"blob":  # "<spec> missing": nothing to read
            continue
        size = int(header[2])
        body = out[at:at + size]
        at += size + 1
        total += size
        if size > MAX_FILE_BYTES or total > MAX_FILES_BYTES or b"\0" in body[:8000]:
            continue
        text = body.decode("utf-8", "replace")
        lines += [(path, number, line, kind)
                  for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    return tuple(lines)


def covering(change: ChangeSummary, files: Sequence[str],
             earlier: ChangeSummary | None = None) -> ChangeSummary:
    """`change`, completed so that it names every path of `files` (what the branch changed).

    A path `change` does not name keeps its entry from `earlier` (the summary of a
    previous version: its changes are still on the branch), else it gets unknown line
    counts (so "when in doubt" applies). A developer's summary can thus never hide a
    file the branch changed, whether it describes the whole branch or only its last step.
    """
    named = {path for f in change.files for path in f.paths}
    before = {f.path: f for f in earlier.files} if earlier is not None else {}
    missing = [path for path in dict.fromkeys(files) if path not in named]
    if not missing:
        return change
    extra = tuple(before.get(path, FileChange(path, None, None)) for path in missing)
    text = tuple(item for item in (earlier.changed_text if earlier is not None else ())
                 if item[0] in missing)
    at = tuple(item for item in (earlier.changed_at if earlier is not None else ())
               if item[0] in missing)
    around = tuple(item for item in (earlier.context_at if earlier is not None else ())
                   if item[0] in missing)
    return replace(change, files=change.files + extra,
                   changed_text=change.changed_text + text, changed_at=change.changed_at + at,
                   context_at=change.context_at + around)


def summary_of(files: Sequence[str]) -> ChangeSummary:
    """A summary naming `files` with unknown line counts (all that a path list tells)."""
    return ChangeSummary(tuple(FileChange(f, None, None) for f in dict.fromkeys(files)), "manual")
