"""The autonomous loop (SPEC D6): Plan → Implementation → Recette → Delivery, one phase
per step, on the `crewbook.core` Loop protocol (`AutonomousLoop`, `LoopStep`).

Its persisted API (``loop_init``, ``loop_step``, ``open_autonomous``: `api.py`) keeps
its state in the folder, and under the lock, of every persisted loop
(`crewbook.core.loopfiles`), and runs the recette with `crewbook.core.bar`; its state and
phases are `model.py`, its MCP tools `tools.py`; ``family.py`` describes the family to
the front ends. It imports no other family.
"""

from __future__ import annotations

from .api import loop_init, loop_step, open_autonomous
from .engine import AutonomousLoop, LoopStep
from .model import LoopState

__all__ = ["AutonomousLoop", "LoopState", "LoopStep", "loop_init", "loop_step",
           "open_autonomous"]
