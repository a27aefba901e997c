"""The prompt of an autonomous-loop phase (`loop_prompt`), written to the contract's
``prompt_path`` by `crewbook.core.loopfiles.write_prompt`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.acts import route_line
from ..core.loopfiles import write_prompt

if TYPE_CHECKING:
    from pathlib import Path

    from ..core.loop import Act


def loop_prompt(act: Act) -> str:
    """The prompt of an autonomous-loop phase: the goal, the phase, what it expects, the
    route, and the last recette (when there was one)."""
    d = act.details
    lines = [f"# Autonomous loop · step {act.act} · {act.stage}", "", f"Goal: {d.get('goal')}",
             f"Phase: {act.stage} (acting as {act.role}), recette attempt {act.attempt}.",
             f"Route (a suggestion): {route_line(dict(act.route) if act.route else None)}",
             "", f"Expected: {act.expects}"]
    last = d.get("last_test")
    if last:
        lines += ["", f"Last recette: {'pass' if last.get('exit_code') == 0 else 'fail'} "
                      f"(exit {last.get('exit_code')})", "```",
                  str(last.get("tail") or "").rstrip(), "```"]
    if act.stage == "recette" and d.get("default_test_command"):
        lines.append(f"The recette runs: {d['default_test_command']}")
    lines += ["", "Then call loop_step(summary=...) with one sentence on what you did."]
    return "\n".join(lines) + "\n"


def write_loop_prompt(root: Path, act: Act) -> None:
    """Write `act`'s prompt at its ``prompt_path`` under the project folder `root`
    (nothing for a finished loop's contract, which has none)."""
    if act.prompt_path is not None:
        write_prompt(root, act.prompt_path, loop_prompt(act))


__all__ = ["loop_prompt", "write_loop_prompt"]
