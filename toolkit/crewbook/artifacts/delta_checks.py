"""Check a change's spec deltas the way `openspec validate` does (A9).

Errors make the change invalid (as in OpenSpec, without `--strict`): no delta at all
unless `skip_specs`, a delta file with no delta section or an empty one, a requirement
without text or without a scenario, duplicates and contradictions inside a file,
unpaired RENAMED lines, delta files archive would not read, and a MODIFIED block that
drops scenarios the main spec still has. Warnings: no SHALL/MUST in the text, a
requirement outside any delta section, and (crewbook) a MODIFIED, REMOVED or RENAMED
naming a requirement the main spec does not have, which archive refuses.
"""

from __future__ import annotations

import os
import weakref
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING

from ..errors import Problem
from .specs import (
    DeltaSpec,
    MainSpec,
    Requirement,
    fold,
    parse_delta,
    parse_spec,
    spec_files,
)

if TYPE_CHECKING:
    from .change import Change
    from .project import Project

_DELTA_HEADER = ("## added requirements", "## modified requirements",
                 "## removed requirements", "## renamed requirements")


def _p(code: str, message: str, path: str, line: int | None = None,
       severity: str = "error") -> Problem:
    return Problem(code, message, path=path, line=line,
                   severity="warning" if severity == "warning" else "error")


def missing_scenarios(current: Requirement, incoming: Requirement) -> list[str]:
    """Scenario names `current` has and `incoming` does not (counted as a multiset)."""
    left: dict[str, int] = {}
    for s in incoming.scenarios:
        left[s.name] = left.get(s.name, 0) + 1
    out = []
    for s in current.scenarios:
        if left.get(s.name, 0) > 0:
            left[s.name] -= 1
        else:
            out.append(s.name)
    return out


def _requirement_checks(req: Requirement, op: str, file: str) -> list[Problem]:
    problems = []
    if not req.text:
        problems.append(_p("requirement_no_text", f"{op} {req.key!r} has no requirement text; "
                           "write what the system SHALL do under its header", file, req.line))
    elif not req.normative:
        problems.append(_p("requirement_not_normative", f"{op} {req.key!r} does not say SHALL "
                           "or MUST; state the requirement normatively", file, req.line,
                           "warning"))
    if not [s for s in req.scenarios if s.has_body]:
        problems.append(_p("requirement_no_scenario", f"{op} {req.key!r} must include at least "
                           "one scenario (`#### Scenario: <name>` with WHEN/THEN lines)",
                           file, req.line))
    return problems


def check_delta(delta: DeltaSpec, main: MainSpec | None) -> list[Problem]:
    """Every problem of one delta file, against its main spec (None: a new capability)."""
    f = delta.file
    problems: list[Problem] = []
    for header, section, line in delta.skipped_headers:
        problems.append(_p("not_a_requirement", f"`### {header}` in {section} is not a "
                           f"`### Requirement:` header and is ignored; write `### Requirement: "
                           f"{header}` if it is one", f, line, "warning"))
    for side, name, line in delta.unpaired:
        other = "TO" if side == "FROM" else "FROM"
        problems.append(_p("rename_unpaired", f"RENAMED {side}: {name!r} has no matching "
                           f"{other}: line; write each rename as a FROM: line followed by its "
                           "TO: line", f, line))
    for orphan, under, line in delta.orphans:
        where = f"under `## {under}`" if under else "above the first `## ` section"
        problems.append(_p("requirement_outside_delta", f"requirement {orphan!r} is {where}, "
                           "not in a delta section, so it is ignored; move it under `## ADDED "
                           "Requirements` (or MODIFIED, REMOVED, RENAMED)", f, line, "warning"))
    if not delta.count:
        if delta.sections:
            problems.append(_p("delta_empty", f"delta sections {', '.join(delta.sections)} "
                               "hold no `### Requirement:` entry; add one per requirement "
                               "(REMOVED may use a bullet list)", f))
        else:
            problems.append(_p("delta_no_sections", "no delta section; add headers such as "
                               "`## ADDED Requirements`, or move notes outside specs/", f))
    seen: dict[str, set[str]] = {op: set() for op in ("ADDED", "MODIFIED", "REMOVED")}
    for req in delta.added + delta.modified:
        op: str = req.op or "ADDED"
        if req.key in seen[op]:
            problems.append(_p("duplicate_requirement", f"{req.key!r} appears twice in {op}",
                               f, req.line))
        seen[op].add(req.key)
        problems += _requirement_checks(req, op, f)
    for name, line in delta.removed:
        if name in seen["REMOVED"]:
            problems.append(_p("duplicate_requirement", f"{name!r} appears twice in REMOVED",
                               f, line))
        seen["REMOVED"].add(name)
    froms: set[str] = set()
    tos: set[str] = set()
    for old, new, line in delta.renamed:
        if old in froms:
            problems.append(_p("duplicate_requirement", f"FROM {old!r} appears twice in "
                               "RENAMED", f, line))
        if new in tos:
            problems.append(_p("duplicate_requirement", f"TO {new!r} appears twice in RENAMED",
                               f, line))
        froms.add(old)
        tos.add(new)
    first = {r.key: r.line for r in delta.added + delta.modified}
    first.update({n: ln for n, ln in delta.removed if n not in first})
    for a, b in (("MODIFIED", "REMOVED"), ("MODIFIED", "ADDED"), ("ADDED", "REMOVED")):
        for name in sorted(seen[a] & seen[b]):
            problems.append(_p("delta_conflict", f"{name!r} is both in {a} and {b}; keep one",
                               f, first.get(name)))
    removed_folded = {fold(n): n for n in seen["REMOVED"]}
    for old, new, line in delta.renamed:
        if old in seen["MODIFIED"]:
            problems.append(_p("delta_conflict", f"MODIFIED names {old!r}, which RENAMED "
                               f"renames; use the new header {new!r}", f, line))
        if new in seen["ADDED"]:
            problems.append(_p("delta_conflict", f"RENAMED TO {new!r} collides with ADDED",
                               f, line))
        if fold(old) in removed_folded:
            problems.append(_p("delta_conflict", f"{old!r} is both in RENAMED and REMOVED",
                               f, line))
    problems += _against_main(delta, main)
    return problems


def _against_main(delta: DeltaSpec, main: MainSpec | None) -> list[Problem]:
    """What the main spec says about the delta: scenarios a MODIFIED block drops (an
    error, as in OpenSpec) and operations naming a requirement it lacks (archive
    refuses them; a warning here, since other changes may add it first)."""
    f = delta.file
    problems: list[Problem] = []
    current = {r.key: r for r in main.requirements} if main else {}
    renamed_to = {new: old for old, new, _ in delta.renamed}
    renamed_away = {old for old, _, _ in delta.renamed}
    for req in delta.modified:
        if req.key in renamed_away:
            continue
        key: str | None = req.key
        seen: set[str] = set()
        while key is not None and key not in current and key not in seen:
            seen.add(key)
            key = renamed_to.get(key)
        base = current.get(key) if key is not None else None
        if base is None:
            problems.append(_p("delta_target_missing", f"MODIFIED {req.key!r}: the main spec "
                               f"{'has no such requirement' if main else 'does not exist'}, so "
                               "archive would refuse it; use ADDED, or archive the change that "
                               "adds it first", f, req.line, "warning"))
            continue
        if lost := missing_scenarios(base, req):
            problems.append(_p("scenario_dropped", f"MODIFIED {req.key!r} omits scenario(s) "
                               f"the current spec still has: {', '.join(map(repr, lost))}; "
                               "copy them into the MODIFIED block (it replaces the whole "
                               "requirement)", f, req.line))
    for old, _new, line in delta.renamed:
        if old not in current:
            problems.append(_p("delta_target_missing", f"RENAMED FROM {old!r}: the main spec "
                               "has no such requirement, so archive would refuse it", f, line,
                               "warning"))
    for name, line in delta.removed:
        if main and name not in current:
            problems.append(_p("delta_target_missing", f"REMOVED {name!r}: the main spec has "
                               "no such requirement (already removed?)", f, line, "warning"))
    return problems


def unread_delta_files(specs_dir: Path) -> list[Path]:
    """Markdown files under specs/ holding delta sections that archive never reads
    (anything but `<capability>/spec.md`); dot entries skipped, folder links not
    followed, as OpenSpec walks it."""
    found: list[Path] = []
    if not specs_dir.is_dir():
        return found
    for dirpath, dirnames, filenames in os.walk(specs_dir):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name.startswith(".") or not name.endswith(".md") or name == "spec.md":
                continue
            file = Path(dirpath) / name
            if _holds_delta_header(file):
                found.append(file)
    return sorted(found)


def _holds_delta_header(file: Path) -> bool:
    """Whether `file` is a file with a line that is a delta section header (any case)."""
    if not file.is_file():
        return False
    text = file.read_text("utf-8", errors="replace").lower()
    return any(line.strip() in _DELTA_HEADER for line in text.splitlines())


def _under_specs(scanned: dict[str, bool]) -> list[tuple[list[str], bool]]:
    """(parts below specs/, is a link) of every file the status scan saw under specs/,
    dot entries left out (as OpenSpec walks it)."""
    out = []
    for rel, link in scanned.items():
        parts = rel.split("/")
        if parts[0] == "specs" and len(parts) > 1 and not any(
                p.startswith(".") for p in parts[1:]):
            out.append((parts[1:], link))
    return out


def _specs_from(scanned: dict[str, bool], folder: Path) -> list[tuple[str, Path]]:
    """`spec_files(folder / "specs")` from the status scan (which never follows folder
    links); a linked spec.md kept only when it stays inside specs/."""
    root = folder / "specs"
    found = []
    for parts, link in _under_specs(scanned):
        if len(parts) < 2 or parts[-1] != "spec.md":
            continue
        file = root.joinpath(*parts)
        if link and not (file.is_file() and file.resolve().is_relative_to(root.resolve())):
            continue
        found.append(("/".join(parts[:-1]), file))
    return sorted(found)


def _unread_from(scanned: dict[str, bool], folder: Path) -> list[Path]:
    """`unread_delta_files(folder / "specs")` from the status scan."""
    root = folder / "specs"
    found = []
    for parts, _link in _under_specs(scanned):
        if not parts[-1].endswith(".md") or parts[-1] == "spec.md":
            continue
        file = root.joinpath(*parts)
        if _holds_delta_header(file):
            found.append(file)
    return sorted(found)


def has_any_file_under(folder: Path) -> bool:
    """Whether `folder` holds a file, as OpenSpec's skip_specs check asks: dot entries
    skipped, links count; a `specs` that is itself a file counts (it fails closed)."""
    if not folder.exists() and not folder.is_symlink():
        return False
    if not folder.is_dir():
        return True
    for entry in os.scandir(folder):
        if entry.name.startswith("."):
            continue
        if entry.is_symlink() or entry.is_file(follow_symlinks=False):
            return True
        if entry.is_dir(follow_symlinks=False) and has_any_file_under(Path(entry.path)):
            return True
    return False


def skip_specs_state(change: Change) -> str:
    """`declared`, `none`, or `unhonored`: a `skip_specs: true` in metadata OpenSpec
    rejects (no `schema`, or one the project does not have or cannot read) is not
    honoured, and says so."""
    from ..errors import CrewbookError

    if not change.file.skip_specs:
        return "none"
    if any(p.code == "metadata_no_schema" for p in change.warnings):
        return "unhonored"
    try:
        change.schema()
    except CrewbookError:
        return "unhonored"
    return "declared"


#: Parsed main specs by project (dropped with the project object), then by capability.
_MAIN_SPECS: weakref.WeakKeyDictionary[Project, dict[str, tuple[int, int, MainSpec]]] = \
    weakref.WeakKeyDictionary()


def _main_spec(project: Project, cap: str, stat: os.stat_result | None = None,
               file: Path | None = None) -> MainSpec | None:
    """The main spec of `cap`, parsed once per project object while the file is
    unchanged (1,000 changes touching 200 specs parse each spec once); `stat` and
    `file` are the file's, when the caller has them."""
    file = file or project.specs_folder / cap / "spec.md"
    if stat is None:
        try:
            stat = os.stat(file)
        except OSError:
            return None
    if not S_ISREG(stat.st_mode):
        return None
    cache = _MAIN_SPECS.setdefault(project, {})
    hit = cache.get(cap)
    if hit is None or hit[:2] != (stat.st_mtime_ns, stat.st_size):
        spec = parse_spec(file.read_text("utf-8", errors="replace"), cap, project.relative(file))
        cache[cap] = hit = (stat.st_mtime_ns, stat.st_size, spec)
    return hit[2]


def delta_problems(change: Change, scanned: dict[str, bool] | None = None) -> list[Problem]:
    """Every problem of `change`'s deltas, with file:line and what to do; `scanned` is
    the change folder's listing from its status (`ChangeStatus.files`), if at hand."""
    project = change.project
    specs_dir = change.folder / "specs"
    shown = project.relative
    problems: list[Problem] = []
    at_root = ((specs_dir / "spec.md").is_file() if scanned is None or "specs/spec.md" in scanned
               else False)  # the listing says there is none: no stat
    if at_root:
        problems.append(_p("delta_at_specs_root", "a delta at specs/spec.md has no capability "
                           "and is ignored by archive; move it to specs/<capability>/spec.md",
                           shown(specs_dir / "spec.md")))
    unread = (_unread_from(scanned, change.folder) if scanned is not None
              else unread_delta_files(specs_dir))
    misplaced = bool(unread) or at_root
    for file in unread:
        problems.append(_p("delta_not_read", "this file holds delta sections but archive only "
                           "reads specs/<capability>/spec.md; move its requirements there",
                           shown(file)))
    total = 0
    found = (_specs_from(scanned, change.folder) if scanned is not None
             else spec_files(specs_dir))
    for cap, file in found:
        delta = parse_delta(file.read_text("utf-8", errors="replace"), cap, shown(file))
        total += delta.count
        main_file = project.specs_folder / cap / "spec.md"
        try:
            stat: os.stat_result | None = os.stat(main_file)  # one stat, not four
        except OSError:
            stat = None
        if stat is not None and not S_ISREG(stat.st_mode):
            problems.append(_p("main_spec_unreadable", f"{shown(main_file)} is not a file, so "
                               "archive cannot read or update it; replace it with the "
                               "capability's spec.md", shown(file)))
            continue
        problems += check_delta(delta, _main_spec(project, cap, stat, main_file)
                                if stat else None)
    where = shown(change.folder)
    skip = skip_specs_state(change)
    if skip == "unhonored":
        problems.append(_p("skip_specs_unhonored", "skip_specs is set but .openspec.yaml is "
                           "not valid change metadata (no `schema`, or a schema the project "
                           "does not have or cannot read), so the marker is not honoured; "
                           "name a usable schema (`schema: <name>`)", where))
    if skip == "declared" and has_any_file_under(specs_dir):
        problems.append(_p("skip_specs_conflict", "skip_specs is set but files exist under "
                           "specs/; remove skip_specs or delete the delta files", where))
    if total == 0 and skip != "declared" and not misplaced:
        problems.append(_p("no_deltas", "the change has no spec delta; add "
                           "specs/<capability>/spec.md with `## ADDED Requirements` (each "
                           "requirement with a `#### Scenario:`), or set `skip_specs: true` "
                           "if it changes no spec", where))
    return problems
