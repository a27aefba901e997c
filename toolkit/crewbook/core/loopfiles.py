"""Where a project's persisted loops live, and how they take turns on it: the folder
``_codev/crew/`` (each loop's state file and ledger, its prompts), its one lock, the run
ids, the prompt files, and the longest summary an act carries.

Every family that keeps its loop in the project (the CLI, the MCP server and a notebook
take turns on it) uses these, so no family borrows another's: a family names its own
state and ledger files under `LOOPS_DIR`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeVar

from pydantic import BaseModel

from ..models import pydantic_problems
from .atomic import write_atomic
from .commit import StateStore, taking_turn
from .paths import inside

if TYPE_CHECKING:
    from ..artifacts.project import Project

M = TypeVar("M", bound=BaseModel)

#: The folder of every persisted loop, relative to the project root.
LOOPS_DIR: Final = "_codev/crew"
#: The folder of the prompt files contracts point to (`Act.prompt_path`).
PROMPTS_DIR: Final = f"{LOOPS_DIR}/prompts"
#: Longest `summary` a report or step may carry (characters): it rides along in later
#: steps.
MAX_SUMMARY_CHARS: Final = 4000


def state_store(proj: Project, model: type[M], state: str, ledger: str, what: str,
                start: str) -> StateStore[M]:
    """The store of a loop's state file and ledger (paths relative to the project) under
    the loops' one lock; `what` names the loop and `start` how to start one, for the
    message when there is none."""
    return StateStore(proj.root / state, proj.root / ledger, proj.root / LOOPS_DIR / ".lock",
                      model, shown=state, problems=pydantic_problems,
                      missing=f"no {what} in this project ({state} does not exist); start one "
                              f"with {start}")


def next_run_id(ledger_path: Path, prefix: str) -> str:
    """`crew-1`, `crew-2`…: one more than the runs the ledger file already holds (read
    line by line: memory stays bounded on a big ledger)."""
    runs: set[str] = set()
    if ledger_path.is_file():
        with open(ledger_path, "rb") as handle:
            for line in handle:
                if b'"run"' not in line:
                    continue
                try:
                    run = json.loads(line).get("run")
                except (ValueError, AttributeError):
                    continue  # a cut or foreign line names no run; the reader reports it
                if isinstance(run, str):
                    runs.add(run)
    n = len(runs) + 1
    while f"{prefix}-{n}" in runs:
        n += 1
    return f"{prefix}-{n}"


@contextmanager
def project_turn(project: Project) -> Iterator[None]:
    """One caller at a time acts on a project's loops (a lock file in `LOOPS_DIR`): two
    agents reporting at once take turns instead of overwriting each other's state."""
    folder = project.root / LOOPS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    with taking_turn(folder / ".lock"):
        yield


def write_prompt(root: Path, rel: str, text: str) -> bool:
    """Write `{"prompt": text}` at `root/rel` unless it already holds exactly that.

    Returns True when the file was written (False: it was already there, untouched).
    """
    path = inside(root, rel, "prompt path")  # never a file outside the project
    data = json.dumps({"prompt": text}, ensure_ascii=False, indent=2) + "\n"
    if path.is_file() and path.read_text("utf-8", errors="replace") == data:
        return False
    write_atomic(path, data)
    return True


__all__ = ["LOOPS_DIR", "MAX_SUMMARY_CHARS", "PROMPTS_DIR", "next_run_id", "project_turn",
           "state_store", "write_prompt"]
