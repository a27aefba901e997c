"""Every error crewbook raises, and the `Problem` that names one defect in one file.

The hierarchy (each class also subclasses the natural built-in, so an existing
``except ValueError`` or ``except KeyError`` keeps working)::

    CrewbookError                         base of everything crewbook raises
    ├── InvalidInputError (ValueError)    a file or value breaks the rules; carries
    │   │                                 every Problem found, not just the first
    │   ├── SchemaError                   a schema.yaml (SPEC A3, A4, A7)
    │   ├── ConfigError                   _codev/config.yaml or a change.yaml
    │   ├── PipelineError                 a pipeline TOML file (SPEC B)
    │   ├── DeliveryError                 a role catalogue, task file or review policy (SPEC C)
    │   ├── LedgerError                   a ledger file (DESIGN rule 3)
    │   ├── RoutingError                  a preset, profile or task-classes file (D7-D9)
    │   ├── CrewError                     a crew loop's bar, crew file, payload or state (D1-D6)
    │   ├── CompareError                  two inputs that cannot be compared (other kinds)
    │   └── SimulationError               a policy file, a policy or a simulation's settings
    ├── UnsafePathError (ValueError)      a path read from a file would leave its root
    ├── UsageError (ValueError, TypeError)  a function called with arguments or in a
    │                                     state it cannot take (an unknown option value,
    │                                     a closed ledger, a frame missing a column)
    ├── NotFoundError (LookupError)       something named does not exist
    │   ├── ProjectNotFoundError (FileNotFoundError)   no folder holding `_codev/`
    │   ├── ChangeNotFoundError (FileNotFoundError)    no such change folder
    │   ├── SchemaNotFoundError (KeyError)             no schema of that name
    │   ├── ArtifactNotFoundError (KeyError)           no artifact of that id
    │   ├── StageNotFoundError (KeyError)              no stage of that id in the pipeline
    │   ├── PresetNotFoundError (KeyError)             no routing preset of that family
    │   └── TaskNotFoundError (KeyError)               no task of that id in the change
    ├── AlreadyExistsError (FileExistsError)   refusing to overwrite without `force`
    ├── DotNotFoundError (FileNotFoundError)   Graphviz's `dot` is needed and missing
    ├── DotError (RuntimeError)           `dot` failed or timed out
    ├── SendError (ConnectionError)       an OTLP endpoint refused spans or could not
    │                                     be reached
    └── LoopRefused (RuntimeError)        an engine refused a report; nothing changed

Messages say what happened, why, and what to do. A `Problem` is data, not an
exception: loaders collect all of them before raising one `InvalidInputError`.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Self

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Problem:
    """One defect in one place: a short `code`, where it is, and what to do."""

    code: str
    message: str
    path: str | None = None
    line: int | None = None
    column: int | None = None
    key: str | None = None
    severity: Severity = "error"

    @property
    def location(self) -> str:
        """`file:line:col`, as far as it is known."""
        parts = [self.path or "<input>"]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)

    def __str__(self) -> str:
        key = f"{self.key}: " if self.key else ""
        return f"{self.location}: {key}{self.message} [{self.code}]"

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape used by `crewbook validate --json`."""
        return {"code": self.code, "path": self.path, "line": self.line, "column": self.column,
                "key": self.key, "message": self.message, "severity": self.severity}


def plural(count: int, word: str, many: str | None = None) -> str:
    """``plural(1, "problem")`` → ``"1 problem"``; ``plural(1200, "run")`` → ``"1,200 runs"``."""
    return f"{count:,} {word if count == 1 else many or word + 's'}"


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th`` … ``11th``, ``12th``, ``13th``, ``21st``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """`"; did you mean 'design'?"` for the nearest candidate, or an empty string."""
    import difflib  # here: the command line's start-up does not need it

    matches = difflib.get_close_matches(str(word), sorted(set(candidates)), n=1, cutoff=0.6)
    return f"; did you mean {matches[0]!r}?" if matches else ""


def problems_html(problems: Sequence[Problem]) -> str:
    """An HTML table of problems (file:line, key, code, message) for notebooks, as wide
    as the cell: the message wraps between words, a path or key path only after a ``/``
    or ``.``, a code never (inline styles: an untrusted notebook keeps them)."""
    if not problems:
        return "<p><b>No problems.</b></p>"
    cell = "text-align:left;vertical-align:top;"
    rows = "".join(
        "<tr>"
        f"<td style='{cell}'>{'⚠' if p.severity == 'warning' else '✖'}</td>"
        f"<td style='{cell}white-space:normal'><code>{_breakable(p.location)}</code></td>"
        f"<td style='{cell}white-space:normal'><code>{_breakable(p.key or '')}</code></td>"
        f"<td style='{cell}white-space:nowrap'><code>{html.escape(p.code)}</code></td>"
        f"<td style='{cell}white-space:normal;min-width:16em'>{html.escape(p.message)}</td>"
        "</tr>"
        for p in problems
    )
    head = "".join(f"<th style='text-align:left'>{name}</th>"
                   for name in ("", "where", "key", "code", "message"))
    return (f"<table class='crewbook-problems'><thead><tr>{head}</tr></thead>"
            f"<tbody>{rows}</tbody></table>")


def _breakable(text: str) -> str:
    """`text` escaped, that may break after a ``/`` or a ``.`` (a path, a key path) and
    nowhere else."""
    escaped = html.escape(text)
    for mark in ("/", "."):
        escaped = escaped.replace(mark, f"{mark}<wbr>")
    return escaped


#: The front ends that show crewbook's errors: the Python API (and notebooks), the
#: command line, MCP tool results.
Front = Literal["python", "cli", "mcp"]


def option_words(name: str, front: Front) -> str:
    """How `front` turns the boolean option `name` on: ``force=True`` (Python),
    ``--force`` (command line), ``"force": true`` (MCP arguments)."""
    if front == "cli":
        return "--" + name.replace("_", "-")
    if front == "mcp":
        return f'"{name}": true'
    return f"{name}=True"


class CrewbookError(Exception):
    """Base of every error crewbook raises."""

    #: The boolean options the message tells the user to turn on (``force``), written as
    #: Python arguments (``force=True``); `said_to` spells them for another front end.
    options: tuple[str, ...] = ()

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return self.message

    def naming(self, *options: str) -> Self:
        """This error, noting that its message names `options` as ``name=True``, so each
        front end can say them in its own words (`said_to`); the message stays Python's."""
        self.options = options
        return self

    def said_to(self, front: Front) -> str:
        """The message in `front`'s words: each option it names as `option_words` spells
        it there (``pass --force`` on the command line, ``pass "force": true`` in MCP)."""
        text = str(self)
        for name in self.options:
            text = text.replace(f"{name}=True", option_words(name, front))
        return text


class InvalidInputError(CrewbookError, ValueError):
    """A file or value breaks the rules; `problems` lists every defect found."""

    def __init__(self, message: str, problems: Sequence[Problem] = ()) -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        errors = [p for p in self.problems if p.severity == "error"]
        if errors:
            shown = "\n".join(f"  {p}" for p in errors[:50])
            more = f"\n  … and {len(errors) - 50} more" if len(errors) > 50 else ""
            count = plural(len(errors), "problem")
            message = f"{message} ({count}):\n{shown}{more}"
        super().__init__(message)

    @property
    def codes(self) -> list[str]:
        """The codes of the error problems, in order (handy in tests and scripts)."""
        return [p.code for p in self.problems if p.severity == "error"]

    def _repr_html_(self) -> str:
        head = html.escape(self.message.splitlines()[0])
        return f"<div><b>{type(self).__name__}</b>: {head}{problems_html(self.problems)}</div>"


class SchemaError(InvalidInputError):
    """A schema.yaml breaks SPEC A3, A4 or A7."""


class ConfigError(InvalidInputError):
    """`_codev/config.yaml` or a change's `change.yaml` is invalid."""


class PipelineError(InvalidInputError):
    """A pipeline file breaks SPEC B."""


class LedgerError(InvalidInputError):
    """A ledger file holds lines that are not valid events."""


class DeliveryError(InvalidInputError):
    """A role catalogue, a project's delivery overrides, a task file or a review policy
    breaks SPEC C."""


class RoutingError(InvalidInputError):
    """A preset, profile or task-classes file, or a classification, breaks the rules."""


class CrewError(InvalidInputError):
    """A crew or autonomous loop's settings (goal, scope, bar), its `_codev/crew.yaml`, a
    report's payload or the persisted state break SPEC D1-D6."""


class CompareError(InvalidInputError):
    """Two inputs cannot be compared: files of different kinds, or a file that holds no
    design crewbook compares (schema, pipeline, routing profile, ledger)."""


class SimulationError(InvalidInputError):
    """A policy file (``policy.yaml``), a policy or the settings of a simulation or sweep."""


class UnsafePathError(CrewbookError, ValueError):
    """A path read from a file would leave the folder it must stay in."""


class UsageError(CrewbookError, ValueError, TypeError):
    """A function was called with arguments, or in a state, it cannot take: the message
    says which values it accepts."""


class NotFoundError(CrewbookError, LookupError):
    """Something named does not exist."""


class ProjectNotFoundError(NotFoundError, FileNotFoundError):
    """No folder holding `_codev/` was found."""


class ChangeNotFoundError(NotFoundError, FileNotFoundError):
    """A change folder does not exist."""


class SchemaNotFoundError(NotFoundError, KeyError):
    """No schema of that name, in the project or built in."""


class ArtifactNotFoundError(NotFoundError, KeyError):
    """No artifact of that id in the schema."""


class StageNotFoundError(NotFoundError, KeyError):
    """No stage of that id in the pipeline."""


class PresetNotFoundError(NotFoundError, KeyError):
    """No routing preset of that family, built in or custom."""


class TaskNotFoundError(NotFoundError, KeyError):
    """No task of that id in the change."""


class DotNotFoundError(CrewbookError, FileNotFoundError):
    """The Graphviz `dot` program is needed and was not found."""


class DotError(CrewbookError, RuntimeError):
    """`dot` ran but failed, or took longer than its timeout."""


class SendError(CrewbookError, ConnectionError):
    """An OTLP endpoint refused the spans sent, or could not be reached (after retries)."""


class AlreadyExistsError(CrewbookError, FileExistsError):
    """Refusing to overwrite something that exists."""

    def __init__(self, message: str, path: Path | None = None) -> None:
        super().__init__(message)
        self.path = path


class LoopRefused(CrewbookError, RuntimeError):
    """An engine refused a report: the reason is the message; nothing changed."""

    def __init__(self, message: str, code: str = "refused") -> None:
        super().__init__(message)
        self.code = code


def error_text(exc: BaseException) -> str:
    """The message of `exc`, never its class name first (a key error's key unquoted; a
    bare exception with no message is named by its class)."""
    text = str(getattr(exc, "message", None) or exc).strip()
    if not isinstance(exc, CrewbookError) and isinstance(exc, KeyError) and len(exc.args) == 1:
        text = str(exc.args[0])  # str() would quote the key
    return text or type(exc).__name__


def error_message(exc: BaseException) -> str:
    """What a user reads of `exc` in a display: its message first; the class name only
    in parentheses after an error crewbook did not raise (a bug to report), or alone
    when there is no message."""
    text = error_text(exc)
    if isinstance(exc, CrewbookError) or text == type(exc).__name__:
        return text
    return f"{text} ({type(exc).__name__})"
