"""Archive a change (A9 sync and archive): apply its deltas to the main specs.

`preview_archive(change)` is pure: it returns the specs the archive would write (an
`ArchivePreview`: frames, a side-by-side diff as text and HTML, a drawing) and every
problem that would stop it, writing nothing. `archive_change(change)` does it the way
OpenSpec does (RENAMED, then REMOVED, MODIFIED, ADDED; the change folder moves to
`changes/archive/YYYY-MM-DD-<name>/`), refusing when the deltas do not validate.

Atomicity: the new spec files are first written to a staging folder beside the
archive, then a plan file is written in one `os.replace` (the commit point). Before
that point a crash leaves the old state; after it, `recover_archives` (run by every
archive) finishes the moves, each an atomic rename, so the project ends in the new state.
"""

from __future__ import annotations

import datetime as dt
import difflib
import html
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..draw.display import Drawable
from ..errors import InvalidInputError, Problem
from .delta_checks import delta_problems, missing_scenarios
from .openspec import ARCHIVE
from .specs import (
    REQUIREMENT_HEADER,
    DeltaSpec,
    Requirement,
    fence_mask,
    fold,
    parse_delta,
    parse_spec,
    requirement_blocks,
    requirement_key,
    requirements_frame,
    requirements_section,
    spec_files,
    split_lines,
)

if TYPE_CHECKING:
    import pandas as pd

    from ..draw.model import GraphModel
    from .change import Change
    from .project import Project

PENDING_PREFIX = ".crewbook-pending-"


class ArchiveRefused(InvalidInputError):
    """The change cannot be archived: its problems say why and what to do."""


@dataclass(frozen=True)
class SpecUpdate:
    """One capability's main spec before and after the archive, and what changed."""

    capability: str
    path: str
    before: str | None
    after: str | None
    statuses: tuple[tuple[str, str], ...] = ()  # (requirement, added|modified|removed|renamed)

    @property
    def counts(self) -> dict[str, int]:
        """Operations applied, by kind."""
        out = {k: 0 for k in ("added", "modified", "removed", "renamed")}
        for _, status in self.statuses:
            out[status] += 1
        return out


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


@dataclass(frozen=True, eq=False)
class ArchivePreview(Drawable):
    """What archiving a change would do, computed without writing anything."""

    change: str
    target: str
    updates: tuple[SpecUpdate, ...]
    problems: tuple[Problem, ...] = field(default=())

    @property
    def ok(self) -> bool:
        """Whether the archive would go ahead (no error)."""
        return not any(p.severity == "error" for p in self.problems)

    def frame(self) -> pd.DataFrame:
        """One row per requirement of the resulting specs: capability, requirement,
        op... (see `requirements_frame`) plus `status` (added, modified, renamed or
        unchanged); removed requirements are rows with status `removed` and no line."""
        import pandas as pd

        parts = []
        for u in self.updates:
            status = dict(u.statuses)
            if u.after is None:
                continue
            df = requirements_frame([parse_spec(u.after, u.capability, u.path)])
            df["status"] = [status.get(r, "unchanged") for r in df["requirement"]]
            gone = [r for r, s in u.statuses if s == "removed"]
            if gone:
                df = pd.concat([df, pd.DataFrame({
                    "capability": u.capability, "requirement": gone, "file": u.path,
                    "status": "removed"})], ignore_index=True)
            parts.append(df)
        columns = ["capability", "requirement", "op", "scenarios", "normative", "file",
                   "line", "status"]
        out = (pd.concat(parts, ignore_index=True) if parts
               else pd.DataFrame(columns=columns))[columns]
        out = out.astype({"capability": "string", "requirement": "string",
                          "scenarios": "Int64", "normative": "boolean", "file": "string",
                          "line": "Int64"})
        out["status"] = pd.Categorical(out["status"], categories=[
            "added", "modified", "renamed", "removed", "unchanged"])
        return out.sort_values(["capability", "line", "requirement"], kind="stable",
                               na_position="last").reset_index(drop=True)

    def diff(self, width: int = 60) -> str:
        """A side-by-side text diff of every spec (before | after), changed lines only
        with 2 lines of context."""
        out = [f"Archive preview of {self.change} → {self.target}"]
        for u in self.updates:
            old = (u.before or "").splitlines()
            new = (u.after or "").splitlines()
            out.append(f"\n== {u.path} " + ("(new spec)" if u.before is None else ""))
            out.append(f"{'before':<{width}} | after")
            matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
            for group in matcher.get_grouped_opcodes(2):
                out.append("-" * width + "-+-" + "-" * width)
                for tag, i1, i2, j1, j2 in group:
                    left, right = old[i1:i2], new[j1:j2]
                    mark = {"equal": " ", "replace": "|", "delete": "<", "insert": ">"}[tag]
                    for k in range(max(len(left), len(right))):
                        a = left[k] if k < len(left) else ""
                        b = right[k] if k < len(right) else ""
                        out.append(f"{_cut(a, width):<{width}} {mark} {_cut(b, width)}")
        out += [str(p) for p in self.problems]
        return "\n".join(out)

    def __str__(self) -> str:
        counts = self.counts()
        verdict = "would archive" if self.ok else "REFUSED"
        lines = [f"Archive preview of {self.change}: {verdict} → {self.target}"]
        for u in self.updates:
            c = u.counts
            lines.append(f"  {u.path}{' (new)' if u.before is None else ''}: "
                         + ", ".join(f"{n} {k}" for k, n in c.items() if n))
        lines.append("  total: " + ", ".join(f"{n} {k}" for k, n in counts.items()))
        lines += [f"  {p}" for p in self.problems]
        return "\n".join(lines)

    def counts(self) -> dict[str, int]:
        """Operations applied over every spec, by kind."""
        total = {k: 0 for k in ("added", "modified", "removed", "renamed")}
        for u in self.updates:
            for k, n in u.counts.items():
                total[k] += n
        return total

    def to_dict(self) -> dict[str, Any]:
        """The shape of `crewbook archive --dry-run --json`."""
        return {"change": self.change, "target": self.target, "ok": self.ok,
                "specs": [{"capability": u.capability, "path": u.path,
                           "new": u.before is None, **u.counts} for u in self.updates],
                "problems": [p.to_dict() for p in self.problems]}

    def __repr__(self) -> str:
        c = self.counts()
        return (f"<ArchivePreview {self.change!r}: {'ok' if self.ok else 'refused'}, "
                f"{len(self.updates)} specs, {c['added']} added, {c['modified']} modified, "
                f"{c['removed']} removed, {c['renamed']} renamed>")

    def graph_model(self) -> GraphModel:
        """The resulting specs side by side: one box per capability, one node per
        requirement coloured by what the archive does to it."""
        from ..draw.model import Edge, GraphModel, Node

        model = GraphModel(name="archive_preview", title=f"Archive of {self.change}",
                           direction="LR",
                           legend=(("added", "added"), ("changed", "modified or renamed"),
                                   ("removed", "removed"), ("done", "unchanged")))
        colour = {"added": "added", "modified": "changed", "renamed": "changed",
                  "removed": "removed", "unchanged": "done"}
        for u in self.updates:
            model.clusters[u.capability] = u.capability
            status = dict(u.statuses)
            names = [r.key for r in parse_spec(u.after or "", u.capability).requirements]
            names += [r for r, s in u.statuses if s == "removed"]
            previous: str | None = None
            for rank, name in enumerate(names):
                node_id = f"{u.capability}::{name}"
                model.add_node(Node(node_id, label=name, group=u.capability, rank=rank,
                                    status=colour[status.get(name, "unchanged")],
                                    tooltip=status.get(name, "unchanged")))
                if previous:
                    model.add_edge(Edge(previous, node_id, kind="flow", style="dotted"))
                previous = node_id
        return model

    def _repr_html_(self) -> str:
        tables = []
        for u in self.updates:
            table = difflib.HtmlDiff(wrapcolumn=60).make_table(
                (u.before or "").splitlines(), (u.after or "").splitlines(),
                "before", "after", context=True, numlines=2)
            tables.append(f"<h4>{html.escape(u.path)}</h4>{table}")
        probs = "".join(f"<li>{html.escape(str(p))}</li>" for p in self.problems)
        return (f"<div class='crewbook-archive'><p><b>{html.escape(str(self).splitlines()[0])}"
                f"</b></p>{''.join(tables)}" + (f"<ul>{probs}</ul>" if probs else "")
                + "</div>")


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


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


def _fsync_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


def recover_archives(project: Project) -> list[str]:
    """Finish every archive whose plan was committed but whose moves did not all
    happen (a crash); drop staging folders that never reached their commit point."""
    archive = project.changes_folder / ARCHIVE
    done: list[str] = []
    if not archive.is_dir():
        return done
    for staging in sorted(archive.glob(f"{PENDING_PREFIX}*")):
        plan_file = staging / "plan.json"
        if not plan_file.is_file():
            shutil.rmtree(staging)
            continue
        plan = json.loads(plan_file.read_text("utf-8"))
        for rel in plan["specs"]:
            staged, target = staging / "specs" / rel, project.specs_folder / rel
            if staged.is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(staged, target)
        source, target = Path(plan["source"]), Path(plan["target"])
        if source.is_dir() and not target.exists():
            os.rename(source, target)
        shutil.rmtree(staging)
        done.append(plan["change"])
    return done


def archive_change(change: Change, *, today: dt.date | None = None) -> ArchivePreview:
    """Archive `change`: write the updated main specs and move the change folder to
    `changes/archive/YYYY-MM-DD-<name>/`; refused (nothing written) when the preview
    has an error."""
    recover_archives(change.project)
    preview = preview_archive(change, today=today)
    if not preview.ok:
        raise ArchiveRefused(f"change {change.name!r} cannot be archived; fix the problems "
                             "below (crewbook archive --dry-run shows the result)",
                             [p for p in preview.problems if p.severity == "error"])
    project = change.project
    archive = project.changes_folder / ARCHIVE
    target = archive / archive_name(change, today)
    staging = archive / f"{PENDING_PREFIX}{target.name}"
    if staging.exists():
        shutil.rmtree(staging)
    specs: list[str] = []
    for u in preview.updates:
        if u.after is None:
            continue
        rel = f"{u.capability}/spec.md"
        _fsync_write(staging / "specs" / rel, u.after)
        specs.append(rel)
    plan = {"change": change.name, "source": str(change.folder.resolve()),
            "target": str(target.resolve()), "specs": specs}
    _fsync_write(staging / "plan.tmp", json.dumps(plan, indent=1))
    os.replace(staging / "plan.tmp", staging / "plan.json")  # the commit point
    recover_archives(project)
    return preview


__all__ = ["ArchivePreview", "ArchiveRefused", "SpecUpdate", "apply_delta", "archive_change",
           "preview_archive", "recover_archives", "requirement_key"]
