"""The crew loop (SPEC D1-D5), on the `crewbook.Loop` protocol (the autonomous loop, D6,
is `crewbook.autonomous`).

* `crew_init(goal, scope=, max_rounds=, max_epics=, bar=, force=)`, `crew_step(document=)`,
  `crew_report(role, verdict, summary, payload= | payload_path=)`, `crew_status(full=)` —
  functions on a project's persisted loop (`_codev/crew/`), shared by the CLI
  (`crewbook crew …`), the MCP server (`crewbook mcp`) and notebooks;
* `open_crew()` → `CrewLoop`, steppable cell by cell, drawable (`loop.graph()`);
* `run_command` — the bar runner both loops use (own process group, timeout killing
  the whole group, bounded output, cwd confined to the project).

See `docs/crew.md`. Importing this package is light (no pandas, no subprocess started).
"""

from __future__ import annotations

from ..core.bar import BarRun, run_command
from .api import (
    crew_init,
    crew_report,
    crew_status,
    crew_step,
    open_crew,
)
from .backlog import STACK_MODELS, Backlog, Epic, Story
from .checks import load_payload
from .engine import CrewLoop, CrewReport
from .model import (
    CREW_DIR,
    CREW_FILE,
    BarCommand,
    BarFacts,
    CrewConfig,
    CrewFile,
    CrewState,
)

__all__ = [
    "CREW_DIR",
    "CREW_FILE",
    "STACK_MODELS",
    "Backlog",
    "BarCommand",
    "BarFacts",
    "BarRun",
    "CrewConfig",
    "CrewFile",
    "CrewLoop",
    "CrewReport",
    "CrewState",
    "Epic",
    "Story",
    "crew_init",
    "crew_report",
    "crew_status",
    "crew_step",
    "load_payload",
    "open_crew",
    "run_command",
]
