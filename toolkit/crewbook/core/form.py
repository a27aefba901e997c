"""The report a Stepper's form holds, as pure data: a `Draft` built from the contract and
turned back into the report the loop expects (no ipywidgets here).

A `Draft` is what the form shows: the ``move`` (one of ``act.moves`` where the loop
names moves), the ``role`` that reports, a ``verdict`` (chosen among ``verdicts``) and
the other ``fields`` (text, lists of text, JSON data). ``hidden`` carries values the form
does not edit through unchanged. A family's `FormSpec` says which verdicts a contract
admits, how to read a report into a draft (`to_draft`), how to build the report from a
draft (`build`) and the happy-path report for a contract (`propose`); `GenericForm`
serves a loop no family describes (its report is the plain mapping
``{"move": ..., "role": ..., "verdict": ..., **fields}``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any, Protocol

from ..errors import InvalidInputError, LoopRefused, did_you_mean
from .loop import Act, Snapshot

__all__ = ["FIELD_KINDS", "Draft", "FormBase", "FormSpec", "GenericForm", "as_mapping",
           "defaults_of", "field_kind", "jsonable", "read_value", "refuse_unknown_keys",
           "show_value"]

#: Values a form field holds: text, several lines of text, a number, a flag, JSON data.
FIELD_KINDS = ("text", "lines", "number", "flag", "json")


@dataclass(frozen=True)
class Draft:
    """A report as the form edits it (see the module docstring)."""

    move: str | None = None
    role: str | None = None
    verdict: str | None = None
    moves: tuple[str, ...] = ()
    verdicts: tuple[str, ...] = ()
    fields: Mapping[str, Any] = field(default_factory=dict)
    hidden: Mapping[str, Any] = field(default_factory=dict)

    def field_kind(self, name: str) -> str:
        """How the form shows field `name` (one of `FIELD_KINDS`)."""
        return field_kind(self.fields.get(name))

    def with_fields(self, **values: Any) -> Draft:
        """A copy with these fields replaced."""
        return replace(self, fields={**self.fields, **values})


def field_kind(value: Any) -> str:
    """The form field kind for `value`."""
    if isinstance(value, bool):
        return "flag"
    if isinstance(value, int | float) or value is None:
        return "number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return "lines"
    return "json"


def show_value(value: Any) -> Any:
    """The value a form control holds for `value` (text for lists, numbers and JSON)."""
    kind = field_kind(value)
    if kind == "flag":
        return bool(value)
    if kind == "number":
        return "" if value is None else str(value)
    if kind == "lines":
        return "\n".join(value)
    if kind == "json":
        return json.dumps(value, indent=1, ensure_ascii=False)
    return value


def read_value(name: str, kind: str, shown: Any) -> Any:
    """The value of field `name` back from its control (`InvalidInputError` when it is
    not what the field holds: a number, JSON data)."""
    if kind == "flag":
        return bool(shown)
    if kind == "lines":
        return tuple(line.strip() for line in str(shown).splitlines() if line.strip())
    if kind == "text":
        return str(shown)
    text = str(shown).strip()
    if kind == "number":
        if not text:
            return None
        try:  # an integer exactly as written (past 2**53 a float would round it)
            return int(text)
        except ValueError:
            pass
        try:
            number = float(text)
        except ValueError:
            raise InvalidInputError(f"field {name!r}: {text!r} is not a number; write digits "
                                    "such as 25 or 0.5, or leave it empty") from None
        return int(number) if number.is_integer() and "." not in text else number
    try:
        return json.loads(text) if text else None
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"field {name!r} is not JSON data (line {exc.lineno}, column "
                                f"{exc.colno}: {exc.msg}); fix it or press Propose") from None


class FormSpec(Protocol):
    """What the Stepper needs to know about one family of loops (its form spec)."""

    def verdicts(self, loop: Any, act: Act) -> tuple[str, ...]:
        """The verdicts the actor of `act` may give (empty: none)."""

    def to_draft(self, loop: Any, act: Act, report: Any) -> Draft:
        """The draft showing `report` (a report object or JSON data) for `act`."""

    def build(self, loop: Any, act: Act, draft: Draft) -> Any:
        """The report `loop.report` takes, from `draft`."""

    def propose(self, loop: Any, act: Act) -> Draft:
        """The happy-path report for `act`, as a draft."""

    def for_move(self, loop: Any, act: Act, move: str) -> Draft | None:
        """The fields of `move` picked in the form (None: the move alone)."""

    def apply(self, loop: Any, act: Act, report: Any) -> Act:
        """Apply `report` to `loop` (a family whose loop keeps its state in files takes
        its lock here)."""

    def restore(self, loop: Any, snapshot: Snapshot[Any]) -> Act:
        """Rewind `loop` to `snapshot` (and keep the rewind where the loop keeps state)."""


class FormBase:
    """The parts of a `FormSpec` most families share: a move's fields unknown, a report
    applied and a snapshot restored on the loop itself. A family's form subclasses it."""

    def for_move(self, loop: Any, act: Act, move: str) -> Draft | None:
        """None: the form shows the move alone."""
        return None

    def apply(self, loop: Any, act: Act, report: Any) -> Act:
        """`loop.report(report)`."""
        following: Act = loop.report(report)
        return following

    def restore(self, loop: Any, snapshot: Snapshot[Any]) -> Act:
        """`loop.restore(snapshot)`."""
        act: Act = loop.restore(snapshot)
        return act


class GenericForm(FormBase):
    """Any loop: the report is ``{"move", "role", "verdict", **fields}`` as a mapping."""

    def verdicts(self, loop: Any, act: Act) -> tuple[str, ...]:
        """Verdicts named in the contract's details (``details["verdicts"]``), if any."""
        found = act.details.get("verdicts", ())
        return tuple(str(v) for v in found) if isinstance(found, list | tuple) else ()

    def to_draft(self, loop: Any, act: Act, report: Any) -> Draft:
        """A mapping (or a dataclass) split into move, role, verdict and fields."""
        data = as_mapping(report)
        return Draft(move=data.pop("move", act.moves[0] if act.moves else None),
                     role=data.pop("role", act.role), verdict=data.pop("verdict", None),
                     moves=act.moves, verdicts=self.verdicts(loop, act), fields=data)

    def build(self, loop: Any, act: Act, draft: Draft) -> Any:
        """The plain mapping (keys left out when empty)."""
        data: dict[str, Any] = {}
        for key in ("move", "role", "verdict"):
            if getattr(draft, key) is not None:
                data[key] = getattr(draft, key)
        return {**data, **draft.fields, **draft.hidden}

    def propose(self, loop: Any, act: Act) -> Draft:
        """The first open move, by the contract's role, with the first verdict."""
        verdicts = self.verdicts(loop, act)
        return Draft(move=act.moves[0] if act.moves else None, role=act.role,
                     verdict=verdicts[0] if verdicts else None, moves=act.moves,
                     verdicts=verdicts)


def refuse_unknown_keys(data: Mapping[str, object], allowed: Iterable[str], what: str) -> None:
    """`LoopRefused` (``bad_report``) naming the first key of `data` that `what` (``"a crew
    report"``...) has not, with a did-you-mean or the keys it has; the one guard every
    family's codec uses."""
    keys = sorted(allowed)
    unknown = sorted(set(data) - set(keys))
    if unknown:
        raise LoopRefused(f"{what} has no key {unknown[0]!r}"
                          + (did_you_mean(unknown[0], keys) or f"; keys: {', '.join(keys)}"),
                          code="bad_report")


def defaults_of(report: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if is_dataclass(report) and not isinstance(report, type):
        from dataclasses import MISSING

        for f in fields(report):
            if f.default is not MISSING:
                out[f.name] = f.default
    return out


def jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def as_mapping(report: Any) -> dict[str, Any]:
    """A report's fields as a shallow dict (dataclasses keep nested objects as they are)."""
    if report is None:
        return {}
    if isinstance(report, Mapping):
        return dict(report)
    if is_dataclass(report) and not isinstance(report, type):
        return {f.name: getattr(report, f.name) for f in fields(report)}
    raise InvalidInputError(f"cannot show a {type(report).__name__} in the report form: give "
                            "a mapping (JSON data) or the loop's report dataclass")
