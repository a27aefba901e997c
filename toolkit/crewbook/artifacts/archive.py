"""Archive a change (A9 sync and archive): apply its deltas to the main specs.

`preview_archive(change)` is pure: it returns the specs the archive would write (an
`ArchivePreview`: frames, a side-by-side diff as text and HTML, a drawing) and every
problem that would stop it, writing nothing. `archive_change(change)` does it the way
OpenSpec does (RENAMED, then REMOVED, MODIFIED, ADDED; the change folder moves to
`changes/archive/YYYY-MM-DD-<name>/`), refusing when the deltas do not validate.

Atomicity: `archive_commit` stages the new specs, commits them and the folder move with
a journal under the project's lock, and settles a crashed archive when the project is
next opened, so kill -9 or a second archive never leaves a mix.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from ..errors import Problem
from .archive_commit import ArchiveRefused, change_folder, commit_archive, recover
from .archive_view import ArchivePreview, SpecUpdate
from .delta_checks import delta_problems, missing_scenarios
from .openspec import ARCHIVE
from .specs import (
    REQUIREMENT_HEADER,
    DeltaSpec,
    Requirement,
    fence_mask,
    fold,
    parse_delta,
    requirement_blocks,
    requirement_key,
    requirements_section,
    spec_files,
    split_lines,
)

if TYPE_CHECKING:
    from .change import Change
    from .project import Project

def _collapse_blank_runs(text: str) -> str:
    lines = text.split("\n")
    mask = fence_mask(lines)
    kept: list[str] = []
    blank = 0
    for hidden, line in zip(mask, lines, strict=True):
        if not hidden and line == "":
            blank += 1
            if blank > 1:
                continue
        else:
            blank = 0
        kept.append(line)
    return "\n".join(kept)


def _skeleton(capability: str, change: str, purpose: str | None = None) -> str:
    body = purpose or (f"TBD - created by archiving change {change}. Update Purpose after "
                       "archive.")
    return f"# {capability} Specification\n\n## Purpose\n{body}\n\n## Requirements\n"


def apply_delta(before: str | None, delta: DeltaSpec, change: str
                ) -> tuple[str | None, tuple[tuple[str, str], ...], list[Problem]]:
    """The main spec text after `delta` (None when refused), the status of each
    requirement touched, and the problems that refuse it (OpenSpec's merge rules)."""
    f = delta.file
    problems: list[Problem] = []

    def refuse(message: str, line: int | None = None) -> None:
        problems.append(Problem("archive_refused", message, path=f, line=line))

    for side, name, line in delta.unpaired:
        refuse(f"RENAMED {side}: {name!r} has no matching line", line)
    if not delta.count:
        refuse("no delta operation to apply")
    is_new = before is None
    if is_new and (delta.modified or delta.renamed):
        refuse("the main spec does not exist; only ADDED requirements can create it")
    text = before if before is not None else _skeleton(delta.capability, change,
                                                               delta.purpose)
    lines = split_lines(text)
    section = requirements_section(lines, fence_mask(lines))
    if section is None:
        pre, header, body_lines, after = text.rstrip(), "## Requirements", [], []
    else:
        start, end = section
        pre, header = "\n".join(lines[:start]), lines[start]
        body_lines, after = lines[start + 1:end], lines[end:]
    body_mask = fence_mask(body_lines)
    first_req = next((i for i, ln in enumerate(body_lines)
                      if not body_mask[i] and REQUIREMENT_HEADER.match(ln)), len(body_lines))
    preamble = "\n".join(body_lines[:first_req]).rstrip()
    original = requirement_blocks(body_lines, body_mask, 1, f, None)
    blocks: dict[str, Requirement] = {}
    for block in original:
        blocks[block.key] = block
    statuses: list[tuple[str, str]] = []
    renamed_from: dict[str, str] = {}
    for old, new, line in delta.renamed:
        if old not in blocks:
            refuse(f"RENAMED {old!r}: not found in the main spec", line)
            continue
        if new in blocks:
            refuse(f"RENAMED {new!r}: already exists in the main spec", line)
            continue
        block = blocks.pop(old)
        _head, *rest = block.raw.split("\n")
        raw = "\n".join([f"### Requirement: {new}", *rest])
        blocks[new] = Requirement(new, raw, block.file, block.line)
        renamed_from[old] = new
        statuses.append((new, "renamed"))
    for name, line in delta.removed:
        if name not in blocks:
            near = [k for k in blocks if fold(k) == fold(name)]
            if near and not is_new:
                refuse(f"REMOVED {name!r}: not found, but {near[0]!r} exists; fix the header "
                       "to match it exactly", line)
            continue
        del blocks[name]
        statuses.append((name, "removed"))
    for mod in delta.modified:
        current = blocks.get(mod.key)
        if current is None:
            refuse(f"MODIFIED {mod.key!r}: not found in the main spec", mod.line)
            continue
        if lost := missing_scenarios(current, mod):
            refuse(f"MODIFIED {mod.key!r} drops scenario(s) {', '.join(map(repr, lost))} the "
                   "main spec has; copy them into the MODIFIED block", mod.line)
            continue
        blocks[mod.key] = mod
        statuses.append((mod.key, "modified"))
    for add in delta.added:
        if add.key in blocks:
            refuse(f"ADDED {add.key!r}: already exists in the main spec; use MODIFIED",
                   add.line)
            continue
        blocks[add.key] = add
        statuses.append((add.key, "added"))
    if problems:
        return None, tuple(statuses), problems
    kept: list[Requirement] = []
    seen: set[str] = set()
    for block in original:
        key = renamed_from.get(block.key, block.key)
        if key in blocks and key not in seen:
            kept.append(blocks[key])
            seen.add(key)
    kept += [b for k, b in blocks.items() if k not in seen]
    body = "\n\n".join(([preamble] if preamble.strip() else []) + [b.raw for b in kept])
    parts = [pre.rstrip(), header, body.rstrip(), "\n".join(after).strip()]
    rebuilt = _collapse_blank_runs("\n\n".join(p for p in parts if p)).rstrip() + "\n"
    return rebuilt, tuple(statuses), []


def archive_name(change: Change, today: dt.date | None = None) -> str:
    """`YYYY-MM-DD-<name>`, the folder the change moves to (UTC date)."""
    day = today or dt.datetime.now(dt.UTC).date()
    return f"{day.isoformat()}-{change.name}"


def preview_archive(change: Change, *, today: dt.date | None = None) -> ArchivePreview:
    """The specs archiving `change` would write, and why it would be refused; pure."""
    project = change.project
    shown = project.relative
    problems = list(delta_problems(change))
    updates: list[SpecUpdate] = []
    for cap, file in spec_files(change.folder / "specs"):
        delta = parse_delta(file.read_text("utf-8", errors="replace"), cap, shown(file))
        main_file = project.specs_folder / cap / "spec.md"
        before = main_file.read_text("utf-8", errors="replace") if main_file.is_file() else None
        after, statuses, refused = apply_delta(before, delta, change.name)
        flagged = {p.path for p in problems if p.severity == "error"}
        problems += [p for p in refused if p.path not in flagged]
        updates.append(SpecUpdate(cap, shown(main_file), before, after, statuses))
    target = project.changes_folder / ARCHIVE / archive_name(change, today)
    if target.exists():
        problems.append(Problem("archive_exists", f"{shown(target)} already exists; rename "
                                "or remove it first", path=shown(target)))
    return ArchivePreview(change.name, shown(target), tuple(updates),
                          tuple(dict.fromkeys(problems)))


def recover_archives(project: Project) -> list[str]:
    """Finish every archive a crash left committed but unfinished, and drop staging that
    never reached its commit point (`archive_commit.recover`); the changes finished."""
    return recover(project)


def archive_change(change: Change, *, today: dt.date | None = None) -> ArchivePreview:
    """Archive `change`: write the updated main specs and move the change folder to
    `changes/archive/YYYY-MM-DD-<name>/`, as one commit under the project's lock
    (`archive_commit`); refused (nothing written) when the preview has an error."""

    def prepare() -> tuple[ArchivePreview, str, dict[str, str]]:
        preview = preview_archive(change, today=today)
        if not preview.ok:
            raise ArchiveRefused(f"change {change.name!r} cannot be archived; fix the "
                                 "problems below (crewbook archive --dry-run shows the "
                                 "result)", [p for p in preview.problems if p.severity == "error"])
        specs = {f"{u.capability}/spec.md": u.after for u in preview.updates
                 if u.after is not None}
        return preview, archive_name(change, today), specs

    change_folder(change)  # a change of the project, never a folder elsewhere
    prepare()  # refused before the lock is even taken: nothing written
    return commit_archive(change, prepare)  # again under the lock: the specs as they are


__all__ = ["ArchivePreview", "ArchiveRefused", "SpecUpdate", "apply_delta", "archive_change",
           "preview_archive", "recover_archives", "requirement_key"]
