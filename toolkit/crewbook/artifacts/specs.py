"""Main specs and spec deltas (A9), parsed the way OpenSpec parses them.

A main spec is `<layout folder>/specs/<capability>/spec.md`: `## Requirements` holding
`### Requirement: <name>` blocks, each with `#### Scenario: <name>` blocks. A change's
deltas are its `specs/<capability>/spec.md` files with `## ADDED|MODIFIED|REMOVED|RENAMED
Requirements` sections. Lines inside code fences never count. Everything keeps its file
and line so problems and frames point at the source.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..errors import NotFoundError, did_you_mean

if TYPE_CHECKING:
    import pandas as pd

Op = Literal["ADDED", "MODIFIED", "REMOVED", "RENAMED"]
OPS: tuple[Op, ...] = ("ADDED", "MODIFIED", "REMOVED", "RENAMED")

REQUIREMENT_HEADER = re.compile(r"^###\s*Requirement:\s*(.+)\s*$", re.IGNORECASE)
_SECTION = re.compile(r"^##\s+(.+)$")
_SCENARIO = re.compile(r"^####\s+")
_SCENARIO_END = re.compile(r"^#{1,4}\s")
_HEADER = re.compile(r"^#{1,6}\s")
_METADATA = re.compile(r"^\*\*[^*]+\*\*:")
_H3 = re.compile(r"^###\s+(.+?)\s*$")
_REMOVED_BULLET = re.compile(r"^\s*[-*+]\s*`?###\s*Requirement:\s*(.+?)`?\s*$")
_FROM = re.compile(r"^\s*[-*+]?\s*FROM:\s*`?###\s*Requirement:\s*(.+?)`?\s*$")
_TO = re.compile(r"^\s*[-*+]?\s*TO:\s*`?###\s*Requirement:\s*(.+?)`?\s*$")
_FENCE_OPEN = re.compile(r"^\s*(`{3,}|~{3,})")
_FENCE_CLOSE = re.compile(r"^\s*(`{3,}|~{3,})\s*$")
_NORMATIVE = re.compile(r"\b(SHALL|MUST)\b")
_CLOSING_HASHES = re.compile(r"[ \t]+#+[ \t]*$")
_SCENARIO_PREFIX = re.compile(r"^Scenario:\s*", re.IGNORECASE)
_NEWLINES = re.compile(r"\r\n?")
_REQUIREMENTS = re.compile(r"^##\s+Requirements\s*$", re.IGNORECASE)
_SECTION_START = re.compile(r"^##\s+")
# Every header pattern above starts with `#` and every fence holds ``` or ~~~: the
# parsers test those first, so most lines of a spec never reach a regex.


def fence_mask(lines: list[str]) -> list[bool]:
    """True for each line inside a fenced code block (fence lines included)."""
    mask = [False] * len(lines)
    active: tuple[str, int] | None = None
    for i, line in enumerate(lines):
        fence = "```" in line or "~~~" in line
        if active is None:
            if fence and (m := _FENCE_OPEN.match(line)):
                active, mask[i] = (m.group(1)[0], len(m.group(1))), True
            continue
        mask[i] = True
        close = _FENCE_CLOSE.match(line) if fence else None
        if close and close.group(1)[0] == active[0] and len(close.group(1)) >= active[1]:
            active = None
    return mask


def split_lines(text: str) -> list[str]:
    """Lines as OpenSpec reads them: BOM dropped, CRLF and CR as newlines."""
    text = text.removeprefix("\ufeff")
    return (_NEWLINES.sub("\n", text) if "\r" in text else text).split("\n")


def requirement_key(name: str) -> str:
    """A requirement's identity: its name without a closing `#` run, trimmed
    (matching is case-sensitive, as in OpenSpec)."""
    return _CLOSING_HASHES.sub("", name).strip() if "#" in name else name.strip()


def fold(name: str) -> str:
    """Case- and space-insensitive form, to spot near misses."""
    return re.sub(r"\s+", " ", requirement_key(name).lower())


def requirement_body(lines: list[str]) -> str:
    """The text of a requirement: its lines before the first header, fenced and blank
    lines skipped, `**Meta**:` lines only when nothing else is there."""
    mask = fence_mask(lines)
    captured: list[str] = []
    metadata: list[str] = []
    for hidden, line in zip(mask, lines, strict=True):
        if hidden:
            continue
        if line[:1] == "#" and _HEADER.match(line):
            break
        stripped = line.strip()
        if stripped:
            (metadata if stripped[:2] == "**" and _METADATA.match(stripped)
             else captured).append(stripped)
    return "\n".join(captured or metadata)

@dataclass(frozen=True)
class Scenario:
    """One `#### Scenario:` of a requirement."""

    name: str
    line: int
    body: str

    @property
    def has_body(self) -> bool:
        """OpenSpec drops a scenario whose body is empty."""
        return bool(self.body.strip())


@dataclass(frozen=True)
class Requirement:
    """One `### Requirement:` block: its name, body text, scenarios, file and line."""

    name: str
    raw: str
    file: str
    line: int
    op: Op | None = None

    @property
    def key(self) -> str:
        """The name as matched across specs and deltas."""
        return requirement_key(self.name)

    @cached_property
    def text(self) -> str:
        """The body before the first header, fenced lines and blanks skipped
        (`**Meta**:` lines only when nothing else is there)."""
        return requirement_body(self.raw.split("\n")[1:])

    @cached_property
    def scenarios(self) -> tuple[Scenario, ...]:
        """Every `#### ` header of the block (outside fences), with its body."""
        lines = self.raw.split("\n")
        mask = fence_mask(lines)
        found = []
        for i, line in enumerate(lines):
            if mask[i] or line[:4] != "####" or not _SCENARIO.match(line):
                continue
            end = i + 1
            while end < len(lines) and (mask[end] or lines[end][:1] != "#"
                                        or not _SCENARIO_END.match(lines[end])):
                end += 1
            name = _CLOSING_HASHES.sub("", _SCENARIO.sub("", line))
            name = _SCENARIO_PREFIX.sub("", name).strip()
            found.append(Scenario(name, self.line + i, "\n".join(lines[i + 1:end])))
        return tuple(found)

    @property
    def normative(self) -> bool:
        """Whether its text says SHALL or MUST."""
        return bool(_NORMATIVE.search(self.text))


def requirement_blocks(lines: list[str], mask: list[bool], first_line: int, file: str,
                       op: Op | None, skipped: list[tuple[str, int]] | None = None
                       ) -> list[Requirement]:
    """The `### Requirement:` blocks of a section body (lines numbered from first_line)."""
    blocks: list[Requirement] = []
    i = 0

    def note(index: int) -> None:
        if skipped is not None and not mask[index] and lines[index][:3] == "###":
            h3 = _H3.match(lines[index])
            if h3 and not REQUIREMENT_HEADER.match(lines[index]):
                skipped.append((h3.group(1).strip(), first_line + index))

    def header(index: int) -> re.Match[str] | None:
        line = lines[index]
        return (REQUIREMENT_HEADER.match(line) if line[:3] == "###" and not mask[index]
                else None)

    n = len(lines)
    while i < n:
        m = None
        while i < n and not (m := header(i)):
            note(i)
            i += 1
        if m is None:
            break
        start, buf = i, [lines[i]]
        i += 1
        while i < n and (mask[i] or lines[i][:2] != "##"
                         or not (REQUIREMENT_HEADER.match(lines[i]) or _SECTION.match(lines[i]))):
            note(i)
            buf.append(lines[i])
            i += 1
        blocks.append(Requirement(requirement_key(m.group(1)), "\n".join(buf).rstrip(),
                                  file, first_line + start, op))
    return blocks


@dataclass(frozen=True)
class MainSpec:
    """A main spec: its capability, file, and the requirements of `## Requirements`."""

    capability: str
    file: str
    text: str
    requirements: tuple[Requirement, ...]
    has_requirements_section: bool

    def __getitem__(self, name: str) -> Requirement:
        for req in self.requirements:
            if req.key == requirement_key(name):
                return req
        raise NotFoundError(f"spec {self.capability!r} has no requirement {name!r}"
                            + did_you_mean(name, self.names()))

    def names(self) -> list[str]:
        """Requirement names, in file order."""
        return [r.key for r in self.requirements]


def requirements_section(lines: list[str], mask: list[bool]) -> tuple[int, int] | None:
    """(header index, end index) of `## Requirements`, or None."""
    start = next((i for i, line in enumerate(lines)
                  if line[:2] == "##" and not mask[i] and _REQUIREMENTS.match(line)), None)
    if start is None:
        return None
    end = next((i for i in range(start + 1, len(lines))
                if lines[i][:2] == "##" and not mask[i] and _SECTION_START.match(lines[i])),
               len(lines))
    return start, end


def parse_spec(text: str, capability: str, file: str = "spec.md") -> MainSpec:
    """A main spec's requirements (those under `## Requirements`)."""
    lines = split_lines(text)
    mask = fence_mask(lines)
    section = requirements_section(lines, mask)
    if section is None:
        return MainSpec(capability, file, text, (), False)
    start, end = section
    reqs = requirement_blocks(lines[start + 1:end], mask[start + 1:end], start + 2, file, None)
    return MainSpec(capability, file, text, tuple(reqs), True)


@dataclass(frozen=True)
class DeltaSpec:
    """One delta file of a change: its operations, with the lines they come from."""

    capability: str
    file: str
    added: tuple[Requirement, ...] = ()
    modified: tuple[Requirement, ...] = ()
    removed: tuple[tuple[str, int], ...] = ()
    renamed: tuple[tuple[str, str, int], ...] = ()
    unpaired: tuple[tuple[str, str, int], ...] = ()
    skipped_headers: tuple[tuple[str, str, int], ...] = ()
    orphans: tuple[tuple[str, str | None, int], ...] = ()
    sections: tuple[str, ...] = ()
    #: The delta's `## Purpose` body: the Purpose of a spec the archive creates.
    purpose: str | None = None

    @property
    def count(self) -> int:
        """Number of operations."""
        return len(self.added) + len(self.modified) + len(self.removed) + len(self.renamed)


def parse_delta(text: str, capability: str, file: str = "spec.md") -> DeltaSpec:
    """A delta file: `## ADDED|MODIFIED|REMOVED|RENAMED Requirements` (case-insensitive,
    repeated sections merged), requirements outside them reported as orphans."""
    lines = split_lines(text)
    mask = fence_mask(lines)
    heads = [(i, m.group(1).strip()) for i, line in enumerate(lines)
             if line[:2] == "##" and not mask[i] and (m := _SECTION.match(line))]
    added: list[Requirement] = []
    modified: list[Requirement] = []
    removed: list[tuple[str, int]] = []
    renamed: list[tuple[str, str, int]] = []
    unpaired: list[tuple[str, str, int]] = []
    skipped: list[tuple[str, str, int]] = []
    present: list[str] = []
    titles = {f"{op.lower()} requirements": op for op in OPS}
    for n, (index, title) in enumerate(heads):
        op = titles.get(title.lower())
        if op is None:
            continue
        if op not in present:
            present.append(op)
        end = heads[n + 1][0] if n + 1 < len(heads) else len(lines)
        body, bmask, first = lines[index + 1:end], mask[index + 1:end], index + 2
        if op in ("ADDED", "MODIFIED"):
            sink: list[tuple[str, int]] = []
            (added if op == "ADDED" else modified).extend(
                requirement_blocks(body, bmask, first, file, op, sink))
            skipped += [(h, f"## {title}", line) for h, line in sink]
        elif op == "REMOVED":
            for i, line in enumerate(body):
                if bmask[i]:
                    continue
                if m := (REQUIREMENT_HEADER.match(line) or _REMOVED_BULLET.match(line)):
                    removed.append((requirement_key(m.group(1)), first + i))
        else:
            pending: tuple[str, int] | None = None
            for i, line in enumerate(body):
                if bmask[i]:
                    continue
                if m := _FROM.match(line):
                    if pending:
                        unpaired.append(("FROM", *pending))
                    pending = (requirement_key(m.group(1)), first + i)
                elif m := _TO.match(line):
                    if pending is None:
                        unpaired.append(("TO", requirement_key(m.group(1)), first + i))
                    else:
                        renamed.append((pending[0], requirement_key(m.group(1)), pending[1]))
                        pending = None
            if pending:
                unpaired.append(("FROM", *pending))
    orphans: list[tuple[str, str | None, int]] = []
    section: str | None = None
    for i, line in enumerate(lines):
        if mask[i] or line[:2] != "##":
            continue
        if m := _SECTION.match(line):
            section = m.group(1).strip()
            continue
        if section is not None and section.lower() in titles:
            continue
        if m := REQUIREMENT_HEADER.match(line):
            orphans.append((requirement_key(m.group(1)), section, i + 1))
    purpose = purpose_section(lines)
    return DeltaSpec(capability, file, tuple(added), tuple(modified), tuple(removed),
                     tuple(renamed), tuple(sorted(unpaired, key=lambda u: u[2])),
                     tuple(sorted(skipped, key=lambda s: s[2])), tuple(orphans),
                     tuple(f"## {op} Requirements" for op in OPS if op in present), purpose)


def _mask_html_comments(text: str) -> str:
    """`text` with every `<!-- ... -->` span (an unclosed one runs to the end) blanked,
    newlines kept so line numbers stay."""
    out: list[str] = []
    index = 0
    while (start := text.find("<!--", index)) != -1:
        out.append(text[index:start])
        ends = [e + n for e, n in ((text.find("-->", start + 4), 3),
                                   (text.find("--!>", start + 4), 4)) if e != -1]
        close = min(ends) if ends else len(text)
        out.append(re.sub(r"[^\n]", " ", text[start:close]))
        index = close
    out.append(text[index:])
    return "".join(out)


def purpose_section(lines: list[str]) -> str | None:
    """The body of `## Purpose` as OpenSpec's archive reads it (headers inside fences or
    HTML comments do not count; a body of only comments or fences is no Purpose)."""
    if not any("purpose" in line.lower() for line in lines if line.startswith("#")):
        return None  # the common case, without masking the whole file
    masked = _mask_html_comments("\n".join(lines)).split("\n")
    mask = fence_mask(masked)
    start = next((i for i, line in enumerate(masked)
                  if not mask[i] and re.match(r"^##\s+Purpose\s*$", line, re.IGNORECASE)), None)
    if start is None:
        return None
    end = next((i for i in range(start + 1, len(masked))
                if not mask[i] and re.match(r"^##\s+", masked[i])), len(masked))
    prose = "\n".join(masked[i] for i in range(start + 1, end) if not mask[i]).strip()
    if not prose:
        return None
    return "\n".join(lines[start + 1:end]).strip() or None


def spec_files(root: Path) -> list[tuple[str, Path]]:
    """Every `spec.md` below `root` in a capability folder (nested ids such as
    `area/auth`), sorted by id, as OpenSpec discovers them: dot entries skipped,
    symlinked folders not followed, a linked `spec.md` kept only when it stays inside
    `root`; `root/spec.md` itself is not one."""
    found: list[tuple[str, Path]] = []
    if not root.is_dir():
        return found
    top = str(root)
    for dirpath, dirnames, filenames in os.walk(top):  # never follows folder links
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        if dirpath == top or "spec.md" not in filenames:
            continue
        file = Path(dirpath) / "spec.md"
        if file.is_symlink() and not file.resolve().is_relative_to(root.resolve()):
            continue
        if not file.is_file():
            continue
        found.append(("/".join(Path(dirpath).relative_to(root).parts), file))
    return sorted(found)


@dataclass(frozen=True)
class SpecSet:
    """Specs by capability: the main specs of a project, or a change's deltas."""

    specs: dict[str, MainSpec] = field(default_factory=dict)

    def requirements_frame(self) -> pd.DataFrame:
        """One row per requirement: capability, requirement, scenarios, normative,
        file, line."""
        return requirements_frame(list(self.specs.values()))


def read_main_specs(folder: Path, display_root: Path) -> dict[str, MainSpec]:
    """Every main spec under `folder`, by capability id."""
    specs = {}
    for cap, file in spec_files(folder):
        shown = file.relative_to(display_root).as_posix()
        specs[cap] = parse_spec(file.read_text("utf-8", errors="replace"), cap, shown)
    return specs


def read_deltas(change_folder: Path, display_root: Path) -> dict[str, DeltaSpec]:
    """Every delta file of a change (`specs/<capability>/spec.md`), by capability id."""
    deltas = {}
    for cap, file in spec_files(change_folder / "specs"):
        shown = file.relative_to(display_root).as_posix()
        deltas[cap] = parse_delta(file.read_text("utf-8", errors="replace"), cap, shown)
    return deltas


_REQ_COLUMNS = {"capability": "string", "requirement": "string", "op": "category",
                "scenarios": "Int64", "normative": "boolean", "file": "string",
                "line": "Int64"}
_SCEN_COLUMNS = {"capability": "string", "requirement": "string", "scenario": "string",
                 "file": "string", "line": "Int64"}


def requirements_frame(specs: list[MainSpec] | list[DeltaSpec],
                       extra: dict[str, str] | None = None) -> pd.DataFrame:
    """One row per requirement of main specs or deltas (REMOVED/RENAMED rows have no
    scenarios): capability, requirement, op, scenarios, normative, file, line."""
    import pandas as pd

    rows = []
    for spec in specs:
        reqs: list[Requirement]
        if isinstance(spec, MainSpec):
            reqs = list(spec.requirements)
        else:
            reqs = list(spec.added) + list(spec.modified)
        for r in reqs:
            rows.append({"capability": spec.capability, "requirement": r.key, "op": r.op,
                         "scenarios": len(r.scenarios), "normative": r.normative,
                         "file": r.file, "line": r.line})
        if isinstance(spec, DeltaSpec):
            rows += [{"capability": spec.capability, "requirement": name, "op": "REMOVED",
                      "scenarios": None, "normative": None, "file": spec.file, "line": line}
                     for name, line in spec.removed]
            rows += [{"capability": spec.capability, "requirement": f"{old} → {new}",
                      "op": "RENAMED", "scenarios": None, "normative": None,
                      "file": spec.file, "line": line} for old, new, line in spec.renamed]
    df = pd.DataFrame(rows, columns=list(_REQ_COLUMNS))
    for col, value in (extra or {}).items():
        df.insert(0, col, value)
    df = df.astype(_REQ_COLUMNS | {c: "string" for c in extra or {}})
    df["op"] = df["op"].cat.set_categories([*OPS])
    return df.sort_values(["capability", "file", "line"], kind="stable").reset_index(drop=True)


def scenarios_frame(specs: list[MainSpec] | list[DeltaSpec]) -> pd.DataFrame:
    """One row per scenario: capability, requirement, scenario, file, line."""
    import pandas as pd

    rows = []
    for spec in specs:
        reqs = (list(spec.requirements) if isinstance(spec, MainSpec)
                else list(spec.added) + list(spec.modified))
        rows += [{"capability": spec.capability, "requirement": r.key, "scenario": s.name,
                  "file": r.file, "line": s.line} for r in reqs for s in r.scenarios]
    df = pd.DataFrame(rows, columns=list(_SCEN_COLUMNS)).astype(_SCEN_COLUMNS)
    return df.sort_values(["capability", "file", "line"], kind="stable").reset_index(drop=True)
