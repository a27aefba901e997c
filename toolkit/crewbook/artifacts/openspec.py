"""OpenSpec's own files, read in place (SPEC A, seed 000): `openspec/config.yaml`,
a change's `.openspec.yaml`, the scan of a changes folder and the archive.

OpenSpec owns these formats, so crewbook accepts what OpenSpec accepts: a key crewbook
does not use is a warning naming it, never a refusal. A listing never lets one broken
change hide the others: `scan_changes` returns every change that opens and a problem
for every folder that does not.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from ..core.family import resolve
from ..errors import ConfigError, CrewbookError, Problem
from ..models import KEBAB_CASE
from ..sources import SourceDoc, read_yaml
from .model import ChangeFile, ProjectConfig

if TYPE_CHECKING:
    from .change import Change
    from .project import Project

#: The change opener, above this module, by dotted path (resolved when called): the
#: scan is how a change is found, and a change reads its metadata from here.
_OPEN_CHANGE = "crewbook.artifacts.change:open_change"

METADATA = ".openspec.yaml"
ARCHIVE = "archive"
#: `changes/archive/YYYY-MM-DD-<name>/`
ARCHIVED_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})-(.+)$")
#: Config keys OpenSpec accepts that crewbook reads.
CONFIG_USED = ("schema", "context", "rules")
#: Metadata keys of `.openspec.yaml` that crewbook reads.
METADATA_USED = ("schema", "created", "skip_specs", "description", "retire_capabilities")


def _unused(doc: SourceDoc, data: dict[str, Any], used: tuple[str, ...], what: str
            ) -> list[Problem]:
    """A warning naming each key crewbook does not use (never a refusal)."""
    return [doc.problem("unused_key", _unused_message(key, what), (key,), severity="warning")
            for key in sorted(k for k in data if k not in used)]


def _unused_message(key: str, what: str) -> str:
    hint = (" (OpenSpec reads `schema:`, not `defaultSchema:`; rename it to choose the "
            "default schema)") if key == "defaultSchema" else ""
    return f"{what} key {key!r} is accepted but crewbook does not use it{hint}"


def _mapping(file: Path, display: str) -> tuple[SourceDoc | None, list[Problem]]:
    try:
        doc = read_yaml(file, error_cls=ConfigError, display_path=display)
    except ConfigError as exc:
        return None, list(exc.problems) or [Problem("invalid", str(exc), path=display)]
    return doc, list(doc.problems)


def load_openspec_config(folder: Path) -> tuple[ProjectConfig, tuple[Problem, ...]]:
    """`openspec/config.yaml` (or `.yml`) as a `ProjectConfig` and its warnings.

    `schema`, `context` and per-artifact `rules` are read; OpenSpec's other keys are
    reported as unused. A value of the wrong type is an error, as in OpenSpec.
    """
    file = next((folder / n for n in ("config.yaml", "config.yml") if (folder / n).is_file()),
                None)
    if file is None:
        return ProjectConfig(), ()
    display = f"{folder.name}/{file.name}"
    doc, problems = _mapping(file, display)
    if doc is None:
        raise ConfigError(f"{display} is invalid", problems)
    data: dict[str, Any] = dict(doc.data)
    warnings = _unused(doc, data, CONFIG_USED, "config")
    kept: dict[str, Any] = {}
    schema = data.get("schema")
    if isinstance(schema, str) and KEBAB_CASE.match(schema):
        kept["schema"] = schema
    elif schema is not None:
        problems.append(doc.problem("wrong_type", "`schema` must be a schema name such as "
                                    "'spec-driven'", ("schema",)))
    if isinstance(data.get("context"), str):
        kept["context"] = data["context"]
    elif data.get("context") is not None:
        problems.append(doc.problem("wrong_type", "`context` must be text", ("context",)))
    rules = data.get("rules")
    if isinstance(rules, dict):
        kept_rules: dict[str, tuple[str, ...]] = {}
        for art, items in rules.items():
            if isinstance(items, list) and all(isinstance(i, str) for i in items):
                if KEBAB_CASE.match(str(art)):
                    kept_rules[str(art)] = tuple(i for i in items if i)
                else:
                    warnings.append(doc.problem("unused_key", f"rules for {art!r}: not an "
                                                "artifact id, ignored", ("rules", art),
                                                severity="warning"))
            else:
                problems.append(doc.problem("wrong_type", "rules must be a list of texts per "
                                            "artifact id", ("rules", art)))
        kept["rules"] = kept_rules
    elif rules is not None:
        problems.append(doc.problem("wrong_type", "`rules` must map artifact ids to lists",
                                    ("rules",)))
    if [p for p in problems if p.severity == "error"]:
        raise ConfigError(f"{display} is invalid", problems + warnings)
    return ProjectConfig.model_validate(kept), tuple(problems + warnings)


def read_metadata(file: Path, display: str | Callable[[], str], default_schema: str
                  ) -> tuple[ChangeFile | None, list[Problem]]:
    """A change's `.openspec.yaml` as a `ChangeFile` (None when it cannot be used) and
    its problems: unused keys (`goal`, `risk_level`...) are warnings; `created` may be
    a YAML date; a missing `schema` falls back to the project's default with a warning
    (`metadata_no_schema`: the OpenSpec CLI refuses such a change)."""
    quick = _quick_metadata(file, default_schema, display)
    if quick is not None:
        return quick
    doc, problems = _mapping(file, display if isinstance(display, str) else display())
    if doc is None:
        return None, problems
    data: dict[str, Any] = dict(doc.data)
    problems += _unused(doc, data, METADATA_USED, "change metadata")
    schema = data.get("schema", default_schema)
    if "schema" not in data:
        problems.append(replace(doc.problem(
            "metadata_no_schema", "no `schema` (the OpenSpec CLI's status and apply refuse "
            "this change: \"Invalid metadata\", schema is required); crewbook reads it with "
            f"the project's schema {default_schema!r}. Add `schema: {default_schema}` so "
            "both tools read it", severity="warning"), key="schema"))
    if not (isinstance(schema, str) and KEBAB_CASE.match(schema)):
        problems.append(doc.problem("wrong_type", f"`schema` must be a schema name such as "
                                    f"'spec-driven', not {schema!r}", ("schema",)))
    created = data.get("created")
    if isinstance(created, dt.datetime):
        created = created.date()
    if isinstance(created, dt.date):
        created = created.isoformat()
    elif created is not None and not (isinstance(created, str)
                                      and re.fullmatch(r"\d{4}-\d{2}-\d{2}", created)):
        problems.append(doc.problem("wrong_type", "`created` must be a date YYYY-MM-DD; "
                                    "ignored", ("created",), severity="warning"))
        created = None
    skip = data.get("skip_specs", False)
    if not isinstance(skip, bool):
        problems.append(doc.problem("wrong_type", "`skip_specs` must be true or false",
                                    ("skip_specs",)))
    if not isinstance(data.get("retire_capabilities", False), bool):
        # the CLI's status refuses such metadata; its validate does not read the marker
        problems.append(doc.problem(
            "retire_marker_invalid", "`retire_capabilities` must be true or false; archive "
            "does not honour it (nor does the OpenSpec CLI, whose status refuses this "
            "metadata)",
            ("retire_capabilities",), severity="warning"))
    description = data.get("description")
    if description is not None and not isinstance(description, str):
        description = str(description)
    if any(p.severity == "error" for p in problems):
        return None, problems
    return ChangeFile.model_validate({"schema": schema, "created": created,
                                      "skip_specs": skip, "description": description}), problems


def _quick_metadata(file: Path, default_schema: str, display: str | Callable[[], str]
                    ) -> tuple[ChangeFile, list[Problem]] | None:
    """The common case read with libyaml and no positions: a small mapping of keys
    crewbook uses, with the right types, and maybe other plain keys, each on a line of
    its own at the margin (`goal: ...`), whose warnings are located by that line. None
    sends the caller to the full reader, which locates every problem (file, line, key)."""
    try:
        if file.stat().st_size > 4096:
            return None
        raw = file.read_bytes()
        data = plain_metadata(raw)
        if data is None:
            data = yaml.load(raw, Loader=_FAST_LOADER)
    except (OSError, yaml.YAMLError):
        return None
    if not isinstance(data, dict) or "schema" not in data:
        return None
    unused: list[Problem] = []
    if not set(data) <= set(METADATA_USED):
        text = raw.decode("utf-8", errors="replace")
        for key in sorted(k for k in data if k not in METADATA_USED):
            if not (isinstance(key, str) and _PLAIN_KEY.fullmatch(key)):
                return None
            lines = [i for i, line in enumerate(text.split("\n"), 1)
                     if line.startswith(key) and _KEY_LINE.match(line[len(key):])]
            if len(lines) != 1:
                return None
            shown = display if isinstance(display, str) else display()
            display = shown
            unused.append(Problem("unused_key", _unused_message(key, "change metadata"),
                                  path=shown, line=lines[0], column=1, key=key,
                                  severity="warning"))
    schema = data.get("schema", default_schema)
    created = data.get("created")
    if isinstance(created, dt.date) and not isinstance(created, dt.datetime):
        created = created.isoformat()
    if not (isinstance(schema, str) and KEBAB_CASE.match(schema)
            and (created is None or (isinstance(created, str)
                 and re.fullmatch(r"\d{4}-\d{2}-\d{2}", created)))
            and isinstance(data.get("skip_specs", False), bool)
            and isinstance(data.get("retire_capabilities", False), bool)
            and isinstance(data.get("description", ""), str)):
        return None
    return ChangeFile.model_construct(  # every field was checked just above
        schema_=schema, created=created, skip_specs=data.get("skip_specs", False),
        description=data.get("description")), unused


def plain_metadata(raw: bytes) -> dict[str, Any] | None:
    """What YAML reads from metadata written as most is (`schema: spec-driven`,
    `created: 2026-01-05`, `skip_specs: true`, one key a line), without the YAML
    reader's cost (a third of validating 1,000 changes); None for anything else
    (quotes, comments, other keys or values), which YAML then reads."""
    data: dict[str, Any] = {}
    for line in raw.decode("ascii", errors="replace").split("\n"):
        if not line:
            continue
        m = _PLAIN_LINE.fullmatch(line)
        if m is None or m["key"] in data:
            return None
        key, value = m["key"], m["value"]
        if key == "schema":
            if not _PLAIN_NAME.fullmatch(value) or value in _YAML_WORDS:
                return None
            data[key] = value
        elif key == "created":
            if not _PLAIN_DATE.fullmatch(value):
                return None
            try:
                data[key] = dt.date.fromisoformat(value)
            except ValueError:
                return None
        elif value in ("true", "false"):
            data[key] = value == "true"
        else:
            return None
    return data


#: One plain `key: value` line of metadata (`plain_metadata`).
_PLAIN_LINE = re.compile(r"(?P<key>schema|created|skip_specs|retire_capabilities): +"
                         r"(?P<value>[a-z0-9-]+) *")
#: A schema name YAML reads as text: starts with a letter, kebab-case, not a YAML word.
_PLAIN_NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
_PLAIN_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_YAML_WORDS = frozenset({"yes", "no", "true", "false", "on", "off", "null"})


#: A key the quick reader locates by its line: plain letters, digits, `_` and `-`.
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_KEY_LINE = re.compile(r"[ \t]*:(?:[ \t]|$)")


_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class ChangeScan:
    """Every active change folder of a project: those that open, and the problems of
    the others (a broken change never hides the rest)."""

    changes: tuple[Change, ...]
    problems: tuple[Problem, ...]
    broken: tuple[str, ...] = field(default=())

    def __len__(self) -> int:
        return len(self.changes)


def _display(project: Project, path: Path) -> str:
    return project.relative(path)


def is_change_folder(folder: Path, layout: str) -> bool:
    """Whether `folder` (under `changes/`) is a change: any folder but `archive/` and
    hidden ones in OpenSpec's layout; one with a `change.yaml` or `.openspec.yaml` in
    the codev layout."""
    if folder.name == ARCHIVE or folder.name.startswith(".") or not folder.is_dir():
        return False
    if layout == "openspec":
        return True
    return (folder / "change.yaml").is_file() or (folder / METADATA).is_file()


def scan_changes(project: Project) -> ChangeScan:
    """Open every active change of `project`; report the folders that do not open."""
    open_change: Callable[[Path, Project], Change] = resolve(_OPEN_CHANGE)
    folder = project.changes_folder
    if not folder.is_dir():
        return ChangeScan((), ())
    changes: list[Change] = []
    problems: list[Problem] = []
    broken: list[str] = []
    subfolders = sorted(p for p in folder.iterdir()
                        if p.is_dir() and p.name != ARCHIVE and not p.name.startswith("."))
    for sub in subfolders:
        if not is_change_folder(sub, project.layout):
            problems.append(Problem(
                "not_a_change",
                f"{sub.name}/ holds no change.yaml or {METADATA}, so it is not read as a "
                f"change; add one (`schema: spec-driven`) or move the folder out of "
                f"{_display(project, folder)}/",
                path=_display(project, sub), severity="warning"))
            continue
        try:
            changes.append(open_change(sub, project))
        except CrewbookError as exc:
            broken.append(sub.name)
            found = list(getattr(exc, "problems", ()))
            problems += found or [Problem("change_unreadable", str(exc),
                                          path=_display(project, sub))]
    if subfolders and not changes and not broken:
        problems.append(Problem(
            "no_changes_recognised",
            f"{len(subfolders)} folders under {_display(project, folder)}/ and none is a "
            f"change: each needs a change.yaml (or OpenSpec's {METADATA}) naming its schema",
            path=_display(project, folder)))
    return ChangeScan(tuple(changes), tuple(problems), tuple(broken))


@dataclass(frozen=True)
class ArchivedChange:
    """An archived change, `changes/archive/YYYY-MM-DD-<name>/`: its name, archive
    date, folder, and the change itself when its folder opens."""

    name: str
    archived: dt.date | None
    folder: Path
    change: Change | None
    problems: tuple[Problem, ...] = ()


def archived_changes(project: Project) -> list[ArchivedChange]:
    """Every archived change, by archive date then name; one whose folder name has no
    date, or whose metadata is broken, is still listed with its problem."""
    open_change: Callable[[Path, Project], Change] = resolve(_OPEN_CHANGE)
    folder = project.changes_folder / ARCHIVE
    if not folder.is_dir():
        return []
    found: list[ArchivedChange] = []
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")):
        problems: list[Problem] = []
        match = ARCHIVED_NAME.match(sub.name)
        date: dt.date | None = None
        name = sub.name
        if match:
            try:
                date = dt.date.fromisoformat(match.group(1))
                name = match.group(2)
            except ValueError:
                date = None
        if date is None:
            problems.append(Problem(
                "archive_name", f"{sub.name}/ is not named YYYY-MM-DD-<name>, so its "
                "archive date is unknown", path=_display(project, sub), severity="warning"))
        change: Change | None = None
        try:
            change = open_change(sub, project)
        except CrewbookError as exc:
            problems += list(getattr(exc, "problems", ())) or [
                Problem("change_unreadable", str(exc), path=_display(project, sub))]
        found.append(ArchivedChange(name, date, sub, change, tuple(problems)))
    found.sort(key=lambda a: (a.archived or dt.date.min, a.name, a.folder.name))
    return found
