"""crewbook: a notebook-first toolkit for the workflow model of AI software-delivery teams.

Load artifact schemas and changes (SPEC A), check them with file:line errors, and look
at them as pandas DataFrames and rich notebook displays. Nothing heavy (graphviz,
ipywidgets, matplotlib, IPython) is imported until a function needs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .artifacts.change import (
    ApplyState,
    ArtifactState,
    Change,
    ChangeStatus,
    change_status,
    new_change,
    open_change,
)
from .artifacts.checklist import TaskItem
from .artifacts.instructions import Instructions, RoleListing, instructions, list_roles
from .artifacts.project import Project, find_project_root
from .artifacts.registry import SchemaListing, SchemaWarning, get_schema, list_schemas
from .artifacts.schema import Schema, load_schema, validate_schema
from .delivery import CoordinatorLoop, StandardLoop, review_required, start_task
from .draw import GraphModel, Matrix
from .errors import (
    AlreadyExistsError,
    ArtifactNotFoundError,
    ChangeNotFoundError,
    ConfigError,
    CrewbookError,
    DeliveryError,
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
from .loop import Act, Loop, MemoryLedger, Snapshot, Status
from .pipeline import Pipeline, PipelineLoop, load_pipeline, validate_pipeline
from .report import ValidationReport
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

if TYPE_CHECKING:
    from .ledger import (
        Ledger,
        LedgerEvent,
        import_speckit_runs,
        plot_rounds,
        plot_timeline,
        read_ledger,
        rework,
        run_outcomes,
        timeline,
        to_parquet,
        usage_by_role,
        validate_ledger,
        verdict_funnel,
    )

#: Ledger names load on first use, so `import crewbook` loads neither pandas nor pyarrow.
_LAZY_LEDGER = frozenset({
    "Ledger", "LedgerEvent", "import_speckit_runs", "plot_rounds", "plot_timeline",
    "read_ledger", "rework", "run_outcomes", "timeline", "to_parquet", "usage_by_role",
    "validate_ledger", "verdict_funnel",
})


def __getattr__(name: str) -> Any:
    if name in _LAZY_LEDGER:
        from . import ledger

        return getattr(ledger, name)
    raise AttributeError(f"module 'crewbook' has no attribute {name!r}")


__version__ = "0.1.0"

__all__ = [
    "Act",
    "AlreadyExistsError",
    "ApplyState",
    "ArtifactNotFoundError",
    "ArtifactState",
    "Change",
    "ChangeNotFoundError",
    "ChangeStatus",
    "ConfigError",
    "CoordinatorLoop",
    "CrewbookError",
    "DeliveryError",
    "DotError",
    "DotNotFoundError",
    "GraphModel",
    "Instructions",
    "InvalidInputError",
    "Ledger",
    "LedgerError",
    "LedgerEvent",
    "Loop",
    "LoopRefused",
    "Matrix",
    "MemoryLedger",
    "NotFoundError",
    "Pipeline",
    "PipelineError",
    "PipelineLoop",
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
    "Snapshot",
    "StandardLoop",
    "Status",
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
    "import_speckit_runs",
    "instructions",
    "list_roles",
    "list_schemas",
    "load_pipeline",
    "load_schema",
    "new_change",
    "open_change",
    "plot_rounds",
    "plot_timeline",
    "provider_presets_list",
    "provider_profile_init",
    "provider_profile_show",
    "read_ledger",
    "review_required",
    "rework",
    "role_route",
    "run_outcomes",
    "start_task",
    "task_classify",
    "task_route_show",
    "task_routes",
    "timeline",
    "to_parquet",
    "usage_by_role",
    "validate_ledger",
    "validate_pipeline",
    "validate_schema",
    "verdict_funnel",
]
