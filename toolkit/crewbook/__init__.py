"""crewbook: a notebook-first toolkit for the workflow model of AI software-delivery teams.

Load artifact schemas and changes (SPEC A), check them with file:line errors, and look
at them as pandas DataFrames and rich notebook displays. Nothing heavy (graphviz,
ipywidgets, matplotlib, IPython) is imported until a function needs it.
"""

from __future__ import annotations

from .artifacts.change import (
    ApplyState,
    ArtifactState,
    Change,
    ChangeStatus,
    TaskItem,
    change_status,
    new_change,
    open_change,
)
from .artifacts.instructions import Instructions, RoleListing, instructions, list_roles
from .artifacts.project import Project, find_project_root
from .artifacts.registry import SchemaListing, SchemaWarning, get_schema, list_schemas
from .artifacts.schema import Schema, ValidationReport, load_schema, validate_schema
from .errors import (
    AlreadyExistsError,
    ArtifactNotFoundError,
    ChangeNotFoundError,
    ConfigError,
    CrewbookError,
    InvalidInputError,
    LedgerError,
    LoopRefused,
    NotFoundError,
    PipelineError,
    Problem,
    ProjectNotFoundError,
    SchemaError,
    SchemaNotFoundError,
    UnsafePathError,
)
from .examples import example_project

__version__ = "0.1.0"

__all__ = [
    "AlreadyExistsError",
    "ApplyState",
    "ArtifactNotFoundError",
    "ArtifactState",
    "Change",
    "ChangeNotFoundError",
    "ChangeStatus",
    "ConfigError",
    "CrewbookError",
    "Instructions",
    "InvalidInputError",
    "LedgerError",
    "LoopRefused",
    "NotFoundError",
    "PipelineError",
    "Problem",
    "Project",
    "ProjectNotFoundError",
    "RoleListing",
    "Schema",
    "SchemaError",
    "SchemaListing",
    "SchemaNotFoundError",
    "SchemaWarning",
    "TaskItem",
    "UnsafePathError",
    "ValidationReport",
    "__version__",
    "change_status",
    "example_project",
    "find_project_root",
    "get_schema",
    "instructions",
    "list_roles",
    "list_schemas",
    "load_schema",
    "new_change",
    "open_change",
    "validate_schema",
]
