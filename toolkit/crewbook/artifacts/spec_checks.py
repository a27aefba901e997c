"""Check a main spec the way `openspec validate --specs` does, and count its
requirements the way `openspec list --specs` does.

OpenSpec reads a main spec twice: as a tree of markdown sections (every header below
`## Requirements` is a requirement, every header below that with a body a scenario)
and as `### Requirement:` blocks (the reader archive uses). The checks and their
severities are the CLI's: a missing or empty `## Purpose`, a missing `## Requirements`,
no requirement, a requirement without a scenario, a delta header, a requirement header
outside `## Requirements` and a repeated requirement heading are errors; a missing
SHALL/MUST, a brief or placeholder Purpose are warnings (errors under `--strict`).
Each problem names the file, the line and the requirement concerned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import Problem
from .specs import (
    fence_mask,
    requirement_blocks,
    requirement_body,
    requirement_key,
    requirements_section,
    split_lines,
)

MIN_PURPOSE_LENGTH = 50
PLACEHOLDER_PREFIX = "TBD - created by archiving change "
PLACEHOLDER_SUFFIX = ". Update Purpose after archive."

_ANY_HEADER = re.compile(r"^(#{1,6})\s+(.+)$")
_HEADER_START = re.compile(r"^(#{1,6})\s+")
_NORMATIVE = re.compile(r"\b(SHALL|MUST)\b")
_DELTA_HEADER = re.compile(r"^##\s+(ADDED|MODIFIED|REMOVED|RENAMED)\s+Requirements\s*$",
                           re.IGNORECASE)
_STRICT_REQUIREMENT = re.compile(r"^###\s+Requirement:\s*(.+)\s*$", re.IGNORECASE)
_REQUIREMENTS = re.compile(r"^##\s+Requirements\s*$", re.IGNORECASE)
_TOP = re.compile(r"^##\s+")
_WORD_END = r"(?![^\W\d_]|\d|_)"
_SHOUTED = re.compile(rf"^(?:TBD|TODO){_WORD_END}")
_MARK = r"(?=[ \t]*(?:$|\n|[:\-\u2013\u2014.,;()\[\]{}]))"
_PUNCTUATED = re.compile(rf"^(?:TBD|TODO){_WORD_END}" + _MARK, re.IGNORECASE)
_PURPOSE_HEADER = re.compile(r"^ {0,3}##(?!#)[ \t]+Purpose[ \t]*$", re.IGNORECASE)
_TOP_OR_TITLE = re.compile(r"^ {0,3}#{1,2}(?!#)[ \t]+")


@dataclass
class Section:
    """One markdown header with the text under it (until a header of its level or
    above) and the headers nested in it, as OpenSpec's markdown parser builds them."""

    level: int
    title: str
    content: str
    line: int
    children: list[Section] = field(default_factory=list)


def section_tree(lines: list[str], mask: list[bool]) -> list[Section]:
    """The header tree of a document (fenced lines never count), in one pass: a
    section's text runs to the next header of its level or above."""
    roots: list[Section] = []
    stack: list[Section] = []  # nesting, by the headers with a title
    open_: list[tuple[int, int, Section]] = []  # (level, first body line, section)
    for i, line in enumerate(lines):
        if line[:1] != "#" or mask[i] or not (start := _HEADER_START.match(line)):
            continue
        level = len(start.group(1))
        while open_ and open_[-1][0] >= level:
            _lv, first, done = open_.pop()
            done.content = "\n".join(lines[first:i]).strip()
        if not (m := _ANY_HEADER.match(line)):
            continue
        section = Section(level, m.group(2).strip(), "", i + 1)
        while stack and stack[-1].level >= level:
            stack.pop()
        (stack[-1].children if stack else roots).append(section)
        stack.append(section)
        open_.append((level, i + 1, section))
    for _lv, first, done in open_:
        done.content = "\n".join(lines[first:]).strip()
    return roots


def find_section(sections: list[Section], title: str) -> Section | None:
    """The first section (depth first) titled `title`, case-insensitively."""
    for section in sections:
        if section.title.lower() == title.lower():
            return section
        if (child := find_section(section.children, title)) is not None:
            return child
    return None


@dataclass(frozen=True)
class ParsedSpec:
    """A main spec as OpenSpec's markdown parser reads it; `error` is set (and the
    rest empty) when the parser refuses it."""

    overview: str = ""
    requirements: tuple[tuple[str, str, int, int], ...] = ()  # (title, text, scenarios, line)
    error: str | None = None
    error_code: str | None = None


def parse_markdown_spec(text: str) -> ParsedSpec:
    """Purpose and requirements the way `openspec list --specs` and `validate` see them:
    every header under `## Requirements` is a requirement, every header under it with a
    body is a scenario."""
    lines = split_lines(text)
    tree = section_tree(lines, fence_mask(lines))
    purpose = find_section(tree, "Purpose")
    if purpose is None or not purpose.content:
        return ParsedSpec(error="Spec must have a Purpose section", error_code="spec_no_purpose")
    section = find_section(tree, "Requirements")
    if section is None:
        return ParsedSpec(error="Spec must have a Requirements section",
                          error_code="spec_no_requirements_section")
    reqs = []
    for child in section.children:
        body = requirement_body(child.content.split("\n")) or child.title.strip()
        scenarios = sum(1 for s in child.children if s.content.strip())
        reqs.append((child.title, body, scenarios, child.line))
    return ParsedSpec(purpose.content.strip(), tuple(reqs))


def requirement_count(text: str) -> int:
    """`requirementCount` of `openspec list --specs --json` (0 for a spec it cannot parse)."""
    return len(parse_markdown_spec(text).requirements)


def structure_issues(text: str) -> list[tuple[int, str, str]]:
    """(line, code, message) for what makes a main spec unfit to update: delta headers,
    requirement headers outside `## Requirements`, a requirement heading repeated."""
    lines = split_lines(text)
    mask = fence_mask(lines)
    lines = ["" if hidden else line for hidden, line in zip(mask, lines, strict=True)]
    start = next((i for i, line in enumerate(lines) if _REQUIREMENTS.match(line)), -1)
    end = len(lines)
    if start != -1:
        end = next((i for i in range(start + 1, len(lines)) if _TOP.match(lines[i])), end)
    seen: dict[str, int] = {}
    found: list[tuple[int, str, str]] = []
    for i, line in enumerate(lines):
        trimmed = line.strip()
        if not trimmed:
            continue
        if _DELTA_HEADER.match(line):
            found.append((i + 1, "spec_delta_header", f"main spec contains delta header "
                          f"{trimmed!r}; delta headers belong in a change's "
                          "specs/<capability>/spec.md and cut the `## Requirements` section "
                          "short here: remove it or move its requirements under "
                          "`## Requirements`"))
            continue
        m = _STRICT_REQUIREMENT.match(line)
        if m is None:
            continue
        if not (start != -1 and start < i < end):
            found.append((i + 1, "requirement_outside_requirements", f"{trimmed!r} is outside "
                          "the `## Requirements` section, so validate, list and archive never "
                          "see it; move it under `## Requirements`"))
            continue
        name = requirement_key(m.group(1))
        if name in seen:
            found.append((i + 1, "duplicate_requirement", f"{trimmed!r} repeats the requirement "
                          f"of line {seen[name]}; requirement names must be unique (an update "
                          "would keep only one of the blocks): rename or merge them"))
        else:
            seen[name] = i + 1
    return found


def _unfenced(text: str) -> str:
    lines = split_lines(text)
    mask = fence_mask(lines)
    return "\n".join(line for hidden, line in zip(mask, lines, strict=True) if not hidden)


def _placeholder_at(text: str) -> int | None:
    at = text.find(PLACEHOLDER_SUFFIX)
    while at != -1:
        prefix = text.rfind(PLACEHOLDER_PREFIX, 0, at)
        if prefix != -1:
            return prefix
        at = text.find(PLACEHOLDER_SUFFIX, at + 1)
    return None


def _placeholder_line(text: str, leading: bool) -> int | None:
    lines = split_lines(text)
    mask = fence_mask(lines)
    head = next((i for i, line in enumerate(lines)
                 if not mask[i] and _PURPOSE_HEADER.match(line)), None)
    if head is None:
        return None
    body: list[tuple[int, str]] = []
    for i in range(head + 1, len(lines)):
        if mask[i]:
            continue
        if _TOP_OR_TITLE.match(lines[i]):
            break
        if leading and lines[i].strip():
            return i + 1
        body.append((i + 1, lines[i]))
    if leading:
        return None
    joined = "\n".join(t for _, t in body)
    at = _placeholder_at(joined)
    if at is None:
        return None
    return body[joined[:at].count("\n")][0]


def purpose_placeholder(overview: str, text: str) -> tuple[bool, int | None]:
    """Whether the Purpose is still a placeholder (archive's sentence, or a leading
    TBD/TODO), and the line holding it."""
    prose = _unfenced(overview).strip()
    leading = bool(_SHOUTED.match(prose) or _PUNCTUATED.match(prose))
    if not leading and _placeholder_at(prose) is None:
        return False, None
    return True, _placeholder_line(text, leading)


def check_main_spec(text: str, file: str) -> list[Problem]:
    """Every problem `openspec validate` reports for a main spec (its INFO notes aside),
    with the CLI's severities; each names the file, line and requirement."""
    def p(code: str, message: str, line: int | None = None, error: bool = True) -> Problem:
        return Problem(code, message, path=file, line=line,
                       severity="error" if error else "warning")

    parsed = parse_markdown_spec(text)
    if parsed.error is not None:
        what = "`## Purpose` with a sentence on what the capability is for" \
            if parsed.error_code == "spec_no_purpose" else "`## Requirements` holding " \
            "`### Requirement: <name>` blocks"
        return [p(parsed.error_code or "spec_invalid", f"{parsed.error}: add a {what}")]
    problems: list[Problem] = []
    if not parsed.requirements:
        problems.append(p("spec_no_requirements", "spec must have at least one requirement; "
                          "add a `### Requirement: <name>` block under `## Requirements`"))
    for heading, body, scenarios, line in parsed.requirements:
        title = re.sub(r"^Requirement:\s*", "", heading, flags=re.IGNORECASE)
        if not body:
            problems.append(p("requirement_no_text", f"requirement {title!r} has no text",
                              line))
        if scenarios == 0:
            problems.append(p("requirement_no_scenario", f"requirement {title!r} must have "
                              "at least one scenario: add `#### Scenario: <name>` with WHEN/"
                              "THEN lines under it", line))
    for line, code, message in structure_issues(text):
        problems.append(p(code, message, line))
    placeholder, at = purpose_placeholder(parsed.overview, text)
    if placeholder:
        problems.append(p("purpose_placeholder", "the Purpose is still a placeholder (the "
                          "sentence archive writes, or TBD/TODO); write what this capability "
                          "is for", at, error=False))
    elif len(parsed.overview) < MIN_PURPOSE_LENGTH:
        problems.append(p("purpose_too_brief", f"the Purpose is under {MIN_PURPOSE_LENGTH} "
                          "characters; say what the capability is for", error=False))
    lines = split_lines(text)
    mask = fence_mask(lines)
    section = requirements_section(lines, mask)
    if section is not None:
        start, end = section
        for block in requirement_blocks(lines[start + 1:end], mask[start + 1:end], start + 2,
                                        file, None):
            body = requirement_body(block.raw.split("\n")[1:])
            in_header = bool(_NORMATIVE.search(block.name))
            hint = (" in its body, not only in the header: move the SHALL/MUST sentence to the "
                    "line after the header") if in_header else ""
            if not body:
                problems.append(p("requirement_no_text", f"requirement {block.key!r} must "
                                  f"contain SHALL or MUST{hint or ' (it has no text)'}",
                                  block.line))
            elif not _NORMATIVE.search(body):
                problems.append(p("requirement_not_normative", f"requirement {block.key!r} "
                                  f"should contain SHALL or MUST{hint}", block.line,
                                  error=False))
    return problems

