"""The public namespace is small and pinned; importing it stays light."""

from __future__ import annotations

import subprocess
import sys

import pytest

import crewbook

EXPECTED = {
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
    "check_conformance",
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
}


def test_all_is_pinned() -> None:
    assert set(crewbook.__all__) == EXPECTED
    assert sorted(crewbook.__all__) == list(crewbook.__all__), "keep __all__ sorted"


def test_every_exported_name_exists() -> None:
    missing = [name for name in crewbook.__all__ if not hasattr(crewbook, name)]
    assert missing == []


def test_no_name_leaks_into_the_top_level() -> None:
    """Every public attribute of `crewbook` is either exported or a subpackage: helper
    names (`annotations`, `TYPE_CHECKING`, `Any`...) never leak."""
    import types

    public = {name for name in vars(crewbook) if not name.startswith("_")}
    modules = {name for name in public if isinstance(getattr(crewbook, name), types.ModuleType)}
    assert public - modules - set(crewbook.__all__) == set()


def test_the_package_docstring_names_every_concept() -> None:
    doc = crewbook.__doc__ or ""
    for concept in ("crewbook.artifacts", "crewbook.pipeline", "crewbook.delivery",
                    "crewbook.routing", "crewbook.core.loop", "crewbook.ledger", "crewbook.draw",
                    "crewbook.commands"):
        assert concept in doc


def test_import_does_not_load_heavy_packages() -> None:
    code = (
        "import sys, crewbook\n"
        "heavy = [m for m in ('graphviz', 'ipywidgets', 'matplotlib', 'IPython', 'mcp', "
        "'anyio', 'pandas', 'dask', 'distributed', 'playwright') "
        "if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_errors_subclass_the_natural_builtins() -> None:
    assert issubclass(crewbook.SchemaError, ValueError)
    assert issubclass(crewbook.SchemaNotFoundError, KeyError)
    assert issubclass(crewbook.ProjectNotFoundError, FileNotFoundError)
    assert issubclass(crewbook.AlreadyExistsError, FileExistsError)
    assert issubclass(crewbook.LoopRefused, RuntimeError)
    assert str(crewbook.SchemaNotFoundError("no schema 'x'")) == "no schema 'x'"


#: Old import paths kept working through the one-folder-per-family move (issue 21):
#: module → the names it must still give, and where they live now.
SHIMS = {
    "crewbook.simulate": {"PipelineFactory": "crewbook.pipeline.factory",
                          "TaskFactory": "crewbook.delivery.factory",
                          "Player": "crewbook.core.players"},
    "crewbook.simulate.factories": {"PipelineFactory": "crewbook.pipeline.factory",
                                    "TaskFactory": "crewbook.delivery.factory"},
}


@pytest.mark.parametrize("module", sorted(SHIMS))
def test_old_import_paths_still_work(module: str) -> None:
    import importlib
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        found = importlib.import_module(module)
    for name, home in SHIMS[module].items():
        value = getattr(found, name)
        assert getattr(value, "__module__", home) == home, (module, name)


def test_the_deprecated_names_are_gone() -> None:
    """crewbook has had no release: the old names went with the restructuring."""
    import importlib

    import crewbook.crew.contracts
    import crewbook.simulate

    for module in ("crewbook.loop", "crewbook.widgets.reports"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(module)
    assert not hasattr(crewbook.simulate, "SimClock")
    assert not hasattr(crewbook.crew.contracts, "RouteResolver")
    import crewbook.crew

    # the crew package no longer re-exports the autonomous loop (crew/ and autonomous/
    # are two families): it is `crewbook.autonomous`
    assert not hasattr(crewbook.crew, "AutonomousLoop")
    assert not hasattr(crewbook.crew, "open_autonomous")
