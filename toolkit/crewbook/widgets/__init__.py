"""ipywidgets front ends: step a loop, explore a schema, explore a ledger (see
``docs/widgets.md``). The only package that imports ipywidgets; nothing in the core
imports it (``loop.stepper()`` imports it when called).
"""

from __future__ import annotations

from .ledger_explorer import LedgerExplorer
from .proposals import Draft, Scripted, happy_path, register_adapter
from .schema_explorer import SchemaExplorer
from .stepper import Stepper
from .view import DrawingView

__all__ = [
    "Draft",
    "DrawingView",
    "LedgerExplorer",
    "SchemaExplorer",
    "Scripted",
    "Stepper",
    "happy_path",
    "register_adapter",
]
