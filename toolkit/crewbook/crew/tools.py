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
from dataclasses import dataclass, replace
from typing import Any, Literal

from ..artifacts.project import ProjectLike
from ..core.bar import DEFAULT_TIMEOUT
from ..errors import CrewError, LoopRefused, Problem, did_you_mean
from .model import BAR_NAMES, SCOPES, STATE_FILE

JSON = dict[str, Any]

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


def _obj(properties: JSON, required: tuple[str, ...] = ()) -> JSON:
    return {"type": "object", "properties": properties, "required": list(required),
            "additionalProperties": False}


@dataclass(frozen=True)
class Tool:
    """One operation: its name, what it does, its argument schema, and how to run it;
    its stability (beta|stable), scope (project, no project, story), whether it only
    reads, is idempotent, and is gated in semi-auto (``disabled``: refused there)."""

    name: str
    description: str
    schema: JSON
    run: Callable[[JSON, ProjectLike], JSON]
    stability: str = "stable"
    scope: str = "project"
    read_only: bool = False
    idempotent: bool = False
    gate: Literal["none", "gated", "disabled"] = "none"

    @property
    def full_description(self) -> str:
        """The description with stability, scope and gating, as tools/list shows it."""
        gate = {"gated": " Gated (semi-auto): acts once the user approves.",
                "disabled": " Execution tool: disabled in semi-auto."}.get(self.gate, "")
        return (f"{self.description} [Stability: {self.stability} · scope: {self.scope}]"
                + (" Read-only." if self.read_only else "") + gate)


def _crew_init(a: JSON, project: ProjectLike) -> JSON:
    from .api import crew_init

    status = crew_init(a["goal"], a.get("scope", "epic"), a.get("max_rounds", 100),
                       a.get("max_epics", 3), a.get("bar"), a.get("force", False),
                       project=project, epic=a.get("change"),
                       bar_timeout=a.get("bar_timeout", DEFAULT_TIMEOUT))
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
    from ..autonomous.api import loop_init

    return loop_init(a["goal"], bool(a.get("force", False)), project=project).to_dict()


def _loop_step(a: JSON, project: ProjectLike) -> JSON:
    from ..autonomous.api import loop_step

    return loop_step(a.get("test_command"), project=project, summary=a.get("summary", ""),
                     act=a.get("act")).to_dict()


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
               "change": {"type": "string", "minLength": 1,
                          "description": "the change (epic) to start on (default: the "
                          "first change with an open story)"},
               "bar_timeout": {"type": "number", "exclusiveMinimum": 0, "default": 600,
                               "description": "seconds each bar command may run"},
               "force": {"type": "boolean", "default": False}}, ("goal", "bar")),
         _crew_init),
    Tool("crew_report", "Report the act of the expected role and get the next act. A "
         "report from another role is refused and nothing is logged. May be long: the "
         "engine measures the bar (up to 4 commands) after a developer report.",
         _obj({"role": {"type": "string", "enum": ["analyst", "developer", "qa"]},
               "verdict": {"type": "string", "enum": ["done", "go", "no-go"],
                           "description": "go/no-go for qa, done for analyst and developer"},
               "summary": {"type": "string", "minLength": 1, "maxLength": 4000},
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
         _obj({"test_command": {"type": "string", "minLength": 1}, "act": _ACT_ID,
               "summary": {"type": "string", "maxLength": 4000,
                           "description": "what was done in the phase (logged)"}}),
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

#: name → (stability, scope, read-only, idempotent, gate), from seed 003's tool list.
_META: dict[str, tuple[str, str, bool, bool, Literal["none", "gated", "disabled"]]] = {
    "crew_init": ("beta", "project", False, False, "gated"),
    "crew_report": ("beta", "project", False, False, "gated"),
    "crew_status": ("beta", "project", True, True, "none"),
    "crew_step": ("beta", "project", False, True, "gated"),
    "loop_init": ("stable", "project", False, False, "disabled"),
    "loop_step": ("stable", "project", False, False, "gated"),
    "provider_presets_list": ("stable", "no project", True, True, "none"),
    "provider_profile_init": ("stable", "no project", False, False, "none"),
    "provider_profile_show": ("stable", "no project", True, True, "none"),
    "task_classify": ("stable", "story", False, True, "none"),
    "task_route_show": ("stable", "story", True, True, "none"),
}
TOOLS = tuple(replace(t, stability=_META[t.name][0], scope=_META[t.name][1],
                      read_only=_META[t.name][2], idempotent=_META[t.name][3],
                      gate=_META[t.name][4]) for t in TOOLS)
BY_NAME: dict[str, Tool] = {t.name: t for t in TOOLS}


def autonomy(project: ProjectLike) -> str:
    """The project's autonomy mode (``auto`` | ``semi-auto``, `_codev/crew.yaml`
    ``autonomy:``); ``auto`` when no project is found."""
    from ..artifacts.project import as_project
    from ..errors import NotFoundError
    from .backlog import Backlog

    try:
        proj = as_project(project)
    except NotFoundError:
        return "auto"
    return Backlog(proj).crew_file().autonomy  # fails closed on an unreadable file


def gate_refusal(tool: Tool, project: ProjectLike) -> str | None:
    """Why `tool` may not act now without the user's approval, or None.

    In semi-auto, ``loop_init`` is refused outright and a gated tool needs approval: the
    MCP server asks the user (elicitation) when the client supports it; elsewhere the
    refusal says how to approve."""
    if tool.gate == "none" or autonomy(project) != "semi-auto":
        return None
    if tool.gate == "disabled":
        return (f"{tool.name} is an execution tool, disabled in semi-auto (_codev/crew.yaml "
                "autonomy: semi-auto); the user can set `autonomy: auto` to enable it")
    cli = {"crew_init": "crewbook crew init", "crew_report": "crewbook crew report",
           "crew_step": "crewbook crew step", "loop_step": "crewbook loop step"}[tool.name]
    return (f"{tool.name} needs the user's approval in semi-auto (_codev/crew.yaml autonomy: "
            "semi-auto) and this client cannot ask for it (no MCP elicitation). To approve, "
            f"ask the user to run it themselves (`{cli} ...`), or to set `autonomy: auto`")


def _json_message(error: Any) -> str:
    """A schema error in JSON terms (``"abc" is not an integer``, ``null``, ``true``),
    not Python's (``None``, ``'abc'``), which the client never wrote."""
    import json

    def shown(value: Any) -> str:
        text = json.dumps(value, ensure_ascii=False, default=str)
        return text if len(text) <= 80 else text[:77] + "..."

    if error.validator in ("maxLength", "minLength") and isinstance(error.instance, str):
        limit = "at most" if error.validator == "maxLength" else "at least"
        return (f"a string of {len(error.instance)} characters; {limit} "
                f"{error.validator_value} allowed")
    if error.validator == "type":
        kinds = error.validator_value if isinstance(error.validator_value, list) \
            else [error.validator_value]
        article = " or ".join(("an " if k[0] in "aeiou" else "a ") + k for k in kinds)
        return f"{shown(error.instance)} is not {article}"
    if error.validator == "enum":
        return (f"{shown(error.instance)} is not one of "
                f"{', '.join(shown(v) for v in error.validator_value)}")
    if error.validator == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        return f"missing required argument {shown(missing[0]) if missing else ''}".strip()
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        return f"unknown argument(s) {', '.join(shown(k) for k in extra)}"
    return str(error.message)


def check_arguments(tool: Tool, arguments: JSON | None) -> JSON:
    """`arguments` checked against the tool's schema; `CrewError` with every problem."""
    import json

    from ..core.lazy import import_jsonschema

    jsonschema = import_jsonschema()  # not `import jsonschema`: see import_jsonschema
    args = dict(arguments or {})
    rest = {k: v for k, v in args.items() if k != "payload"}  # a payload has its own cap
    size = len(json.dumps(rest, ensure_ascii=False, default=str).encode())
    if size > MAX_ARGUMENTS:  # refused without echoing: a huge value stays out of the answer
        raise CrewError(f"invalid arguments for {tool.name}", [Problem(
            "too_large", f"the arguments are {size} bytes, over the {MAX_ARGUMENTS} limit; "
            "pass long documents as a file (payload_path) instead", key="arguments")])
    validator = jsonschema.Draft202012Validator(tool.schema)
    errors = sorted(validator.iter_errors(args), key=lambda e: list(e.absolute_path))
    if errors:
        problems = [Problem("invalid_argument", _json_message(e),
                            key=".".join(str(p) for p in e.absolute_path) or None)
                    for e in errors]
        raise CrewError(f"invalid arguments for {tool.name}", problems)
    return args


#: The most JSON a call's arguments other than an inline `payload` (at most 4 MiB, checked
#: by the report) may weigh, in bytes: more is refused unread.
MAX_ARGUMENTS = 512 * 1024

#: A human title per tool (MCP `title`), shown by clients instead of the bare name.
TITLES: dict[str, str] = {
    "crew_init": "Start the crew loop", "crew_report": "Report a crew act",
    "crew_status": "Crew loop status", "crew_step": "Next crew act contract",
    "loop_init": "Start the autonomous loop", "loop_step": "Advance the autonomous loop",
    "provider_presets_list": "List provider presets",
    "provider_profile_init": "Write the provider profile",
    "provider_profile_show": "Show the active provider profile",
    "task_classify": "Classify a task", "task_route_show": "Show a task's route"}

def output_schema(tool: Tool) -> JSON:
    """The JSON Schema of `tool`'s result (MCP `outputSchema`), which its structured
    content validates against: a `Status` or `Act` for the loop tools, the exact JSON of
    the routing results for the others (`crewbook.crew.results`)."""
    from .results import output_schema as schema_of

    return schema_of(tool.name)


def precheck(tool: Tool, arguments: JSON | None, project: ProjectLike = None) -> None:
    """Raise the error a gated call would hit whatever the user answers: arguments the
    schema refuses, no crew loop to report to or step, a loop that exists without
    ``force``. Semi-auto asks for approval only for a call that would otherwise proceed."""
    from ..autonomous.api import open_autonomous
    from ..errors import AlreadyExistsError, NotFoundError
    from .api import crew_status

    args = check_arguments(tool, arguments)
    if tool.name in ("crew_report", "crew_step"):
        crew_status(project=project)  # raises when there is no crew loop
    elif tool.name == "loop_step":
        open_autonomous(project)
    elif tool.name == "crew_init" and not args.get("force", False):
        try:
            crew_status(project=project)
        except NotFoundError:
            return
        raise AlreadyExistsError(f"a crew loop already exists ({STATE_FILE}); pass "
                                 "force=true to start a new one over it")


def call_tool(name: str, arguments: JSON | None, project: ProjectLike = None, *,
              approved: bool = False) -> JSON:
    """Run tool `name` with JSON `arguments` on `project`; its JSON result. In semi-auto a
    gated tool runs only `approved` (by the user), and ``loop_init`` never."""
    tool = BY_NAME.get(name)
    if tool is None:
        raise CrewError("unknown tool", [Problem(
            "unknown_tool", f"no tool {name!r}{did_you_mean(name, BY_NAME)}; tools: "
            f"{', '.join(BY_NAME)}", key="name")])
    args = check_arguments(tool, arguments)
    why = gate_refusal(tool, project)
    if why is not None and (tool.gate == "disabled" or not approved):
        raise LoopRefused(why, code="needs_approval" if tool.gate == "gated" else "disabled")
    return tool.run(args, project)


__all__ = [
    "BY_NAME",
    "MAX_ARGUMENTS",
    "TITLES",
    "TOOLS",
    "Tool",
    "autonomy",
    "call_tool",
    "check_arguments",
    "gate_refusal",
    "output_schema",
    "precheck",
]
