"""`quick_init`: frozen dataclasses filled in one go, a fast path behind one seam.

Engines build several frozen dataclasses per act (a trail step, a wait, a verdict, the
transition); the ``__init__`` `dataclasses` generates sets each field through
``object.__setattr__``. `quick_init` writes, once per class and with ``exec`` (as
`dataclasses` itself writes ``__init__``), one that fills the instance dictionary at
once: about 2x faster than a generic ``__init__`` for the same objects.
"""

from __future__ import annotations

from dataclasses import MISSING, fields
from typing import Any


def quick_init(cls: type[Any]) -> None:
    """Give frozen dataclass `cls` an ``__init__`` that fills its ``__dict__`` in one go.

    A frozen dataclass's generated ``__init__`` sets each field through
    ``object.__setattr__``; engines build several of these per act (a trail step, a
    wait, a verdict, the transition), so that is a fair share of a step. The new
    ``__init__`` takes the same arguments with the same defaults, and the objects are
    the same (fields, equality, hash, repr, copies): only the filling is faster. For
    classes whose fields all take plain defaults (no ``default_factory``, no
    ``__post_init__``, every field in ``__init__``), else it leaves `cls` as it is.
    """
    params = fields(cls)
    if (hasattr(cls, "__post_init__") or "__slots__" in cls.__dict__
            or any(f.default_factory is not MISSING or not f.init or f.kw_only
                   for f in params)):
        return
    names = [f.name for f in params]
    space: dict[str, Any] = {f"_d_{f.name}": f.default for f in params
                             if f.default is not MISSING}
    args = ", ".join(n if f"_d_{n}" not in space else f"{n}=_d_{n}" for n in names)
    body = ", ".join(f"{n!r}: {n}" for n in names)
    exec(f"def __init__(self, {args}):\n    self.__dict__.update({{{body}}})\n", space)
    init = space["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init


__all__ = ["quick_init"]
