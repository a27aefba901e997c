"""The registry of loop families: family name → the dotted path of its ``FAMILY``.

Front ends (`crewbook.widgets`, `crewbook.simulate`, `crewbook step FAMILY`) and the
ledger's conformance rules ask here instead of importing a family package. Nothing
registers at import time and nothing is imported until a family is asked for, so
``import crewbook`` stays light. Adding a family is its folder plus one line below
(or a `register` call, for a family that lives outside crewbook).

Family names and the ledger kinds (``loop`` values) of their engines:

- ``pipeline``: ``pipeline`` (a role pipeline of stages, SPEC B);
- ``delivery``: ``standard`` and ``coordinator`` (delivery roles, SPEC C);
- ``crew``: ``crew`` (the crew loop, SPEC D1–D5);
- ``autonomous``: ``autonomous`` (the autonomous loop, SPEC D6).
"""

from __future__ import annotations

from typing import Any, Final, TypeAlias

from .core.family import LoopFamily, resolve
from .errors import NotFoundError, UsageError, did_you_mean

__all__ = ["FAMILIES", "families", "family", "family_of", "family_of_kind", "register",
           "unregister"]

#: Family name → ``"module:attribute"`` of its `LoopFamily`.
FAMILIES: Final[dict[str, str]] = {
    "pipeline": "crewbook.pipeline.family:FAMILY",
    "delivery": "crewbook.delivery.family:FAMILY",
    "crew": "crewbook.crew.family:FAMILY",
    "autonomous": "crewbook.autonomous.family:FAMILY",
}

#: A registered family, whatever its loops' state and report types.
AnyFamily: TypeAlias = LoopFamily[Any, Any]

_LOADED: dict[str, AnyFamily] = {}
_BY_KIND: dict[str, AnyFamily | None] = {}


def register(name: str, dotted: str) -> None:
    """Add family `name` at ``"module:attribute"`` (a plug-in, or a test's toy family);
    it is imported when first asked for. `UsageError` when the name is taken."""
    if name in FAMILIES:
        raise UsageError(f"a loop family {name!r} is registered already ({FAMILIES[name]}); "
                         "pick another name, or unregister it first")
    FAMILIES[name] = dotted
    _BY_KIND.clear()  # a kind no family wrote so far may be this family's


def unregister(name: str) -> None:
    """Remove family `name` (one `register` added); nothing when it is not registered."""
    FAMILIES.pop(name, None)
    _LOADED.pop(name, None)
    _BY_KIND.clear()


def family(name: str) -> AnyFamily:
    """The family called `name` (imported on first use)."""
    found = _LOADED.get(name)
    if found is None:
        if name not in FAMILIES:
            raise NotFoundError(f"no loop family {name!r}{did_you_mean(name, FAMILIES)}; "
                                f"families: {', '.join(FAMILIES)}")
        loaded = resolve(FAMILIES[name])
        if not isinstance(loaded, LoopFamily):
            raise UsageError(f"{FAMILIES[name]} is a {type(loaded).__name__}, not a "
                             f"LoopFamily; the registry names each family's FAMILY")
        found = _LOADED[name] = loaded
    return found


def families() -> list[AnyFamily]:
    """Every registered family, in registry order."""
    return [family(name) for name in FAMILIES]


def family_of_kind(kind: str) -> AnyFamily | None:
    """The family whose engines write ledger kind `kind` (a loop's ``kind``), or None."""
    if kind in _BY_KIND:
        return _BY_KIND[kind]
    found = next((f for f in families() if kind in f.kinds), None)
    _BY_KIND[kind] = found
    return found


def family_of(loop: Any) -> AnyFamily | None:
    """The family of `loop` (by its ``kind``), or None for a loop no family describes."""
    return family_of_kind(str(getattr(loop, "kind", "")))
