"""The seed's operations as tools an agent calls (seed 003): name, description, JSON Schema
of the arguments, and a function from JSON arguments to a JSON result.

`crewbook mcp` serves them over MCP (stdio); they are plain data and functions here, so
the schemas are tested without a server and nothing here imports the MCP SDK. Arguments
are checked against their schema first (`CrewError` listing every problem); a refusal
(`LoopRefused`) or any other `CrewbookError` is raised for the server to return as a
tool error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..artifacts.project import ProjectLike
from ..errors import CrewError, Problem, did_you_mean
from .model import BAR_NAMES, SCOPES

JSON = dict[str, Any]

_BAR_COMMAND: JSON = {
    "oneOf": [
        {"type": "string", "minLength": 1, "description": "a shell command"},
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


def _obj(properties: JSON, required: tuple[str, ...] = ()) -> JSON:
    return {"type": "object", "properties": properties, "required": list(required),
            "additionalProperties": False}


@dataclass(frozen=True)
class Tool:
    """One operation: its name, what it does, its argument schema, and how to run it."""

    name: str
    description: str
    schema: JSON
    run: Callable[[JSON, ProjectLike], JSON]


def _crew_init(a: JSON, project: ProjectLike) -> JSON:
    from .api import crew_init

    status = crew_init(a["goal"], a.get("scope", "epic"), a.get("max_rounds", 100),
                       a.get("max_epics", 3), a.get("bar"), a.get("force", False),
                       project=project)
    return status.to_dict()


#: The optional act id of a report or step: a retry of an accepted act is not logged twice.
_ACT_ID: JSON = {"type": "integer", "minimum": 1, "description": "the act number of the "
                 "contract answered (its `act`): a retry of an act already accepted returns the "
                 "next contract and logs nothing; a report for another act is refused"}


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


def _loop_init(a: JSON, project: ProjectLike) -> JSON:
    from .api import loop_init

    return loop_init(a["goal"], bool(a.get("force", False)), project=project).to_dict()


def _loop_step(a: JSON, project: ProjectLike) -> JSON:
    from .api import loop_step

    return loop_step(a.get("test_command"), project=project, act=a.get("act")).to_dict()


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


def _classify(a: JSON, project: ProjectLike) -> JSON:
    from ..routing.routes import task_classify

    return task_classify(a["task_id"], a.get("complexity"), a.get("capability_tier"),
                         a.get("effort_level"), change=a.get("change"),
                         project=project).to_dict()


def _route_show(a: JSON, project: ProjectLike) -> JSON:
    from ..routing.routes import task_route_show

    return task_route_show(a["task_id"], change=a.get("change"), project=project).to_dict()


TOOLS: tuple[Tool, ...] = (
    Tool("crew_init", "Start the crew loop (analyst, developer, qa take turns on the "
         "project's changes: epic = change, story = section of tasks.md, task = checkbox). "
         "Refused without a bar command, and over an existing loop without force.",
         _obj({"goal": {"type": "string", "minLength": 1,
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
               "force": {"type": "boolean", "default": False}}, ("goal", "bar")),
         _crew_init),
    Tool("crew_report", "Report the act of the expected role and get the next act. A "
         "report from another role is refused and nothing is logged. May be long: the "
         "engine measures the bar (up to 4 commands) after a developer report.",
         _obj({"role": {"type": "string", "enum": ["analyst", "developer", "qa"]},
               "verdict": {"type": "string", "enum": ["done", "go", "no-go"],
                           "description": "go/no-go for qa, done for analyst and developer"},
               "summary": {"type": "string", "minLength": 1},
               "payload": {"type": "object", "description": "the role's structured output; "
                           "exclusive with payload_path"},
               "payload_path": {"type": "string", "description": "a JSON file (≤ 4 MiB) "
                                "under the project; exclusive with payload"},
               "act": _ACT_ID},
              ("role", "verdict", "summary")), _crew_report),
    Tool("crew_status", "The crew loop's state, read-only: step, expected role, "
         "epic/story/task pointer, counters, caps, finished_reason, the last acts "
         "(ledger_omitted counts the others; full=true for all).",
         _obj({"full": {"type": "boolean", "default": False}}), _crew_status),
    Tool("crew_step", "The contract of the next act: role, model and native effort, "
         "expected output, and prompt_path (a JSON file {\"prompt\": ...} under the project). "
         "Does not advance the loop; may measure the bar at the qa step.",
         _obj({"document": {"type": "string", "description": "an artifact id of the epic's "
                            "schema to focus on (default: all documents of the phase)"}}),
         _crew_step),
    Tool("loop_init", "Start the autonomous build loop (Plan → Implementation → Recette → "
         "Delivery) with a global goal.",
         _obj({"goal": {"type": "string", "minLength": 1},
               "force": {"type": "boolean", "default": False}}, ("goal",)), _loop_init),
    Tool("loop_step", "Advance the autonomous loop one phase; the recette runs test_command "
         "(default: the test cycle of the first stack declared in _codev/crew.yaml).",
         _obj({"test_command": {"type": "string", "minLength": 1}, "act": _ACT_ID}),
         _loop_step),
    Tool("provider_presets_list", "The provider presets (built-in and custom). Read-only.",
         _obj({}), _presets),
    Tool("provider_profile_init", "Write the provider profile (tier × effort → model) from "
         "a preset family, scope global or project; never overwrites without force.",
         _obj({"family": {"type": "string", "minLength": 1},
               "scope": {"type": "string", "enum": ["global", "project"], "default": "global"},
               "force": {"type": "boolean", "default": False}}, ("family",)), _profile_init),
    Tool("provider_profile_show", "The active provider profile, each value with its source. "
         "Read-only.", _obj({}), _profile_show),
    Tool("task_classify", "Classify a task on 1+ routing axes; returns its resolved route.",
         _obj({"task_id": _TASK_ID, "change": _CHANGE,
               "complexity": {"type": "string", "enum": ["simple", "complex"]},
               "capability_tier": {"type": "string", "enum": ["deep", "standard", "light"]},
               "effort_level": {"type": "string", "enum": ["low", "medium", "high"]}},
              ("task_id",)), _classify),
    Tool("task_route_show", "A task's route: tier/effort → model + native effort through "
         "the profile (project before global). A suggestion.",
         _obj({"task_id": _TASK_ID, "change": _CHANGE}, ("task_id",)), _route_show),
)

BY_NAME: dict[str, Tool] = {t.name: t for t in TOOLS}


def check_arguments(tool: Tool, arguments: JSON | None) -> JSON:
    """`arguments` checked against the tool's schema; `CrewError` with every problem."""
    import jsonschema

    args = dict(arguments or {})
    validator = jsonschema.Draft202012Validator(tool.schema)
    errors = sorted(validator.iter_errors(args), key=lambda e: list(e.absolute_path))
    if errors:
        problems = [Problem("invalid_argument", e.message,
                            key=".".join(str(p) for p in e.absolute_path) or None)
                    for e in errors]
        raise CrewError(f"invalid arguments for {tool.name}", problems)
    return args


def call_tool(name: str, arguments: JSON | None, project: ProjectLike = None) -> JSON:
    """Run tool `name` with JSON `arguments` on `project`; its JSON result."""
    tool = BY_NAME.get(name)
    if tool is None:
        raise CrewError("unknown tool", [Problem(
            "unknown_tool", f"no tool {name!r}{did_you_mean(name, BY_NAME)}; tools: "
            f"{', '.join(BY_NAME)}", key="name")])
    return tool.run(check_arguments(tool, arguments), project)


__all__ = ["BY_NAME", "TOOLS", "Tool", "call_tool", "check_arguments"]
