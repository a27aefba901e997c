"""crewbook: a notebook-first toolkit for the workflow model of AI software-delivery teams.

Load the files of the model, check them strictly (every problem with file, line, key and
what to do), look at them as pandas DataFrames and drawings, and step their loops one
cell at a time. The public names, by concept (each concept is a subpackage with the
same shape: `model`, `checks`, `frames`, `graph`, `engine`):

- **Artifact schemas and changes** (SPEC A, `crewbook.artifacts`): `Project`,
  `load_schema`, `validate_schema`, `list_schemas`, `get_schema`, `new_change`,
  `open_change`, `change_status`, `instructions`, `list_roles`.
- **Role pipelines** (SPEC B, `crewbook.pipeline`): `load_pipeline`,
  `validate_pipeline`, `Pipeline`, `PipelineLoop`.
- **Delivery roles and the coordinator** (SPEC C, `crewbook.delivery`):
  `start_task`, `StandardLoop`, `CoordinatorLoop`, `review_required`.
- **Model routing** (SPEC D7–D9, `crewbook.routing`): `provider_presets_list`,
  `provider_profile_init`, `provider_profile_show`, `task_classify`,
  `task_route_show`, `task_routes`, `role_route`, `compare_profiles`, `get_preset`.
- **The crew loop and the autonomous loop** (SPEC D1–D6, `crewbook.crew`,
  `crewbook.autonomous`): `crew_init`, `crew_step`, `crew_report`, `crew_status`,
  `open_crew`, `CrewLoop`, `CrewReport`, `loop_init`, `loop_step`, `open_autonomous`,
  `AutonomousLoop`.
- **The Loop protocol** (`crewbook.core.loop`): `Loop`, `Act`, `Status`, `Snapshot`,
  `MemoryLedger`, `ManualClock`: `contract()`, `report()`, `status()` on every engine.
- **Run ledgers** (`crewbook.ledger`): `Ledger`, `LedgerEvent`, `read_ledger`,
  `validate_ledger`, `import_runs` (other agent tools' logs), `import_speckit_runs`,
  `to_parquet`, and the analyses `run_outcomes`, `usage_by_role`, `rework`,
  `verdict_funnel`, `timeline`, `plot_timeline`, `plot_rounds`.
- **Comparing designs** (`crewbook.compare`): `diff_schemas` (with the consequences for
  existing changes), `diff_pipelines`, `diff_runs`, `diff_profiles`, each a `Diff`.
- **What-if simulation** (`crewbook.simulate`): `RandomPolicy`, `load_policy`; the
  package's `simulate` and `sweep` play thousands of runs of any loop offline.
- **Drawings** (`crewbook.draw`): `GraphModel`, `Matrix`.
- **Checking and errors**: `ValidationReport` (what every `validate_*` returns),
  `Problem`, and `CrewbookError` with its family (`crewbook.errors` draws the tree).
- `example_project()`: a copy of the bundled tour project to try all of it on.

The command line is `crewbook` (`crewbook.commands`). Importing this package is light:
only the errors load at once; every other name loads its module on first use, and
nothing heavy (pydantic models, pandas, pyarrow, graphviz, ipywidgets, matplotlib,
IPython) loads until a function needs it. Architecture and the rules
between layers: `docs/architecture.md`; history: `CHANGELOG.md`.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .core.lazy import lazy_names as _lazy_names

# -- errors: light, loaded at once ------------------------------------------------------
from .errors import (
    AlreadyExistsError,
    ArtifactNotFoundError,
    ChangeNotFoundError,
    CompareError,
    ConfigError,
    CrewbookError,
    CrewError,
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
    SimulationError,
    StageNotFoundError,
    TaskNotFoundError,
    UnsafePathError,
    UsageError,
)

#: Every other public name, by the module that defines it: loaded on first use, so
#: `import crewbook` (and the `crewbook` command's start-up) loads no pydantic model,
#: pandas or pyarrow until a name needs them.
_LAZY: dict[str, tuple[str, ...]] = {
    "artifacts": ("ApplyState", "ArtifactState", "Change", "ChangeStatus", "Instructions",
        "Project", "RoleListing", "Schema", "SchemaListing", "SchemaWarning", "TaskItem",
        "change_status", "find_project_root", "get_schema", "instructions", "list_roles",
        "list_schemas", "load_schema", "new_change", "open_change", "runs_by_change",
        "validate_schema"),
    "compare": ("Diff", "diff_pipelines", "diff_profiles", "diff_runs", "diff_schemas"),
    "core.loop": ("Act", "Loop", "ManualClock", "MemoryLedger", "Snapshot", "Status"),
    "autonomous": ("AutonomousLoop", "loop_init", "loop_step", "open_autonomous"),
    "crew": ("CrewLoop", "CrewReport", "crew_init", "crew_report", "crew_status", "crew_step",
        "open_crew"),
    "delivery": ("CoordinatorLoop", "StandardLoop", "review_required", "start_task"),
    "draw": ("GraphModel", "Matrix", "format_duration", "readable"),
    "examples": ("example_project",),
    "pipeline": ("Pipeline", "PipelineLoop", "load_pipeline", "validate_pipeline"),
    "report": ("ValidationReport",),
    "routing": ("compare_profiles", "get_preset", "provider_presets_list",
        "provider_profile_init", "provider_profile_show", "role_route", "task_classify",
        "task_route_show", "task_routes"),
    "ledger": ("Ledger", "LedgerEvent", "check_conformance", "import_runs", "import_speckit_runs",
        "plot_rounds", "plot_timeline", "read_ledger", "rework", "run_outcomes", "timeline",
        "to_parquet", "usage_by_role", "validate_ledger", "verdict_funnel"),
    "simulate.policies": ("RandomPolicy", "load_policy"),
}

if _TYPE_CHECKING:
    from .artifacts import (
        ApplyState,
        ArtifactState,
        Change,
        ChangeStatus,
        Instructions,
        Project,
        RoleListing,
        Schema,
        SchemaListing,
        SchemaWarning,
        TaskItem,
        change_status,
        find_project_root,
        get_schema,
        instructions,
        list_roles,
        list_schemas,
        load_schema,
        new_change,
        open_change,
        runs_by_change,
        validate_schema,
    )
    from .autonomous import AutonomousLoop, loop_init, loop_step, open_autonomous
    from .compare import (
        Diff,
        diff_pipelines,
        diff_profiles,
        diff_runs,
        diff_schemas,
    )
    from .core.loop import (
        Act,
        Loop,
        ManualClock,
        MemoryLedger,
        Snapshot,
        Status,
    )
    from .crew import (
        CrewLoop,
        CrewReport,
        crew_init,
        crew_report,
        crew_status,
        crew_step,
        open_crew,
    )
    from .delivery import (
        CoordinatorLoop,
        StandardLoop,
        review_required,
        start_task,
    )
    from .draw import (
        GraphModel,
        Matrix,
        format_duration,
        readable,
    )
    from .examples import (
        example_project,
    )
    from .ledger import (
        Ledger,
        LedgerEvent,
        check_conformance,
        import_runs,
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
    from .pipeline import (
        Pipeline,
        PipelineLoop,
        load_pipeline,
        validate_pipeline,
    )
    from .report import (
        ValidationReport,
    )
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
    from .simulate import (
        RandomPolicy,
        load_policy,
    )


__getattr__, __dir__ = _lazy_names(__name__, _LAZY, globals())

__version__ = "0.1.0"

__all__ = [
    "Act",
    "AlreadyExistsError",
    "ApplyState",
    "ArtifactNotFoundError",
    "ArtifactState",
    "AutonomousLoop",
    "Change",
    "ChangeNotFoundError",
    "ChangeStatus",
    "CompareError",
    "ConfigError",
    "CoordinatorLoop",
    "CrewError",
    "CrewLoop",
    "CrewReport",
    "CrewbookError",
    "DeliveryError",
    "Diff",
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
    "ManualClock",
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
    "RandomPolicy",
    "RoleListing",
    "RoutingError",
    "Schema",
    "SchemaError",
    "SchemaListing",
    "SchemaNotFoundError",
    "SchemaWarning",
    "SimulationError",
    "Snapshot",
    "StageNotFoundError",
    "StandardLoop",
    "Status",
    "TaskItem",
    "TaskNotFoundError",
    "UnsafePathError",
    "UsageError",
    "ValidationReport",
    "__version__",
    "change_status",
    "check_conformance",
    "compare_profiles",
    "crew_init",
    "crew_report",
    "crew_status",
    "crew_step",
    "diff_pipelines",
    "diff_profiles",
    "diff_runs",
    "diff_schemas",
    "example_project",
    "find_project_root",
    "format_duration",
    "get_preset",
    "get_schema",
    "import_runs",
    "import_speckit_runs",
    "instructions",
    "list_roles",
    "list_schemas",
    "load_pipeline",
    "load_policy",
    "load_schema",
    "loop_init",
    "loop_step",
    "new_change",
    "open_autonomous",
    "open_change",
    "open_crew",
    "plot_rounds",
    "plot_timeline",
    "provider_presets_list",
    "provider_profile_init",
    "provider_profile_show",
    "read_ledger",
    "readable",
    "review_required",
    "rework",
    "role_route",
    "run_outcomes",
    "runs_by_change",
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
