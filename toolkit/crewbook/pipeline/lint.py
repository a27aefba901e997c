"""The B5 lint: a stage that judges an artifact it never receives.

The seed's own bug: the reviewer's prompt told it to judge "the analysis
requirements", but the stage only needed ``[patch, impl_plan]``, so the acceptance
criteria were never in its context. Two tools catch that class of bug:

- `unreceived`: for each stage, the artifacts produced upstream (by a stage that
  can run before it) that it does not `need`: what it can never see;
- `unseen_mentions`: those of them its *role text* names. The role text is the
  stage's prompt file plus the TOML comments written directly above its
  ``[[stages]]`` header and at the end of its lines. An artifact is named by its
  name (``impl_plan``, ``impl plan``) or by a field of its kind made of two words
  or more (``acceptance_criteria`` read as "acceptance criteria"). Each one is a
  `judges_unseen` warning.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import CrewbookError
from ..models import contained, path_defect
from ..sources import MAX_TEXT_BYTES, read_text
from .kinds import ArtifactKind
from .topology import Topology


@dataclass(frozen=True)
class Mention:
    """A stage's role text naming an upstream artifact it does not receive."""

    stage: str
    artifact: str
    phrase: str
    source: str  # "prompt" or "comments"


def unreceived(topology: Topology) -> dict[str, list[str]]:
    """Stage → artifacts produced upstream that it does not `need` (file order)."""
    out: dict[str, list[str]] = {}
    for stage_id, stage in topology.stages.items():
        own = set(stage.needs) | {p.name for p in stage.produces}
        names: list[str] = []
        for upstream in topology.upstream(stage_id):
            for produce in topology.stages[upstream].produces:
                if produce.name not in own and produce.name not in names:
                    names.append(produce.name)
        out[stage_id] = names
    return out


def _phrase(words: str) -> re.Pattern[str]:
    parts = [re.escape(p) for p in re.split(r"[_\-\s.]+", words) if p]
    return re.compile(r"(?<![A-Za-z0-9_])" + r"[_\-\s]+".join(parts) + r"(?![A-Za-z0-9_])",
                      re.IGNORECASE)


def stage_comments(text: str, header_line: int, next_header_line: int | None) -> str:
    """TOML comments directly above a stage's header and at the end of its own lines."""
    lines = text.splitlines()
    above: list[str] = []
    index = header_line - 2
    while index >= 0 and lines[index].lstrip().startswith("#"):
        above.append(lines[index].lstrip()[1:])
        index -= 1
    above.reverse()
    end = (next_header_line - 1) if next_header_line else len(lines)
    inline = [line.split("#", 1)[1] for line in lines[header_line:end]
              if "#" in line and not line.lstrip().startswith("#")
              and line.count('"') % 2 == 0 and '"' not in line.split("#", 1)[1]]
    return "\n".join(above + inline)


def unseen_mentions(
    topology: Topology, kinds: Mapping[str, ArtifactKind], texts: Mapping[str, Mapping[str, str]],
) -> list[Mention]:
    """Upstream artifacts each stage's role text names without receiving them.

    `texts` maps a stage id to its role texts by source (``{"prompt": ..., "comments":
    ...}``).
    """
    kind_of = {p.name: p.kind for s in topology.stages.values() for p in s.produces}
    missing = unreceived(topology)
    found: list[Mention] = []
    for stage_id, names in missing.items():
        stage = topology.stages[stage_id]
        seen_fields: set[str] = set()
        for name in (*stage.needs, *(p.name for p in stage.produces)):
            kind = kinds.get(kind_of.get(name, ""))
            if kind is not None:
                seen_fields.update(f.rsplit(".", 1)[-1] for f in kind.fields())
        for name in names:
            phrases = [name]
            kind = kinds.get(kind_of.get(name, ""))
            if kind is not None:
                phrases += [f.rsplit(".", 1)[-1] for f in kind.fields()
                            if "_" in f.rsplit(".", 1)[-1]
                            and f.rsplit(".", 1)[-1] not in seen_fields]
            hit = _first_hit(phrases, texts.get(stage_id, {}))
            if hit:
                found.append(Mention(stage_id, name, *hit))
    return found


def _first_hit(phrases: list[str], texts: Mapping[str, str]) -> tuple[str, str] | None:
    for source in ("comments", "prompt"):
        text = texts.get(source, "")
        for phrase in phrases:
            match = _phrase(phrase).search(text)
            if match:
                return match.group(0), source
    return None


def read_prompt(folder: Path, prompt: str) -> str:
    """The prompt file's text, or "" when it is missing, unreadable, too large, unsafe
    (a name the OS refuses, a link leading out of the pipeline's folder: `checks`
    reports those) or not UTF-8."""
    if path_defect(prompt):
        return ""
    try:
        target = contained(folder, prompt)
        if target is None:
            return ""
        return read_text(target, max_bytes=MAX_TEXT_BYTES)
    except CrewbookError:
        return ""
