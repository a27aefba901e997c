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
from .draw import GraphModel, Matrix
from .errors import (
    AlreadyExistsError,
    ArtifactNotFoundError,
    ChangeNotFoundError,
    ConfigError,
    CrewbookError,
    DotError,
    DotNotFoundError,
    InvalidInputError,
    LedgerError,
    LoopRefused,
    NotFoundError,
    PipelineError,
    PresetNotFoundError,
    Problem,
    ProjectNotFoundError,
    RoutingError,
    SchemaError,
    SchemaNotFoundError,
    TaskNotFoundError,
    UnsafePathError,
)
from .examples import example_project
from .routing import (
    compare_profiles,
    get_preset,
    provider_presets_list,
    provider_profile_init,
    provider_profile_show,
    role_route,
    task_classify,
    task_route_show,
    task_routes,
)

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
    "DotError",
    "DotNotFoundError",
    "GraphModel",
    "Instructions",
    "InvalidInputError",
    "LedgerError",
    "LoopRefused",
    "Matrix",
    "NotFoundError",
    "PipelineError",
    "PresetNotFoundError",
    "Problem",
    "Project",
    "ProjectNotFoundError",
    "RoleListing",
    "RoutingError",
    "Schema",
    "SchemaError",
    "SchemaListing",
    "SchemaNotFoundError",
    "SchemaWarning",
    "TaskItem",
    "TaskNotFoundError",
    "UnsafePathError",
    "ValidationReport",
    "__version__",
    "change_status",
    "compare_profiles",
    "example_project",
    "find_project_root",
    "get_preset",
    "get_schema",
    "instructions",
    "list_roles",
    "list_schemas",
    "load_schema",
    "new_change",
    "open_change",
    "provider_presets_list",
    "provider_profile_init",
    "provider_profile_show",
    "role_route",
    "task_classify",
    "task_route_show",
    "task_routes",
    "validate_schema",
]
