"""The crew loop's files and models (SPEC D1-D6): settings, bar, crew file, persisted state.

Where things live in a project (all under ``_codev/crew/``, see `docs/crew.md`)::

    _codev/crew.yaml             optional: declared stacks and the workshop (you write it)
    _codev/crew/state.json       the crew loop's state (crew_init writes it, every act saves it)
    _codev/crew/loop.json        the autonomous loop's state (`crewbook.autonomous.model`)
    _codev/crew/crew.jsonl       the crew loop's ledger (one run per crew_init)
    _codev/crew/loop.jsonl       the autonomous loop's ledger (idem)
    _codev/crew/prompts/*.json   the prompts crew_step writes: {"prompt": "..."}

The crew file's models are `crewbook.artifacts.crew_file`'s (the autonomous loop reads
it too); the folder, its lock and the prompts are `crewbook.core.loopfiles`'s.

The states are pydantic models written as JSON, so the CLI, the MCP server and a notebook
can take turns on one loop: each call loads the state, acts, and saves it. They are
frozen, and checked where they come in (a file read, a caller's state). Between acts the
crew engine steps a plain working copy (`crewbook.crew.working`) and makes the
`CrewState` again only when it is shown, snapshotted or saved.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, Field, field_validator
from pydantic_core import PydanticCustomError

from ..artifacts.crew_file import (
    BAR_NAMES,
    CREW_FILE,
    STACK_MODELS,
    BarName,
    CrewFile,
    StackDecl,
)
from ..core.bar import DEFAULT_MAX_OUTPUT, DEFAULT_TIMEOUT, BarRun
from ..core.loopfiles import LOOPS_DIR, MAX_SUMMARY_CHARS, PROMPTS_DIR
from ..models import FROZEN, SAFE_NAME, safe_name

#: The folder of every crew file, relative to the project root (the folder of every
#: persisted loop, `crewbook.core.loopfiles`).
CREW_DIR: Final = LOOPS_DIR
STATE_FILE: Final = f"{CREW_DIR}/state.json"
CREW_LEDGER: Final = f"{CREW_DIR}/crew.jsonl"

Role = Literal["analyst", "developer", "qa"]
ROLES: Final[tuple[Role, ...]] = ("analyst", "developer", "qa")
#: What each role does in one story cycle (the `stage` of its ledger events).
STAGES: Final[dict[str, str]] = {"analyst": "frame", "developer": "build", "qa": "verify"}
#: The verdicts each role may give (D2).
VERDICTS: Final[dict[str, tuple[str, ...]]] = {
    "analyst": ("done",), "developer": ("done",), "qa": ("go", "no-go")}
Scope = Literal["story", "epic", "all", "workshop"]
SCOPES: Final[tuple[Scope, ...]] = ("story", "epic", "all", "workshop")
FinishedReason = Literal["scope_covered", "epics_exhausted", "rounds_exhausted"]
#: Characters of output logged in a `bar` event (the end of the output).
LEDGER_TAIL: Final = 2000
#: How many acts `crew_status` shows unless asked for all (`full=True`).
STATUS_LAST: Final = 10
#: Largest payload file `crew_report(payload_path=...)` reads (D2).
MAX_PAYLOAD_BYTES: Final = 4 * 1024 * 1024
#: Largest inline `payload` (its JSON, in bytes), as for `payload_path`.
MAX_INLINE_PAYLOAD_BYTES: Final = MAX_PAYLOAD_BYTES
#: Characters of a summary or feedback line that status and journals echo.
ECHO_CHARS: Final = 500
#: Characters of a failing bar command's output tail QA's contract carries.
CONTRACT_TAIL: Final = 1500
#: Placeholder story of an epic whose tasks file has no checkbox yet.
WHOLE_EPIC: Final = "(whole epic)"
#: Story of checkboxes that come before any heading.
NO_SECTION: Final = "(no section)"


class BarCommand(BaseModel):
    """One command of the bar: a shell string, where it runs, which stack it belongs to."""

    model_config = FROZEN

    command: str = Field(min_length=1, description="The shell command.")
    cwd: str | None = Field(None, description="Folder it runs in, relative to the project.")
    stack: str | None = Field(None, description="The stack it belongs to (crew.yaml).")
    timeout: float | None = Field(
        None, gt=0, description="Seconds before the whole process group is killed "
        "(default: the loop's bar_timeout, 600).")

    @field_validator("command")
    @classmethod
    def _command_has_text(cls, value: str) -> str:
        if not value.strip():
            raise PydanticCustomError(
                "blank_command", "the command is blank: a bar that runs nothing would pass "
                "without testing anything; give a shell command")
        return value


class CrewConfig(BaseModel):
    """What `crew_init` was given (D1), checked."""

    model_config = FROZEN

    goal: str = Field(min_length=1)
    scope: Scope = "epic"
    max_rounds: int = Field(100, ge=0, description="Most acts; 0 = unlimited.")
    max_epics: int = Field(3, ge=0, description="Most epics worked on; 0 = unlimited.")
    bar: dict[BarName, BarCommand] = Field(min_length=1, max_length=4)
    bar_timeout: float = Field(DEFAULT_TIMEOUT, gt=0)
    max_output: int = Field(DEFAULT_MAX_OUTPUT, ge=256)

    @field_validator("goal")
    @classmethod
    def _goal_has_text(cls, value: str) -> str:
        if not value.strip():
            raise PydanticCustomError("blank_goal",
                                      "the goal is blank; say what the loop must deliver")
        return value.strip()

    def limit(self, name: Literal["rounds", "epics"]) -> int | None:
        """The cap as `crewbook.Cap` wants it: None when the setting is 0 (unlimited)."""
        value = self.max_rounds if name == "rounds" else self.max_epics
        return value or None


class BarFacts(BaseModel):
    """The bar measured on one version of the work (cached per act, D4)."""

    model_config = FROZEN

    act: int = Field(description="The developer act whose version was measured.")
    version: int
    runs: tuple[BarRun, ...]

    @property
    def passed(self) -> bool:
        """Every command passed."""
        return all(r.passed for r in self.runs)


class ActRecord(BaseModel):
    """One accepted act, as `crew_status` lists it."""

    model_config = FROZEN

    act: int
    ts: str
    role: str
    verdict: str
    summary: str
    epic: str | None
    story: str | None


class CrewFields:
    """The fields of the crew loop's state, declared once: `CrewState` (the model the loop
    shows and saves) takes them as its fields, and the engine's working copy
    (`crewbook.crew.working.Working`) as its attributes."""

    format: Literal[1] = 1
    run: str
    config: CrewConfig
    expected: Role = "analyst"
    previous: Role | None = None
    acts: int = 0
    version: int = 0
    attempt: int = 1
    epic: str | None = None
    epic_axis: str | None = None
    story: str | None = None
    epics_started: int = 1
    stories_covered: tuple[tuple[str, str], ...] = ()
    epics_covered: tuple[str, ...] = ()
    promoted: tuple[str, ...] = ()
    no_go: int = 0
    dev_act: int | None = None
    bar: BarFacts | None = None
    bar_runs: int = 0
    feedback: tuple[str, ...] = ()
    finished_reason: FinishedReason | None = None
    trail: tuple[ActRecord, ...] = ()


class CrewState(BaseModel, CrewFields):
    """The crew loop's persisted state (`_codev/crew/state.json`)."""

    model_config = FROZEN

    @field_validator("run")
    @classmethod
    def _run_is_a_name(cls, value: str) -> str:
        return safe_name(value, "run") or value

    @field_validator("epic")
    @classmethod
    def _epic_is_a_name(cls, value: str | None) -> str | None:
        return safe_name(value, "epic")

    def covered(self, epic: str, story: str) -> bool:
        """Whether qa gave `go` on this story."""
        return (epic, story) in self.stories_covered


def format_models() -> dict[str, type[BaseModel]]:
    """File name in `schemas/` → the model it describes (for `crewbook.formats`)."""
    return {
        "crew-file.json": CrewFile,
        "crew-state.json": CrewState,
    }


__all__ = [
    "BAR_NAMES", "CONTRACT_TAIL", "CREW_DIR", "CREW_FILE", "CREW_LEDGER", "ECHO_CHARS",
    "FROZEN", "LEDGER_TAIL", "MAX_INLINE_PAYLOAD_BYTES", "MAX_PAYLOAD_BYTES",
    "MAX_SUMMARY_CHARS", "NO_SECTION", "PROMPTS_DIR", "ROLES", "SAFE_NAME", "SCOPES",
    "STACK_MODELS", "STAGES", "STATE_FILE", "STATUS_LAST", "VERDICTS", "WHOLE_EPIC",
    "ActRecord", "BarCommand", "BarFacts", "BarName", "CrewConfig", "CrewFields", "CrewFile",
    "CrewState", "FinishedReason", "Role", "Scope", "StackDecl", "format_models", "safe_name",
]
