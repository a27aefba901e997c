"""The autonomous loop (SPEC D6): Plan → Implementation → Recette → Delivery, one phase
per step, on the `crewbook.core` Loop protocol (`AutonomousLoop`, `LoopStep`).

Its persisted API (``loop_init``, ``loop_step``, ``open_autonomous``) lives beside the
crew loop's in `crewbook.crew` (both share the project's `_codev/crew/` folder, its lock
and the bar runner); ``family.py`` describes the family to the front ends.
"""

from __future__ import annotations

from .engine import AutonomousLoop, LoopStep

__all__ = ["AutonomousLoop", "LoopStep"]
