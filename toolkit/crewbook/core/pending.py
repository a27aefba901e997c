"""The contract `Loop.report` returns, built the first time anything reads it (a fast
path behind one seam: `pending_act` makes one, `resolve` builds it).

Building a contract reads files and routes (the backlog, routing profiles) and makes
texts; a caller that steps a loop without reading the contract (a benchmark, a
simulation, a replay) never pays for it. The loop keeps a weak reference to the pending
act it returned and resolves it before its state changes again (`Loop._settle`), so the
act always shows the moment it was returned for.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Final

from .acts import Act

if TYPE_CHECKING:
    from .loop import Loop

_RESOLVING: Final = threading.RLock()
_new_object: Final = object.__new__
_set_attribute: Final = object.__setattr__


class PendingAct(Act):
    """An `Act` whose fields are its loop's `contract()`, built on the first read (a
    field, ``==``, ``repr``, ``hash``, a copy...): its fields are then copied in, and the
    object becomes a plain `Act` for good."""

    def __init__(self, loop: Loop[Any, Any]) -> None:
        object.__setattr__(self, "_loop", loop)

    def _resolve(self) -> None:
        with _RESOLVING:  # two threads reading one pending act build it once
            data = object.__getattribute__(self, "__dict__")
            loop = data.get("_loop")
            if loop is None:
                return
            built = loop.contract()  # raises? still pending: the next read tries again
            del data["_loop"]
            data.update(built.__dict__)
            object.__setattr__(self, "__class__", type(built))

    def __getattribute__(self, name: str) -> Any:
        PendingAct._resolve(self)
        return object.__getattribute__(self, name)

    def __eq__(self, other: object) -> bool:
        PendingAct._resolve(self)
        return bool(self == other)

    def __hash__(self) -> int:
        PendingAct._resolve(self)
        return hash(self)

    def __repr__(self) -> str:
        PendingAct._resolve(self)
        return repr(self)


def pending_act(loop: Loop[Any, Any]) -> PendingAct:
    """A new pending contract of `loop` (`PendingAct(loop)`, without the class call)."""
    pending = _new_object(PendingAct)
    _set_attribute(pending, "_loop", loop)
    return pending


def resolve(pending: PendingAct) -> None:
    """Build `pending`'s contract now (nothing when it is built already)."""
    PendingAct._resolve(pending)


__all__ = ["PendingAct", "pending_act", "resolve"]
