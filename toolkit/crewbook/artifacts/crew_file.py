"""`_codev/crew.yaml`, the project's team file (SPEC D1, D5, D6 and seed 003): the stacks
it declares, the workshop's axes, and the autonomy mode of the MCP tools.

It is no family's own: the crew loop takes its bar commands from the stacks and its
epics from the workshop (D1, D5), the autonomous loop its default test command from the
first stack (D6), and every gated MCP tool its mode from ``autonomy:``. Each reads it
here, so neither family imports the other. A reader that keeps a `Remembered` dict
(the crew's backlog) parses it again only when its modification time, size or inode
changed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, cast

from pydantic import BaseModel, ConfigDict, Field

from ..errors import CrewError, Problem, did_you_mean
from ..models import FROZEN, parse_model
from ..sources import read_yaml

if TYPE_CHECKING:
    from .project import ProjectLike

#: The optional file declaring stacks and the workshop, relative to the project root.
CREW_FILE: Final = "_codev/crew.yaml"

#: The cycles of a stack, which are also the names of the crew loop's bar commands.
BarName = Literal["test", "lint", "typecheck", "build"]
BAR_NAMES: Final[tuple[BarName, ...]] = ("test", "lint", "typecheck", "build")

#: Built-in stack models: the commands of each cycle (a declared stack may override any).
STACK_MODELS: Final[dict[str, dict[str, str]]] = {
    "python": {"test": "python -m pytest -q", "lint": "ruff check .",
               "typecheck": "mypy .", "build": "python -m build"},
    "node": {"test": "npm test", "lint": "npm run lint", "typecheck": "npx tsc --noEmit",
             "build": "npm run build"},
    "pnpm": {"test": "pnpm test", "lint": "pnpm lint", "typecheck": "pnpm exec tsc --noEmit",
             "build": "pnpm build"},
    "rust": {"test": "cargo test", "lint": "cargo clippy", "typecheck": "cargo check",
             "build": "cargo build"},
    "go": {"test": "go test ./...", "lint": "go vet ./...", "build": "go build ./..."},
}


class StackDecl(BaseModel):
    """A stack declared in `_codev/crew.yaml`: a name (a built-in model such as `python`,
    or your own), where it lives, and its cycle commands (defaults from the model)."""

    model_config = FROZEN

    name: str = Field(min_length=1)
    cwd: str | None = None
    test: str | None = None
    lint: str | None = None
    typecheck: str | None = None
    build: str | None = None


class CrewFile(BaseModel):
    """`_codev/crew.yaml`: the stacks of the project and the workshop's axes (D5, D6)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stacks: tuple[StackDecl, ...] = ()
    workshop: tuple[str, ...] = Field(
        (), description="Axes of evolution, in order; scope all/workshop promotes them to "
        "epics (a new change each) when no epic is left.")
    autonomy: Literal["auto", "semi-auto"] = Field(
        "auto", description="'auto' (default): agents call every tool. 'semi-auto': the "
        "gated tools (crew_init, crew_report, crew_step, loop_step) act only once the user "
        "approves (MCP elicitation, else a refusal saying how), and loop_init is disabled.")


#: A reader's memory of the crew file: (its stamp, the file read) once read.
Remembered = dict[str, tuple[tuple[int, int, int], "CrewFile"]]


def stamp_of(path: Path | str) -> tuple[int, int, int] | None:
    """What says a file changed: modification time, size and inode (an editor that saves
    by renaming a new file in place may keep the time and the size); None when absent."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def read_crew_file(root: Path, remembered: Remembered | None = None) -> CrewFile:
    """`_codev/crew.yaml` under `root` (empty when absent); `CrewError` naming file:line
    when it is invalid or a link that leads nowhere. With `remembered` (a reader's own
    dict, e.g. a loop's backlog), the file is parsed again only when its stamp changed."""
    path = root / CREW_FILE
    key = stamp_of(path)
    if key is None:
        if os.path.lexists(path):  # a link to nothing, a loop of links
            raise CrewError(f"{CREW_FILE} cannot be read", [Problem(
                "crew_file_unreadable", "it is a link that leads nowhere (a loop of links or "
                "a missing target) or cannot be read; fix or remove it. Until then the "
                "autonomy mode is unknown and gated tools are refused", CREW_FILE)])
        return CrewFile()
    known = remembered.get(str(path)) if remembered is not None else None
    if known is not None and known[0] == key:
        return known[1]
    doc = read_yaml(path, error_cls=CrewError, display_path=CREW_FILE)
    model, problems = parse_model(CrewFile, doc)
    problems = list(doc.problems) + problems
    if model is not None:
        problems += check_crew_file(cast(CrewFile, model), doc)
    if any(p.severity == "error" for p in problems):
        raise CrewError(f"{CREW_FILE} is invalid", problems)
    crew = cast(CrewFile, model)
    if remembered is not None:
        remembered[str(path)] = (key, crew)
    return crew


def check_crew_file(crew: CrewFile, doc: object) -> list[Problem]:
    """The crew file beyond its model: a stack declared twice, a custom stack with no
    command, a blank workshop axis."""
    problems: list[Problem] = []
    seen: set[str] = set()
    for index, stack in enumerate(crew.stacks):
        if stack.name in seen:
            problems.append(_at(doc, "duplicate_stack", f"stack {stack.name!r} is declared "
                                "twice; give each stack its own name", ("stacks", index, "name")))
        seen.add(stack.name)
        if stack.name not in STACK_MODELS and not any(getattr(stack, c) for c in BAR_NAMES):
            problems.append(_at(doc, "stack_without_commands", f"stack {stack.name!r} is not a "
                                f"built-in model ({', '.join(STACK_MODELS)}) and names no command; "
                                "give at least `test:`", ("stacks", index)))
    for index, axis in enumerate(crew.workshop):
        if not axis.strip():
            problems.append(_at(doc, "blank_axis", "a workshop axis is blank; write what the "
                                "evolution is about", ("workshop", index)))
    return problems


def _at(doc: object, code: str, message: str, key: tuple[str | int, ...]) -> Problem:
    problem = getattr(doc, "problem", None)
    if problem is not None:
        return cast(Problem, problem(code, message, key))
    return Problem(code, message, CREW_FILE)


def stack_command(stack: StackDecl, cycle: BarName) -> str | None:
    """The command of `cycle` (test, lint...) for a declared stack, or None."""
    own: str | None = getattr(stack, cycle)
    return own or STACK_MODELS.get(stack.name, {}).get(cycle)


def find_stack(crew: CrewFile, name: str) -> StackDecl:
    """A declared stack, or a built-in model used as is; `CrewError` otherwise."""
    for stack in crew.stacks:
        if stack.name == name:
            return stack
    if name in STACK_MODELS:
        return StackDecl(name=name)
    known = [s.name for s in crew.stacks] + list(STACK_MODELS)
    raise CrewError("unknown stack", [Problem(
        "unknown_stack", f"no stack {name!r} is declared in {CREW_FILE} nor built in"
        f"{did_you_mean(name, known)}; stacks: {', '.join(known)}", key="stack")])


def default_test_command(root: Path) -> tuple[str, str | None] | None:
    """(command, cwd) of the test cycle of the first declared stack that has one."""
    for stack in read_crew_file(root).stacks:
        command = stack_command(stack, "test")
        if command:
            return command, stack.cwd
    return None


def autonomy(project: ProjectLike) -> str:
    """The project's autonomy mode (``auto`` | ``semi-auto``, ``autonomy:``); ``auto``
    when no project is found; fails closed (`CrewError`) on an unreadable file."""
    from ..errors import NotFoundError
    from .project import as_project

    try:
        proj = as_project(project)
    except NotFoundError:
        return "auto"
    return read_crew_file(proj.root).autonomy


__all__ = ["BAR_NAMES", "CREW_FILE", "STACK_MODELS", "BarName", "CrewFile", "Remembered",
           "StackDecl", "autonomy", "check_crew_file", "default_test_command", "find_stack",
           "read_crew_file", "stack_command", "stamp_of"]
