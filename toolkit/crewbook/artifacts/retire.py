"""Retiring a capability at archive, as the OpenSpec CLI does it.

When a change's REMOVED requirements take a main spec's last requirement, the rebuilt
spec has none and cannot be written. OpenSpec then deletes the spec ("retires" the
capability), but only when the change asks for it (`retire_capabilities: true` in its
`.openspec.yaml`, honoured only in metadata the CLI accepts), when "no requirement" is
the only thing wrong with the rebuilt spec, and when the file holds nothing the merge
cannot name (a note, a table, a section of its own): deleting it would take that too.
`retire_marker` reads the marker; `unaccounted_content` is the audit of what deleting
the file would lose, ported from OpenSpec's `contentTheMergeCannotName`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from .specs import Requirement, fence_mask

if TYPE_CHECKING:
    from .change import Change

MARKER = "retire_capabilities"
MarkerState = Literal["declared", "none", "unhonored"]

_INTERRUPTS = re.compile(
    r"^ {0,3}(?:>|(?:[-*_][ \t]*){3,}$|(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)|[<|])")
_LIST_ITEM = re.compile(r"^(\s*(?:[-*+]|\d{1,9}[.)])\s+)")
_ATX = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_HTML_HEADING = re.compile(r"^\s*<h[1-6]\b", re.IGNORECASE)
_SECTION = re.compile(r"^ {0,3}##\s+(.+?)\s*$")
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)\s*$")
_H1 = re.compile(r"^ {0,3}#\s+.+$")
_FOREIGN = re.compile(r"^ {0,3}#{1,3}(?:[ \t]|$)")
_SCENARIO = re.compile(r"^ {0,3}####\s+Scenario:", re.IGNORECASE)


def retire_marker(change: Change) -> tuple[MarkerState, str]:
    """Whether `change` asks to retire capabilities, and why a marker is not honoured:
    only `retire_capabilities: true` in metadata that names a schema this project has
    counts (the CLI's rule: validate and archive never honour metadata status rejects)."""
    import yaml

    from ..errors import CrewbookError
    from .openspec import METADATA

    file = change.folder / METADATA
    try:
        raw = file.read_text("utf-8")
    except FileNotFoundError:
        return "none", ""
    except OSError as exc:
        return "unhonored", f"the metadata file cannot be read ({exc.strerror})"
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError:
        mentioned = re.search(rf"^\s*(['\"]?){MARKER}\1\s*:", raw, re.MULTILINE)
        return ("unhonored", "the file is not valid YAML") if mentioned else ("none", "")
    if not isinstance(data, dict) or MARKER not in data or data[MARKER] is False:
        return "none", ""
    if data[MARKER] is not True:
        return "unhonored", f"{MARKER}: must be true or false, not {data[MARKER]!r}"
    schema = data.get("schema")
    if not isinstance(schema, str):
        return "unhonored", "schema: the metadata names no schema (add `schema: <name>`)"
    try:
        change.project.cached_schema(schema)
    except CrewbookError:
        return "unhonored", f"schema: unknown schema {schema!r}"
    return "declared", ""


def _column(prefix: str) -> int:
    column = 0
    for char in prefix:
        column += 4 - column % 4 if char == "\t" else 1
    return column


def _drop_indent(line: str, columns: int) -> str:
    column = index = 0
    while index < len(line) and column < columns:
        char = line[index]
        if char == " ":
            column += 1
        elif char == "\t":
            column += 4 - column % 4
        else:
            break
        index += 1
    return line[index:]


def _is_heading(line: str) -> bool:
    return bool(_ATX.match(line) or _HTML_HEADING.match(line))


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _above(before: str, leftovers: list[str]) -> None:
    """Above `## Requirements`: the title and the Purpose section are expected."""
    lines = _lines(before.removeprefix("\ufeff"))
    mask = fence_mask(lines)
    in_purpose = title_seen = False
    previous = ""
    for index, line in enumerate(lines):
        if not line.strip():
            previous = ""
            continue
        if not mask[index]:
            if section := _SECTION.match(line):
                in_purpose = section.group(1).strip().lower() == "purpose"
                if not in_purpose:
                    leftovers.append(line.strip())
                previous = line
                continue
            setext = in_purpose and previous.strip() and _SETEXT.match(line)
            if setext or re.match(r"^ {0,3}<h[1-6]\b", line, re.IGNORECASE):
                leftovers.append((previous if setext else line).strip())
                in_purpose, previous = False, line
                continue
            if _H1.match(line):
                if not title_seen and not in_purpose:
                    title_seen = True
                else:
                    leftovers.append(line.strip())
                    in_purpose = False
                previous = line
                continue
        previous = line
        if not in_purpose:
            leftovers.append(line.strip())


def _inside_block(raw: str, leftovers: list[str]) -> None:
    """A requirement block: its header, statement and scenario bullets are its own;
    prose, tables or bullets written below its scenarios are not."""
    lines = _lines(raw)
    mask = fence_mask(lines)
    for index in range(1, len(lines)):
        if not mask[index] and _FOREIGN.match(lines[index]):
            leftovers.append(lines[index].strip())
            break
    seen_scenario = in_bullets = bullets_seen = paragraph = False
    item: int | None = None
    for index, line in enumerate(lines):
        if not line.strip():
            if bullets_seen:
                in_bullets = False
            item, paragraph = None, False
            continue
        if index == 0:
            continue
        indent = _column(line[:len(line) - len(line.lstrip(" \t"))])
        inside = item is not None and indent >= item
        within = _drop_indent(line, item) if inside and item is not None else line
        lazy = paragraph and in_bullets and not _INTERRUPTS.match(within)
        continues = (inside or lazy) and not _is_heading(within)
        if mask[index]:
            if not inside:
                item = None
            paragraph = False
            continue
        if index > 1 and _SETEXT.match(within) and lines[index - 1].strip():
            leftovers.append(lines[index - 1].strip())
            item, paragraph = None, False
            continue
        if continues:
            paragraph = not _INTERRUPTS.match(within)
            continue
        bullet = _LIST_ITEM.match(line)
        item = _column(bullet.group(1)) if bullet else None
        paragraph = bullet is not None
        if _SCENARIO.match(line):
            seen_scenario = in_bullets = True
            bullets_seen = False
            continue
        if bullet:
            if in_bullets:
                bullets_seen = True
                continue
            if not seen_scenario:
                continue
            leftovers.append(line.strip())
            continue
        if not seen_scenario and not re.match(r"^\s*[|<]", line):
            continue
        leftovers.append(line.strip())


def unaccounted_content(before: str, preamble: str, after: str,
                        blocks: list[Requirement]) -> list[str]:
    """The non-blank lines of a main spec that retiring it would delete without the
    merge being able to name them (each once, in order): anything but the title, the
    Purpose, the `## Requirements` header and each requirement's own parts."""
    leftovers: list[str] = []
    _above(before, leftovers)
    for part in (preamble, after):
        leftovers += [line.strip() for line in part.split("\n") if line.strip()]
    for block in blocks:
        _inside_block(block.raw, leftovers)
    return list(dict.fromkeys(leftovers))


def describe_lines(lines: list[str]) -> str:
    """The first three lines quoted (control characters as `?`, each cut at 200
    characters), and how many more."""
    shown = []
    for line in lines[:3]:
        safe = re.sub(r"[\x00-\x1f\x7f]", "?", line)
        shown.append(f'"{safe[:200]}…"' if len(safe) > 200 else f'"{safe}"')
    rest = f", and {len(lines) - 3} more line(s)" if len(lines) > 3 else ""
    return ", ".join(shown) + rest


__all__ = ["MARKER", "describe_lines", "retire_marker", "unaccounted_content"]
