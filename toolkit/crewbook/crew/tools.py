"""The crew's and routing's operations as tools an agent calls (seed 003, D1-D4, D7-D9):
name, description, JSON Schema of the arguments, and a function from JSON arguments to a
JSON result (`crewbook.core.tools.Tool`).

`crewbook mcp` serves them over MCP (stdio), gathered with every family's tools by
`crewbook.core.toolbox` (the autonomous loop's are `crewbook.autonomous.tools`); they are
plain data and functions here, so the schemas are tested without a server and nothing
here imports the MCP SDK. A refusal (`LoopRefused`) or any other `CrewbookError` is
raised for the server to return as a tool error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial

from ..artifacts.crew_file import BAR_NAMES, autonomy
from ..artifacts.project import ProjectLike
from ..core.bar import DEFAULT_TIMEOUT
from ..core.loopfiles import MAX_SUMMARY_CHARS
from ..core.tools import ACT_ID, JSON, Gate, Tool, obj
from ..errors import CrewError, Problem, did_you_mean
from .model import SCOPES, STATE_FILE
from .results import result_schema

_BAR_COMMAND: JSON = {
    "oneOf": [
        {"type": "string", "minLength": 1, "description": "a shell command (not blank)"},
        {"type": "object", "additionalProperties": False,
         "properties": {"command": {"type": "string", "minLength": 1},
                        "cwd": {"type": "string", "description": "relative to the project"},
                        "stack": {"type": "string",
                                  "description": "a stack of _codev/crew.yaml or built in"},
                        "timeout": {"type": "number", "exclusiveMinimum": 0}}},
    ],
}
_TASK_ID: JSON = {"type": "string", "minLength": 1,
                  "description": "task id (e.g. 1.2, or a free id such as TSK-01)"}
_CHANGE: JSON = {"type": "string", "description": "the change whose tasks.md holds the task "
                 "(optional: without it, a free task id)"}


def _crew_init(a: JSON, project: ProjectLike) -> JSON:
    from .api import crew_init

    status = crew_init(a["goal"], a.get("scope", "epic"), a.get("max_rounds", 100),
                       a.get("max_epics", 3), a.get("bar"), a.get("force", False),
                       project=project, epic=a.get("change"),
                       bar_timeout=a.get("bar_timeout", DEFAULT_TIMEOUT))
    return status.to_dict()


def _crew_report(a: JSON, project: ProjectLike) -> JSON:
    from .api import crew_report

    act = crew_report(a["role"], a["verdict"], a["summary"], a.get("payload"),
                      a.get("payload_path"), project=project, act=a.get("act"))
    return act.to_dict()


def _crew_status(a: JSON, project: ProjectLike) -> JSON:
    from .api import crew_status

    return crew_status(bool(a.get("full", False)), project=project).to_dict()


def _crew_step(a: JSON, project: ProjectLike) -> JSON:
    from .api import crew_step

    return crew_step(a.get("document"), project=project).to_dict()


def _presets(a: JSON, project: ProjectLike) -> JSON:
    from ..routing.presets import provider_presets_list

    return provider_presets_list().to_dict()


def _profile_init(a: JSON, project: ProjectLike) -> JSON:
    from ..routing.profiles import provider_profile_init

    result = provider_profile_init(a["family"], a.get("scope", "global"),
                                   bool(a.get("force", False)), project)
    return result.to_dict()


def _profile_show(a: JSON, project: ProjectLike) -> JSON:
    from ..routing.active import provider_profile_show

    return provider_profile_show(project).to_dict()


def _task_change(a: JSON, project: ProjectLike) -> str | None:
    """The change of task ``a["task_id"]``: ``change`` when given; else, while a crew loop
    runs, its active epic, the task being one of the active story's (seed 003: "a task
    of the active story"), an unknown id refused; else None (a free task id)."""
    if a.get("change"):
        return str(a["change"])
    from ..errors import NotFoundError
    from .api import open_crew

    try:
        loop = open_crew(project)
    except NotFoundError:
        return None
    s = loop.state
    if not s.epic:
        return None
    story = loop.backlog.epic(s.epic).story(s.story)
    ids = [t.id for t in story.tasks] if story is not None else []
    if str(a["task_id"]) not in ids:
        raise CrewError("unknown task", [Problem(
            "unknown_task", f"no task {a['task_id']!r} in the active story {s.story!r} of "
            f"{s.epic}{did_you_mean(str(a['task_id']), ids)}; its tasks: "
            f"{', '.join(ids) or 'none yet'} (give change= for a task of another change)",
            key="task_id")])
    return s.epic


def _classify(a: JSON, project: ProjectLike) -> JSON:
    from ..routing.routes import task_classify

    return task_classify(a["task_id"], a.get("complexity"), a.get("capability_tier"),
                         a.get("effort_level"), change=_task_change(a, project),
                         project=project).to_dict()


def _route_show(a: JSON, project: ProjectLike) -> JSON:
    from ..routing.routes import task_route_show

    return task_route_show(a["task_id"], change=_task_change(a, project),
                           project=project).to_dict()


def _has_crew_loop(a: JSON, project: ProjectLike) -> None:
    """Raise when there is no crew loop to report to or step."""
    from .api import crew_status

    crew_status(project=project)


def _no_crew_loop_unless_forced(a: JSON, project: ProjectLike) -> None:
    """Raise when a crew loop exists and `force` is not given."""
    from ..errors import AlreadyExistsError, NotFoundError
    from .api import crew_status

    if a.get("force", False):
        return
    try:
        crew_status(project=project)
    except NotFoundError:
        return
    raise AlreadyExistsError(f"a crew loop already exists ({STATE_FILE}); pass "
                             "force=true to start a new one over it")


def _tool(name: str, description: str, schema: JSON,
          run: Callable[[JSON, ProjectLike], JSON]) -> Tool:
    return Tool(name, description, schema, run, partial(result_schema, name))


_PLAIN: tuple[Tool, ...] = (
    _tool("crew_init", "Start the crew loop (analyst, developer, qa take turns on the "
         "project's changes: epic = change, story = section of tasks.md, task = checkbox). "
         "Refused without a bar command, and over an existing loop without force.",
         obj({"goal": {"type": "string", "minLength": 1,
                        "description": "what the loop must deliver; in every prompt"},
               "scope": {"type": "string", "enum": list(SCOPES), "default": "epic"},
               "max_rounds": {"type": "integer", "minimum": 0, "default": 100,
                              "description": "most acts; 0 = unlimited"},
               "max_epics": {"type": "integer", "minimum": 0, "default": 3,
                             "description": "most epics worked on; 0 = unlimited"},
               "bar": {"type": "object", "minProperties": 1, "additionalProperties": False,
                       "properties": {n: _BAR_COMMAND for n in BAR_NAMES},
                       "description": "test/lint/typecheck/build → shell command or "
                       "{command, cwd?, stack?}; at least one"},
               "change": {"type": "string", "minLength": 1,
                          "description": "the change (epic) to start on (default: the "
                          "first change with an open story)"},
               "bar_timeout": {"type": "number", "exclusiveMinimum": 0, "default": 600,
                               "description": "seconds each bar command may run"},
               "force": {"type": "boolean", "default": False}}, ("goal", "bar")),
         _crew_init),
    _tool("crew_report", "Report the act of the expected role and get the next act. A "
         "report from another role is refused and nothing is logged. May be long: the "
         "engine measures the bar (up to 4 commands) after a developer report.",
         obj({"role": {"type": "string", "enum": ["analyst", "developer", "qa"]},
               "verdict": {"type": "string", "enum": ["done", "go", "no-go"],
                           "description": "go/no-go for qa, done for analyst and developer"},
               "summary": {"type": "string", "minLength": 1,
                           "maxLength": MAX_SUMMARY_CHARS},
               "payload": {"type": "object", "description": "the role's structured output; "
                           "exclusive with payload_path"},
               "payload_path": {"type": "string", "description": "a JSON file (≤ 4 MiB) "
                                "under the project; exclusive with payload"},
               "act": ACT_ID},
              ("role", "verdict", "summary")), _crew_report),
    _tool("crew_status", "The crew loop's state, read-only: step, expected role, "
         "epic/story/task pointer, counters, caps, finished_reason, the last acts "
         "(ledger_omitted counts the others; full=true for all).",
         obj({"full": {"type": "boolean", "default": False}}), _crew_status),
    _tool("crew_step", "The contract of the next act: role, model and native effort, "
         "expected output, and prompt_path (a JSON file {\"prompt\": ...} under the project). "
         "Does not advance the loop; may measure the bar at the qa step.",
         obj({"document": {"type": "string", "description": "an artifact id of the epic's "
                            "schema to focus on (default: all documents of the phase)"}}),
         _crew_step),
    _tool("provider_presets_list", "The provider presets (built-in and custom). Read-only.",
         obj({}), _presets),
    _tool("provider_profile_init", "Write the provider profile (tier × effort → model) from "
         "a preset family, scope global or project; never overwrites without force.",
         obj({"family": {"type": "string", "minLength": 1},
               "scope": {"type": "string", "enum": ["global", "project"], "default": "global"},
               "force": {"type": "boolean", "default": False}}, ("family",)), _profile_init),
    _tool("provider_profile_show", "The active provider profile, each value with its source. "
         "Read-only.", obj({}), _profile_show),
    _tool("task_classify", "Classify a task on 1+ routing axes; returns its resolved route.",
         obj({"task_id": _TASK_ID, "change": _CHANGE,
               "complexity": {"type": "string", "enum": ["simple", "complex"]},
               "capability_tier": {"type": "string", "enum": ["deep", "standard", "light"]},
               "effort_level": {"type": "string", "enum": ["low", "medium", "high"]}},
              ("task_id",)), _classify),
    _tool("task_route_show", "A task's route: tier/effort → model + native effort through "
         "the profile (project before global). A suggestion.",
         obj({"task_id": _TASK_ID, "change": _CHANGE}, ("task_id",)), _route_show),
)

#: name → (title, stability, scope, read-only, idempotent, gate), from seed 003's tool list.
_META: dict[str, tuple[str, str, str, bool, bool, Gate]] = {
    "crew_init": ("Start the crew loop", "beta", "project", False, False, "gated"),
    "crew_report": ("Report a crew act", "beta", "project", False, False, "gated"),
    "crew_status": ("Crew loop status", "beta", "project", True, True, "none"),
    "crew_step": ("Next crew act contract", "beta", "project", False, True, "gated"),
    "provider_presets_list": ("List provider presets", "stable", "no project", True, True,
                              "none"),
    "provider_profile_init": ("Write the provider profile", "stable", "no project", False,
                              False, "none"),
    "provider_profile_show": ("Show the active provider profile", "stable", "no project",
                              True, True, "none"),
    "task_classify": ("Classify a task", "stable", "story", False, True, "none"),
    "task_route_show": ("Show a task's route", "stable", "story", True, True, "none"),
}
#: What a gated tool checks before the user is asked (`Tool.precheck`).
_PRECHECK = {"crew_init": _no_crew_loop_unless_forced, "crew_report": _has_crew_loop,
             "crew_step": _has_crew_loop}

TOOLS: tuple[Tool, ...] = tuple(
    replace(t, title=_META[t.name][0], stability=_META[t.name][1], scope=_META[t.name][2],
            read_only=_META[t.name][3], idempotent=_META[t.name][4], gate=_META[t.name][5],
            cli=f"crewbook crew {t.name.removeprefix('crew_')}", autonomy=autonomy,
            precheck=_PRECHECK.get(t.name))
    for t in _PLAIN)

__all__ = ["TOOLS"]
