"""The autonomous loop (SPEC D6): Plan → Implementation → Recette → Delivery, one phase
per step, on the `crewbook.core` Loop protocol (`AutonomousLoop`, `LoopStep`).

Its persisted API (``loop_init``, ``loop_step``, ``open_autonomous``: `api.py`) shares
the project's `_codev/crew/` folder and lock with the crew loop, and uses the crew's bar
runner; its state and phases are `model.py`; ``family.py`` describes the family to the
front ends.
"""

from __future__ import annotations

from .api import loop_init, loop_step, open_autonomous
from .engine import AutonomousLoop, LoopStep
from .model import LoopState

__all__ = ["AutonomousLoop", "LoopState", "LoopStep", "loop_init", "loop_step",
           "open_autonomous"]
