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
                          n_archived: int | None = None) -> Path:
    """Write a synthetic OpenSpec project under `root` and return `root`."""
    rnd = random.Random(seed * 7919 + n_changes)
    base = Path(root) / "openspec"
    caps: dict[str, dict[str, list[str]]] = {}
    for c in range(max(3, n_changes // 10)):
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
    return Path(root)


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
