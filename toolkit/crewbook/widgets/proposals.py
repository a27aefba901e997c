"""What the Stepper's form proposes, and for which loop: the form spec of the loop's
family, asked of the registry (`crewbook.families`), and the policies.

The form spec (`crewbook.core.form.FormSpec`) of a loop is, in order: one registered for
its ``kind`` with `register_adapter` (a loop of your own), its family's ``form``, else
`GenericForm` (the report is the plain mapping ``{"move", "role", "verdict", **fields}``).

A *policy* proposes the next report: `happy_path` (the form spec's proposal), or
`Scripted(reports)`, which proposes ``reports[loop.acts]`` (so a rewind replays the
script from the restored act) and falls back to the happy path after its end. Any
callable ``(loop, act) -> report | Draft | None`` is a policy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ..core.family import Declined
from ..core.form import (
    FIELD_KINDS,
    Draft,
    FormSpec,
    GenericForm,
    field_kind,
    read_value,
    show_value,
)
from ..core.loop import Act
from ..families import family_of

__all__ = ["FIELD_KINDS", "Draft", "FormSpec", "GenericForm", "Policy", "Scripted",
           "adapter_for", "draft_for_move", "field_kind", "happy_path", "propose", "read_value",
           "register_adapter", "show_value"]

#: Form specs registered by hand, by loop kind (they win over a family's).
_REGISTERED: dict[str, FormSpec] = {}


def register_adapter(kind: str, adapter: FormSpec) -> None:
    """Use the form spec `adapter` for loops whose ``kind`` is `kind`."""
    _REGISTERED[kind] = adapter


def adapter_for(loop: Any) -> FormSpec:
    """The form spec of `loop` (see the module docstring)."""
    kind = str(getattr(loop, "kind", ""))
    found = _REGISTERED.get(kind)
    if found is not None:
        return found
    family = family_of(loop)
    if family is not None and not isinstance(family.form, Declined):
        return family.form
    return GenericForm()


Policy = Callable[[Any, Act], Any]


def happy_path(loop: Any, act: Act) -> Draft:
    """The form spec's proposal: the report that moves the loop forward."""
    return adapter_for(loop).propose(loop, act)


class Scripted:
    """Propose ``reports[loop.acts]``, then the happy path once the script has run out."""

    def __init__(self, reports: Sequence[Any]) -> None:
        self.reports = list(reports)

    def __call__(self, loop: Any, act: Act) -> Any:
        at = int(getattr(loop, "acts", 0))
        if at < len(self.reports):
            return self.reports[at]
        return happy_path(loop, act)

    def __repr__(self) -> str:
        return f"<Scripted {len(self.reports)} reports>"


def propose(loop: Any, act: Act, policy: Policy | None = None) -> Draft:
    """The draft `policy` (default `happy_path`) proposes for `act`."""
    adapter = adapter_for(loop)
    proposal = (policy or happy_path)(loop, act)
    if isinstance(proposal, Draft):
        # A form that names no move (the pipeline's: the stage decides) gets no move
        # choices: the contract's moves are then transition names, not something to pick.
        moves = proposal.moves or (act.moves if proposal.move is not None else ())
        return replace(proposal, moves=moves,
                       verdicts=proposal.verdicts or adapter.verdicts(loop, act))
    if proposal is None:
        return adapter.propose(loop, act)
    return adapter.to_draft(loop, act, proposal)


def draft_for_move(loop: Any, act: Act, move: str, policy: Policy | None = None) -> Draft:
    """The draft for `move` picked in the form: the policy's proposal when it is that
    move, else the form spec's fields of that move (``for_move(loop, act, move)``, when
    the spec has it), else the move alone with no fields. The previous move's fields are
    never carried over: a ``plan``'s ``criteria`` would be refused by a ``delegate``."""
    adapter = adapter_for(loop)
    proposed = propose(loop, act, policy)
    if proposed.move == move:
        return proposed
    own = adapter.for_move(loop, act, move)
    if own is not None:  # the spec knows the move: its verdicts too (a question has none)
        return replace(own, move=move, moves=proposed.moves or act.moves)
    return Draft(move=move, role=proposed.role, verdict=proposed.verdict,
                 moves=proposed.moves or act.moves, verdicts=proposed.verdicts)
