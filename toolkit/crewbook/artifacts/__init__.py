"""Artifact schemas and changes (SPEC A): the codev format.

- `load_schema(path)` / `validate_schema(path)`: one schema folder, as a `Schema` (frames,
  drawing, role matrix) or as a `ValidationReport` of every problem;
  `list_schemas(project)` and `get_schema(name, project)`: the registry (project
  schemas before the built-in `spec-driven`, A1, A2, A5).
- `Project`: a folder holding `_codev/` with its config (A8, A9).
- `new_change`, `open_change`, `change_status`: a change and where it stands (A6) as a
  `ChangeStatus` (per-artifact state, apply gate, task checklist).
- `instructions(artifact, change)` and `list_roles()`: what an agent gets (A7, A10).
- `validate_project`, `validate_change`: every problem of a whole project or change.
- OpenSpec projects open in place (`openspec/`): `parse_spec` / `parse_delta` (A9 spec
  deltas as frames), `preview_archive` / `archive_change` (archive, previewed or done),
  `project_history` (every change, active and archived, with its dates).
- `runs_by_change(project, runs)`: imported agent sessions tied to the change and phase
  they served, with their calls, tokens, cost, wall time and rework.

Modules: `model` (the file models), `checks` (schema rules), `frames` (DataFrames),
`graph` (drawings), `schema`, `registry`, `project`, `change`, `status`, `checklist`,
`step_roles`, `agent_instructions`, `audit`; for OpenSpec's files `openspec` (config,
metadata, scan, archive folder), `specs` (parsing), `delta_checks` (validation),
`archive` (preview and archive) and `archive_view` (what a preview shows), `history`,
`synthetic` (generated OpenSpec projects), `change_runs` (agent sessions per change).
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING

from ..core.lazy import lazy_names as _lazy_names

#: Public names by defining module, loaded on first use (PEP 562): a command that needs
#: one submodule (`crewbook validate` reads `audit`) does not import the others.
_LAZY: dict[str, tuple[str, ...]] = {
    "archive": ("ArchivePreview", "archive_change", "preview_archive"),
    "audit": ("validate_change", "validate_project"),
    "change": ("Change", "change_status", "new_change", "open_change"),
    "change_runs": ("runs_by_change",),
    "checklist": ("TaskItem", "parse_tasks"),
    "history": ("project_history",),
    "agent_instructions": ("Instructions", "RoleListing", "instructions", "list_roles"),
    "project": ("Project", "find_project_root"),
    "registry": ("SchemaListing", "SchemaWarning", "get_schema", "list_schemas"),
    "schema": ("Schema", "load_schema", "validate_schema"),
    "specs": ("parse_delta", "parse_spec"),
    "status": ("ApplyState", "ArtifactState", "ChangeStatus"),
}
_LAZY_REPORT = ("ValidationReport",)

if _TYPE_CHECKING:
    from ..report import ValidationReport
    from .agent_instructions import Instructions, RoleListing, instructions, list_roles
    from .archive import ArchivePreview, archive_change, preview_archive
    from .audit import validate_change, validate_project
    from .change import Change, change_status, new_change, open_change
    from .change_runs import runs_by_change
    from .checklist import TaskItem, parse_tasks
    from .history import project_history
    from .project import Project, find_project_root
    from .registry import SchemaListing, SchemaWarning, get_schema, list_schemas
    from .schema import Schema, load_schema, validate_schema
    from .specs import parse_delta, parse_spec
    from .status import ApplyState, ArtifactState, ChangeStatus

_getattr, __dir__ = _lazy_names(__name__, _LAZY, globals())


def __getattr__(name: str) -> object:
    """A public name, imported from its module on first use."""
    if name in _LAZY_REPORT:
        from ..report import ValidationReport

        globals()[name] = ValidationReport
        return ValidationReport
    return _getattr(name)


__all__ = [
    "ApplyState",
    "ArchivePreview",
    "ArtifactState",
    "Change",
    "ChangeStatus",
    "Instructions",
    "Project",
    "RoleListing",
    "Schema",
    "SchemaListing",
    "SchemaWarning",
    "TaskItem",
    "ValidationReport",
    "archive_change",
    "change_status",
    "find_project_root",
    "get_schema",
    "instructions",
    "list_roles",
    "list_schemas",
    "load_schema",
    "new_change",
    "open_change",
    "parse_delta",
    "parse_spec",
    "parse_tasks",
    "preview_archive",
    "project_history",
    "runs_by_change",
    "validate_change",
    "validate_project",
    "validate_schema",
]
