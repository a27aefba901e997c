"""The checklist of an `apply.tracks` file: its `- [ ]` / `- [x]` lines (A6).

Checkboxes inside code fences are ignored; a task's id is its leading number
(`1.2`) or else its position (`3`), so routing (D8) can name tasks either way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_CHECKBOX = re.compile(r"^\s*[-*+]\s+\[([ xX])\]\s+(.*?)\s*$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_TASK_ID = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
#: OpenSpec's task line (`utils/task-progress`): any list marker, a one-token box
#: (`[ ]`, `[x]`, `[]`, `[~]`; only x means done), not a link, counted even in fences.
_OPENSPEC_BOX = re.compile(
    r"^\s*(?:[-*+]|\d{1,9}[.)])\s*\[(?:\s*([^\]\s]?)\s*\](?![(\[])|\s+\])\s*(.*)"
)


@dataclass(frozen=True)
class TaskItem:
    """One checkbox of the `apply.tracks` file."""

    index: int
    id: str
    text: str
    done: bool
    section: str | None
    line: int


def parse_tasks(text: str, flavour: Literal["codev", "openspec"] = "codev") -> list[TaskItem]:
    """The checkboxes (`- [ ]`, `- [x]`) of a Markdown file, outside code fences; with
    `flavour="openspec"`, every line OpenSpec counts as a task (see `_OPENSPEC_BOX`)."""
    items: list[TaskItem] = []
    section: str | None = None
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if flavour == "openspec":
            if box := _OPENSPEC_BOX.match(line):
                text_, index = box.group(2).strip(), len(items) + 1
                explicit = _TASK_ID.match(text_)
                items.append(TaskItem(index, explicit.group(1) if explicit else str(index),
                                      text_, (box.group(1) or "").lower() == "x", section,
                                      number))
            elif heading := _HEADING.match(line):
                section = heading.group(1)
            continue
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        if heading := _HEADING.match(line):
            section = heading.group(1)
            continue
        if box := _CHECKBOX.match(line):
            text_ = box.group(2)
            explicit = _TASK_ID.match(text_)
            index = len(items) + 1
            items.append(
                TaskItem(
                    index=index,
                    id=explicit.group(1) if explicit else str(index),
                    text=text_,
                    done=box.group(1) in "xX",
                    section=section,
                    line=number,
                )
            )
    return items


__all__ = ["TaskItem", "parse_tasks"]
