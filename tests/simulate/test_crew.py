"""The crew loop (issue 10) is simulated like any loop: a callable policy plays its roles,
and its ledger is the standard one."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pandas as pd

import crewbook
from crewbook.core.loop import Act
from crewbook.crew import CrewReport, CrewState
from crewbook.crew.engine import CrewLoop
from crewbook.crew.model import BarCommand, CrewConfig
from crewbook.ledger import run_outcomes
from crewbook.simulate import simulate


def crew_loop(root: str) -> CrewLoop:
    config = CrewConfig(goal="simulate", max_rounds=12,
                        bar={"test": BarCommand(command="true")})
    state = CrewState(run="sim", config=config, epic="add-csv-export", story="Story 1")
    return CrewLoop(state, project=crewbook.Project(root), run_bar=False)


def crew_policy(contract: Act, rng: Any) -> CrewReport:
    role = str(contract.role)
    if role == "qa":
        return CrewReport("qa", "no-go" if rng.random() < 0.4 else "go", "qa checked")
    return CrewReport(role, "done", f"{role} done")


def test_a_crew_loop_is_simulated(tmp_path: Path) -> None:
    root = crewbook.example_project(dest=tmp_path / "tour")
    lines = ["# Tasks", ""]
    for s in (1, 2):
        lines += [f"## Story {s}", "", f"- [ ] {s}.1 First", f"- [ ] {s}.2 Second", ""]
    (root / "_codev" / "changes" / "add-csv-export" / "tasks.md").write_text("\n".join(lines))
    factory = functools.partial(crew_loop, str(root))
    outcomes, ledger = simulate(factory, crew_policy, n=20, seed=1, ledger=True)
    assert set(outcomes["finished_reason"].astype(str)) <= {"scope_covered", "rounds_exhausted"}
    assert "scope_covered" in set(outcomes["finished_reason"].astype(str))
    assert (outcomes["attempts.qa"] >= 1).all()
    per_run = run_outcomes(ledger)
    names = [f"sim-{r:05d}" for r in outcomes["run"]]
    assert list(per_run.loc[names, "finished_reason"].astype(str)) == \
        list(outcomes["finished_reason"].astype(str))
    again = simulate(factory, crew_policy, n=20, seed=1)
    pd.testing.assert_frame_equal(again, outcomes)
