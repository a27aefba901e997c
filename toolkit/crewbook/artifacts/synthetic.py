"""Synthetic OpenSpec projects for tests, benchmarks and lessons (fixed seed).

`make_openspec_project(root, n_changes)` writes `root/openspec/` with main specs,
`n_changes` active changes and a few archived ones. The changes cover what real
projects hold: metadata with YAML dates and keys crewbook does not use, missing
artifacts, the four delta operations, deltas that fail validation (a requirement
without a scenario, a MODIFIED block dropping a scenario, a file without delta
sections), and task lists using every checkbox form OpenSpec counts. The same
arguments always give the same files.
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

SEED = 20261203
_WORDS = ("login", "export", "search", "billing", "audit", "cache", "report", "upload",
          "profile", "invite", "notify", "archive", "filter", "sync", "theme", "quota")


def _requirement(name: str, rnd: random.Random, scenarios: list[str] | None = None,
                 normative: bool = True) -> str:
    verb = "SHALL" if normative else "should"
    lines = [f"### Requirement: {name}", f"The system {verb} handle {name.lower()}.", ""]
    for scen in scenarios if scenarios is not None else [
            f"{name} case {k}" for k in range(1, rnd.randint(1, 3) + 1)]:
        lines += [f"#### Scenario: {scen}", f"- **WHEN** {scen.lower()}",
                  "- **THEN** it works", ""]
    return "\n".join(lines)


def _main_spec(cap: str, reqs: dict[str, list[str]], rnd: random.Random) -> str:
    body = "\n".join(_requirement(name, rnd, scen) for name, scen in reqs.items())
    return (f"# {cap} Specification\n\n## Purpose\nHow {cap} behaves for its users.\n\n"
            f"## Requirements\n{body}")


def _tasks(rnd: random.Random) -> str:
    forms = ["- [x] {}", "- [ ] {}", "* [X] {}", "1. [ ] {}", "- [~] {}", "+ [x] {}"]
    lines = ["# Tasks", "", "## 1. Build", ""]
    for k in range(rnd.randint(0, 8)):
        lines.append(rnd.choice(forms).format(f"1.{k + 1} step {k + 1}"))
    if rnd.random() < 0.2:
        lines += ["", "```", "- [ ] an example inside a fence", "```"]
    return "\n".join(lines) + "\n"


def make_openspec_project(root: Path | str, n_changes: int = 20, *, seed: int = SEED,
                          n_archived: int | None = None, mistakes: bool = False,
                          n_specs: int | None = None) -> Path:
    """Write a synthetic OpenSpec project under `root` and return `root`; with
    `mistakes`, also the slips real projects hold (see `add_mistakes`); `n_specs` main
    specs (default: one per ten changes, at least three)."""
    rnd = random.Random(seed * 7919 + n_changes)
    base = Path(root) / "openspec"
    caps: dict[str, dict[str, list[str]]] = {}
    for c in range(max(3, n_changes // 10) if n_specs is None else n_specs):
        cap = f"{_WORDS[c % len(_WORDS)]}-{c:03d}"
        caps[cap] = {f"{cap} rule {r}": [f"{cap} rule {r} case {k}"
                                         for k in range(1, rnd.randint(1, 3) + 1)]
                     for r in range(1, rnd.randint(2, 5) + 1)}
    for cap, reqs in caps.items():
        _write(base / "specs" / cap / "spec.md", _main_spec(cap, reqs, rnd))
    _write(base / "config.yaml", "schema: spec-driven\ncontext: |\n  A synthetic project.\n"
           "rules:\n  tasks:\n    - Keep tasks small\n")
    start = dt.date(2026, 1, 5)
    names = sorted(f"{_WORDS[i % len(_WORDS)]}-change-{i:04d}" for i in range(n_changes))
    for i, name in enumerate(names):
        _change(base / "changes" / name, name, caps, rnd, start + dt.timedelta(days=i % 300))
    for i in range(n_changes // 10 if n_archived is None else n_archived):
        day = start + dt.timedelta(days=7 * i)
        name = f"old-{_WORDS[i % len(_WORDS)]}-{i:03d}"
        folder = base / "changes" / "archive" / f"{day.isoformat()}-{name}"
        _change(folder, name, caps, rnd, day - dt.timedelta(days=rnd.randint(1, 20)))
    if mistakes:
        add_mistakes(base, caps, random.Random(seed * 104729 + n_changes))
    return Path(root)


_PURPOSE = "Everything {} does for the people who use it, in one place."
_GLOB_SCHEMA = """name: globby
version: 1
artifacts:
  - id: proposal
    generates: proposal.md
    description: Why
    template: proposal.md
  - id: work
    generates: "work/**/*.md"
    description: The work, in several files
    template: work.md
    requires: [proposal]
apply:
  requires: [work]
  tracks: "work/**/*.md"
"""


def _spec_slip(cap: str, reqs: dict[str, list[str]], rnd: random.Random) -> tuple[str, bool]:
    """A main spec with one slip drawn at random, and whether it must be written CRLF."""
    text = _main_spec(cap, reqs, rnd).replace(f"How {cap} behaves for its users.",
                                              _PURPOSE.format(cap))
    first = next(iter(reqs))
    roll = rnd.randrange(12)
    if roll == 0:  # no Purpose
        text = text.replace(f"## Purpose\n{_PURPOSE.format(cap)}\n\n", "")
    elif roll == 1:  # a requirement without scenario
        text += "\n### Requirement: Bare rule\nThe system SHALL stay bare.\n"
    elif roll == 2:  # a level-3 note under Requirements
        text = text.replace("## Requirements\n", "## Requirements\n### Notes\nSee below.\n\n")
    elif roll == 3:  # a delta header left in a main spec
        text += "\n## ADDED Requirements\n"
    elif roll == 4:  # the same heading twice
        text += "\n" + _requirement(first, rnd, ["again"])
    elif roll == 5:  # no SHALL/MUST
        text = text.replace("SHALL", "will", 1)
    elif roll == 6:  # a short Purpose
        text = text.replace(_PURPOSE.format(cap), "Short.")
    elif roll == 7:  # double blank lines
        text = text.replace("## Purpose\n", "## Purpose\n\n\n")
    elif roll == 8:  # a requirement header without the prefix
        text += "\n### Plain rule\nThe system SHALL be plain.\n\n#### Scenario: p\n- WHEN p\n"
    elif roll == 9:  # only a delta Purpose-less skeleton: no Requirements section
        text = text.split("## Requirements")[0]
    return text, roll == 10


def add_mistakes(base: Path, caps: dict[str, dict[str, list[str]]],
                 rnd: random.Random) -> None:
    """Slips seen in real projects, at realistic rates: main specs without Purpose or
    scenarios, notes and delta headers among requirements, repeated headings, CRLF,
    double blank lines; changes with a dated name, no `schema` in their metadata, an
    unknown schema, a schema tracking a glob, a skip_specs marker (with or without schema
    or files), a hidden folder among the changes, no deltas, an already-synced ADDED, a
    new capability whose delta Purpose is empty, commented out or fenced; a change retiring
    a capability (`_retire_slip`); `specs` a file, skip_specs with an unknown schema, a main
    spec.md that is a folder (`_skip_slip`)."""
    for cap, reqs in caps.items():
        if rnd.random() < 0.5:
            text, crlf = _spec_slip(cap, reqs, rnd)
            data = text.replace("\n", "\r\n") if crlf else text
            path = base / "specs" / cap / "spec.md"
            path.write_bytes(data.encode("utf-8"))
    changes = base / "changes"
    if rnd.random() < 0.1:  # a hidden folder among the changes (a draft kept aside)
        _write(changes / ".draft" / "tasks.md", "- [ ] later\n")
    _write(base / "schemas" / "globby" / "schema.yaml", _GLOB_SCHEMA)
    for template in ("proposal.md", "work.md"):
        _write(base / "schemas" / "globby" / "templates" / template, "# Title\n")
    for k in range(rnd.randint(3, 6)):
        roll = rnd.randrange(10)
        cap = rnd.choice(sorted(caps))
        name = f"slip-{k:02d}-{roll}"
        if roll == 0:
            name = f"2025-03-{k + 1:02d}-{name}"
        folder = changes / name
        meta = "schema: spec-driven\n"
        if roll == 1:
            meta = "created: 2026-01-05\n"
        elif roll == 2:
            meta = "schema: no-such-schema\n"
        elif roll == 7:  # apply.tracks is a glob
            meta = "schema: globby\n"
            _write(folder / "work" / "a.md", "- [x] a\n- [ ] b\n")
            _write(folder / "work" / "more" / "b.md", "- [x] c\n")
        elif roll in (8, 9):  # skip_specs, with or without schema, with or without files
            meta = ("schema: spec-driven\n" if rnd.random() < 0.6 else "") + "skip_specs: true\n"
            if roll == 9:
                _write(folder / "specs" / rnd.choice(["notes.txt", ".keep"]), "x\n")
            _write(folder / ".openspec.yaml", meta)
            continue
        _write(folder / ".openspec.yaml", meta)
        _write(folder / "proposal.md", f"## Why\nBecause {name}.\n")
        _write(folder / "tasks.md", "- [x] one\n- [ ] two\n")
        new = f"{name}-cap"
        if roll == 3:
            continue  # no deltas at all
        if roll == 4:  # ADDED already in the main spec, word for word
            first = next(iter(caps[cap]))
            body = _requirement(first, rnd, caps[cap][first])
            _write(folder / "specs" / cap / "spec.md", f"## ADDED Requirements\n\n{body}")
            continue
        if roll in (5, 6):
            purpose = rnd.choice(["", "<!-- what is it for? -->", "```\nsample\n```",
                                  _PURPOSE.format(new)])
            body = _requirement(f"{new} rule", rnd)
            _write(folder / "specs" / new / "spec.md",
                   f"## Purpose\n{purpose}\n\n## ADDED Requirements\n\n{body}")
            continue
        body = _requirement(f"{name} rule", rnd)
        _write(folder / "specs" / cap / "spec.md", f"## ADDED Requirements\n\n{body}")
    if rnd.random() < 0.4:  # drawn last, so the slips above stay those of earlier seeds
        _retire_slip(changes, caps, rnd)
    if rnd.random() < 0.3:  # drawn after the retirement slip, for the same reason
        _skip_slip(base, caps, rnd)


def _skip_slip(base: Path, caps: dict[str, dict[str, list[str]]], rnd: random.Random) -> None:
    """A change whose `specs` is a file (with the skip_specs marker or without), one with
    the marker and an unknown schema, or one adding to a capability whose main spec.md
    is a folder."""
    kind = rnd.choice(["specs-file", "specs-file-no-marker", "skip-unknown-schema",
                       "main-spec-folder"])
    folder = base / "changes" / f"odd-{kind}"
    meta = {"specs-file": "schema: spec-driven\nskip_specs: true\n",
            "specs-file-no-marker": "schema: spec-driven\n",
            "skip-unknown-schema": "schema: no-such-schema\nskip_specs: true\n",
            "main-spec-folder": "schema: spec-driven\n"}[kind]
    _write(folder / ".openspec.yaml", meta)
    _write(folder / "tasks.md", "- [x] done\n")
    if kind.startswith("specs-file"):
        _write(folder / "specs", "not a folder\n")
    elif kind == "main-spec-folder":
        cap = f"folder-{rnd.randrange(100)}"
        (base / "specs" / cap / "spec.md").mkdir(parents=True)
        _write(folder / "specs" / cap / "spec.md",
               "## ADDED Requirements\n\n" + _requirement(f"{cap} rule", rnd))


def _retire_slip(changes: Path, caps: dict[str, dict[str, list[str]]],
                 rnd: random.Random) -> None:
    """A change removing every requirement of a capability: with the
    `retire_capabilities` marker (archive deletes the spec), without it, with it but no
    `schema` (not honoured), or removing all but one (an ordinary write)."""
    cap = rnd.choice(sorted(caps))
    kind = rnd.choice(["marker", "marker", "none", "no-schema", "all-but-one"])
    meta = {"marker": "schema: spec-driven\nretire_capabilities: true\n",
            "none": "schema: spec-driven\n", "no-schema": "retire_capabilities: true\n",
            "all-but-one": "schema: spec-driven\nretire_capabilities: true\n"}[kind]
    names = sorted(caps[cap])[1:] if kind == "all-but-one" else sorted(caps[cap])
    folder = changes / f"retire-{cap}-{kind}"
    _write(folder / ".openspec.yaml", meta)
    _write(folder / "tasks.md", "- [x] retire it\n")
    _write(folder / "specs" / cap / "spec.md", "## REMOVED Requirements\n\n" + "".join(
        f"### Requirement: {n}\n**Reason**: retired\n\n" for n in names))


def _change(folder: Path, name: str, caps: dict[str, dict[str, list[str]]],
            rnd: random.Random, created: dt.date) -> None:
    folder.mkdir(parents=True, exist_ok=True)  # may stay empty: OpenSpec lists it too
    meta = f"schema: spec-driven\ncreated: {created.isoformat()}\n"
    if rnd.random() < 0.3:
        meta += f"goal: improve {name}\nrisk_level: low\naffected_areas: [api, ui]\n"
    skip = rnd.random() < 0.05
    if skip:
        meta += "skip_specs: true\n"
    if rnd.random() < 0.9:
        _write(folder / ".openspec.yaml", meta)
    if rnd.random() < 0.9:
        _write(folder / "proposal.md", f"## Why\nBecause {name} matters.\n\n## What Changes\n"
               "- something\n")
    if rnd.random() < 0.4:
        _write(folder / "design.md", f"# Design of {name}\n")
    if not skip and rnd.random() < 0.85:
        for cap in rnd.sample(sorted(caps), k=rnd.randint(1, 2)):
            _write(folder / "specs" / cap / "spec.md", _delta(name, cap, caps[cap], rnd))
    if rnd.random() < 0.7:
        _write(folder / "tasks.md", _tasks(rnd))


def _delta(change: str, cap: str, reqs: dict[str, list[str]], rnd: random.Random) -> str:
    roll = rnd.random()
    existing = sorted(reqs)
    parts: list[str] = []
    if roll < 0.05:
        return f"# Notes for {cap}\n\nNothing here uses a delta header.\n"
    added = [f"{change} adds {k}" for k in range(rnd.randint(1, 2))]
    parts.append("## ADDED Requirements\n\n" + "\n".join(
        _requirement(n, rnd, [] if roll < 0.12 else None, normative=rnd.random() > 0.1)
        for n in added))
    if rnd.random() < 0.5:
        target = rnd.choice(existing)
        keep = list(reqs[target])
        if rnd.random() < 0.15 and keep:
            keep = keep[:-1]  # drops a scenario the main spec has: invalid
        parts.append("## MODIFIED Requirements\n\n" + _requirement(target, rnd,
                                                                   [*keep, "new case"]))
    others = [r for r in existing if not any(r in p for p in parts)]
    if rnd.random() < 0.2 and others:
        parts.append(f"## REMOVED Requirements\n\n### Requirement: {others[0]}\n"
                     "**Reason**: obsolete\n")
    if rnd.random() < 0.15 and len(others) > 1:
        parts.append(f"## RENAMED Requirements\n\n- FROM: `### Requirement: {others[-1]}`\n"
                     f"- TO: `### Requirement: {others[-1]} renamed by {change}`\n")
    return "\n".join(parts)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
