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

import contextlib
import dataclasses
import datetime as dt
import re
from typing import TYPE_CHECKING

from ..errors import Problem
from .archive_commit import ArchiveRefused, change_folder, commit_archive, recover
from .archive_view import ArchivePreview, SpecUpdate
from .delta_checks import (
    delta_problems,
    has_any_file_under,
    missing_scenarios,
    skip_specs_state,
    unread_delta_files,
)
from .openspec import ARCHIVE
from .retire import MARKER, MarkerState, describe_lines, retire_marker, unaccounted_content
from .spec_checks import (
    PLACEHOLDER_PREFIX,
    PLACEHOLDER_SUFFIX,
    check_main_spec,
    parse_markdown_spec,
    structure_issues,
)
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
from .status import specs_not_a_folder

if TYPE_CHECKING:
    from .change import Change
    from .project import Project

DATED = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}-")  # ASCII digits, as the CLI


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
    body = (purpose or "").strip() or f"{PLACEHOLDER_PREFIX}{change}{PLACEHOLDER_SUFFIX}"
    return f"# {capability} Specification\n\n## Purpose\n{body}\n\n## Requirements\n"


def _readable(skeleton: str) -> bool:
    """Whether a new spec carrying the delta's Purpose reads back as one (no HTML
    comment, no structure defect, a Purpose the parser finds); else the placeholder."""
    if "<!--" in skeleton or structure_issues(skeleton):
        return False
    parsed = parse_markdown_spec(skeleton)
    return parsed.error is None and bool(parsed.overview.strip())


def match_line_ending(text: str, original: str) -> str:
    """`text` (LF) with the dominant line ending of `original` (CRLF wins a tie)."""
    crlf = original.count("\r\n")
    lf = original.count("\n") - crlf
    if crlf == 0 and lf == 0:
        return text
    return text.replace("\n", "\r\n") if crlf >= lf else text


def _raw(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def apply_delta(before: str | None, delta: DeltaSpec, change: str,
                retire: tuple[MarkerState, str] = ("none", "")
                ) -> tuple[str | None, tuple[tuple[str, str], ...], list[Problem]]:
    """The main spec text after `delta` (None when refused or retired), the status of
    each requirement it changed, and the problems that refuse it: the OpenSpec CLI's
    merge rules (RENAMED, REMOVED, MODIFIED, ADDED; re-applying an already synced
    operation is a no-op), its line endings kept, and the result validated as a main
    spec. When nothing changes, the text returned is `before` itself. `retire` is the
    change's `retire_capabilities` marker (`retire.retire_marker`): declared, a spec
    this delta empties is retired (None, no problem, a `removed` status) and a new one
    it would leave empty is not created (None, no status)."""
    f = delta.file
    problems: list[Problem] = []

    def refuse(message: str, line: int | None = None, code: str = "archive_refused") -> None:
        problems.append(Problem(code, message, path=f, line=line))

    if delta.unpaired:
        side, name, line = delta.unpaired[0]
        refuse(f"RENAMED {side}: {name!r} has no matching {'TO' if side == 'FROM' else 'FROM'}"
               ": line; write each rename as a FROM: line followed by its TO: line", line)
        return None, (), problems
    if not delta.count:
        refuse("no delta operation to apply; add `## ADDED Requirements` (or MODIFIED, "
               "REMOVED, RENAMED) or remove the file")
        return None, (), problems
    is_new = before is None
    if before is None:
        if delta.modified or delta.renamed:
            refuse("the main spec does not exist; only ADDED requirements can create it")
            return None, (), problems
        text = _skeleton(delta.capability, change, delta.purpose)
        if delta.purpose and not _readable(text):
            text = _skeleton(delta.capability, change)
    else:
        text = before
    if issues := structure_issues(text):
        for line, _code, message in issues:
            refuse(f"the main spec cannot be updated until fixed: {message}", line,
                   "spec_structure")
        return None, (), problems
    lines = split_lines(text)
    section = requirements_section(lines, fence_mask(lines))
    if section is None:
        pre, header, body_lines, after = "\n".join(lines).rstrip(), "## Requirements", [], []
    else:
        start, end = section
        pre, header = "\n".join(lines[:start]), lines[start]
        body_lines, after = lines[start + 1:end], lines[end:]
    body_mask = fence_mask(body_lines)
    first_req = next((i for i, ln in enumerate(body_lines)
                      if not body_mask[i] and REQUIREMENT_HEADER.match(ln)), len(body_lines))
    preamble = "\n".join(body_lines[:first_req]).rstrip()
    original = requirement_blocks(body_lines, body_mask, 1, f, None)
    order = [b.key for b in original]
    blocks: dict[str, Requirement] = {}
    for block in original:
        blocks[block.key] = block
    statuses: list[tuple[str, str]] = []

    def near(name: str, exclude: str | None = None) -> str | None:
        return next((k for k in blocks if k != exclude and fold(k) == fold(name)), None)

    for old, new, line in delta.renamed:
        if old not in blocks:
            if new in blocks:  # already renamed in the main spec: nothing to do
                if (miss := near(old, exclude=new)) is not None:
                    refuse(f"RENAMED {old!r}: not found, but {miss!r} exists; fix the header "
                           "to match it exactly", line)
                continue
            refuse(f"RENAMED {old!r}: not found in the main spec", line)
            continue
        if new in blocks:
            refuse(f"RENAMED {new!r}: already exists in the main spec", line)
            continue
        if (miss := near(new, exclude=old)) is not None:
            refuse(f"RENAMED TO {new!r}: {miss!r} already exists and differs only in case or "
                   "spacing; choose a distinct name", line)
            continue
        block = blocks.pop(old)
        _head, *rest = block.raw.split("\n")
        blocks[new] = Requirement(new, "\n".join([f"### Requirement: {new}", *rest]),
                                  block.file, block.line)
        order = [new if k == old else k for k in order]
        statuses.append((new, "renamed"))
    for name, line in delta.removed:
        if name not in blocks:
            if not is_new and (miss := near(name)) is not None:
                refuse(f"REMOVED {name!r}: not found, but {miss!r} exists; fix the header "
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
        if _raw(current.raw) != _raw(mod.raw):
            statuses.append((mod.key, "modified"))
        blocks[mod.key] = mod
    for add in delta.added:
        existing = blocks.get(add.key)
        if existing is not None:
            if _raw(existing.raw) != _raw(add.raw):
                refuse(f"ADDED {add.key!r}: already exists in the main spec with other text; "
                       "use MODIFIED", add.line)
            continue  # the same block already synced: nothing to do
        if (miss := near(add.key)) is not None:
            refuse(f"ADDED {add.key!r}: {miss!r} already exists and differs only in case or "
                   "spacing; use MODIFIED with that exact header, or a distinct name", add.line)
            continue
        blocks[add.key] = add
        statuses.append((add.key, "added"))
    if problems:
        return None, tuple(statuses), problems
    kept: list[Requirement] = []
    seen: set[str] = set()
    for key in order:
        if key in blocks and key not in seen:
            kept.append(blocks[key])
            seen.add(key)
    kept += [b for k, b in blocks.items() if k not in seen]
    body = "\n\n".join(([preamble] if preamble.strip() else []) + [b.raw for b in kept])
    parts = [pre.rstrip(), header, body.rstrip(), "\n".join(after).strip()]
    rebuilt = _collapse_blank_runs("\n\n".join(p for p in parts if p)).rstrip() + "\n"
    invalid = [p for p in check_main_spec(rebuilt, f) if p.severity == "error"]
    if invalid:
        emptied = not kept and all(p.code == "spec_no_requirements" for p in invalid)
        lost = unaccounted_content(pre, preamble, "\n".join(after), original) if emptied else []
        removed = any(status == "removed" for _name, status in statuses)
        if emptied and not lost and retire[0] == "declared" and (is_new or removed):
            return None, tuple(statuses), []  # retired, or an empty new spec not created
        main = f"the main spec of {delta.capability!r}"
        for p in invalid:
            refuse(f"{main} would be invalid after archive: {p.message}", code="result_invalid")
        if emptied and removed and not is_new:
            problems.append(_retire_hint(delta, retire, lost))
        return None, tuple(statuses), problems
    if before is not None and not statuses:
        return before, (), []  # already in sync: the CLI leaves the file untouched
    return (match_line_ending(rebuilt, before) if before is not None else rebuilt,
            tuple(statuses), [])


def _retire_hint(delta: DeltaSpec, retire: tuple[MarkerState, str], lost: list[str]
                 ) -> Problem:
    """Why a spec this change empties is not retired, and what to do: add the marker,
    fix one that cannot be honoured, or move the content deleting it would lose."""
    state, reason = retire
    cap = delta.capability
    unhonored = (f" The `{MARKER}` marker present cannot be honoured ({reason})."
                 if state == "unhonored" else "")
    if lost:
        return Problem("retire_blocked", f"this change removes the last requirement "
                       f"{cap!r} has; retiring the capability (deleting its spec) is refused "
                       "while the spec holds content the merge cannot account for and "
                       f"deleting the file would take with it: {describe_lines(lost)}. Move "
                       "it into `## Purpose` or a requirement, or delete the spec by hand, "
                       f"then archive again.{unhonored}", path=delta.file)
    return Problem("retire_not_declared", f"this change removes the last requirement {cap!r} "
                   f"has; to retire the capability and delete its spec, add `{MARKER}: "
                   "true` to the change's .openspec.yaml (beside its `schema:`), then "
                   f"archive again.{unhonored}", path=delta.file)


def archive_name(change: Change, today: dt.date | None = None) -> str:
    """The folder the change moves to: `YYYY-MM-DD-<name>` (UTC date); a name that
    already starts with a date keeps it, as in OpenSpec."""
    if DATED.match(change.name):
        return change.name
    day = today or dt.datetime.now(dt.UTC).date()
    return f"{day.isoformat()}-{change.name}"


_DELTA_SECTION = re.compile(r"^##\s+(ADDED|MODIFIED|REMOVED|RENAMED)\s+Requirements",
                            re.IGNORECASE | re.MULTILINE)


def _has_deltas(change: Change) -> bool:
    """Whether archive validates the change's deltas first, as the OpenSpec CLI decides:
    a delta header in some spec file, a misplaced delta file, or a `skip_specs` marker
    contradicted by files under specs/. A change with nothing to merge archives as is."""
    specs = change.folder / "specs"
    if (specs / "spec.md").is_file() or unread_delta_files(specs):
        return True
    skip = skip_specs_state(change)
    if skip == "unhonored" or (skip == "declared" and has_any_file_under(specs)):
        return True
    return any(_DELTA_SECTION.search(file.read_text("utf-8", errors="replace"))
               for _cap, file in spec_files(specs))


def preview_archive(change: Change, *, today: dt.date | None = None) -> ArchivePreview:
    """The specs archiving `change` would write, and why it would be refused; pure."""
    project = change.project
    shown = project.relative
    problems = list(delta_problems(change)) if _has_deltas(change) else []
    if (not_folder := specs_not_a_folder(change)) is not None:
        problems.append(not_folder)
    updates: list[SpecUpdate] = []
    retire = retire_marker(change)
    for cap, file in spec_files(change.folder / "specs"):
        delta = parse_delta(file.read_text("utf-8", errors="replace"), cap, shown(file))
        main_file = project.specs_folder / cap / "spec.md"
        if main_file.exists() and not main_file.is_file():
            problems.append(Problem("main_spec_unreadable", f"{shown(main_file)} is not a "
                                    "file; archive cannot update it", path=shown(file)))
            continue
        # bytes decoded as they are: read_text would turn CRLF into LF
        before = (main_file.read_bytes().decode("utf-8", errors="replace")
                  if main_file.is_file() else None)
        after, statuses, refused = apply_delta(before, delta, change.name, retire)
        flagged = {p.path for p in problems if p.severity == "error"}
        problems += [p for p in refused if p.path not in flagged]
        retired = after is None and not refused and before is not None
        if after is None and not refused and before is None:
            continue  # a REMOVED-only delta of a capability already retired: nothing to do
        updates.append(SpecUpdate(cap, shown(main_file), before, after, statuses, retired))
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
    (`archive_commit`); refused (nothing written) when the preview has an error. The
    preview it acted on is returned marked `archived`."""

    def prepare() -> tuple[ArchivePreview, str, dict[str, str | None]]:
        preview = preview_archive(change, today=today)
        if not preview.ok:
            raise ArchiveRefused(f"change {change.name!r} cannot be archived; fix the "
                                 "problems below (crewbook archive --dry-run shows the "
                                 "result)", [p for p in preview.problems if p.severity == "error"])
        specs: dict[str, str | None] = {  # None: retired (deleted); in sync: untouched
            f"{u.capability}/spec.md": u.after for u in preview.updates
            if u.retired or (u.after is not None and u.after != u.before)}
        return preview, archive_name(change, today), specs

    change_folder(change)  # a change of the project, never a folder elsewhere
    # refused before the lock is even taken: nothing written. A file of the change that
    # goes while it is read (another archive moved the change meanwhile) leaves the
    # decision to the lock, which refuses a change that is gone (`change_gone`).
    with contextlib.suppress(FileNotFoundError):
        prepare()
    done = commit_archive(change, prepare)  # again under the lock: the specs as they are
    return dataclasses.replace(done, archived=True)


__all__ = ["ArchivePreview", "ArchiveRefused", "SpecUpdate", "apply_delta", "archive_change",
           "preview_archive", "recover_archives", "requirement_key"]
