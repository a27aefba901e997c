"""The crew loop's bar as `crew_init` takes it (D1): a name (test, lint, typecheck,
build) → a shell command or ``{command, cwd?, stack?, timeout?}``, checked into
`BarCommand`s, a ``stack`` filled from `_codev/crew.yaml` or a built-in model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ..artifacts.crew_file import BAR_NAMES, find_stack, read_crew_file, stack_command
from ..artifacts.project import Project
from ..errors import CrewError, Problem, UnsafePathError, did_you_mean
from ..models import pydantic_problems
from .model import BarCommand


def normalise_bar(bar: Mapping[str, Any] | None, project: Project) -> dict[str, BarCommand]:
    """The bar as `BarCommand`s: each value a shell string or ``{command, cwd?, stack?,
    timeout?}``; a ``stack`` fills ``cwd`` (and ``command`` when absent) from the stack.
    `CrewError` listing every problem; at least one command (D1)."""
    problems: list[Problem] = []
    out: dict[str, BarCommand] = {}
    if not bar:
        raise CrewError("the bar is empty", [Problem(
            "bar_empty", "give at least one bar command: bar={'test': 'pytest -q'} (names: "
            f"{', '.join(BAR_NAMES)}); a crew loop without a mechanical bar is refused",
            key="bar")])
    if not isinstance(bar, Mapping):
        raise CrewError("the bar is not an object", [Problem(
            "bar_not_object", "bar maps a name (test, lint, typecheck, build) to a command",
            key="bar")])
    for name, value in bar.items():
        if name not in BAR_NAMES:
            problems.append(Problem("bar_unknown_name", f"{name!r} is not a bar command name"
                                    f"{did_you_mean(str(name), BAR_NAMES)}; names: "
                                    f"{', '.join(BAR_NAMES)}", key=f"bar.{name}"))
            continue
        data: dict[str, Any] = {"command": value} if isinstance(value, str) else dict(value) \
            if isinstance(value, Mapping) else {"command": value}
        if data.get("stack"):
            try:
                stack = find_stack(read_crew_file(project.root), str(data["stack"]))
            except CrewError as exc:
                problems += [Problem(p.code, p.message, key=f"bar.{name}.stack")
                             for p in exc.problems]
                continue
            data.setdefault("cwd", stack.cwd)
            if not data.get("command"):
                data["command"] = stack_command(stack, name)
        try:
            command = BarCommand.model_validate(data)
        except ValidationError as exc:
            problems += [Problem(p.code, p.message, key=f"bar.{name}.{p.key}" if p.key
                                 else f"bar.{name}") for p in pydantic_problems(exc)]
            continue
        if command.cwd is not None:
            from ..core.bar import confined_cwd

            try:
                confined_cwd(project.root, command.cwd)
            except (UnsafePathError, CrewError) as exc:
                problems.append(Problem("bar_cwd", str(exc).splitlines()[0] if isinstance(
                    exc, UnsafePathError) else exc.problems[0].message, key=f"bar.{name}.cwd"))
                continue
        out[name] = command
    if len(bar) > len(BAR_NAMES):
        problems.append(Problem("bar_too_many", f"at most {len(BAR_NAMES)} bar commands",
                                key="bar"))
    if problems:
        raise CrewError("the bar is invalid", problems)
    return out


__all__ = ["normalise_bar"]
