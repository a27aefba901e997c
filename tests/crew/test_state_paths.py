"""State fields that become paths (`run`, `epic`) are checked; state files are capped and
must be regular files: a hostile `state.json` gives a clear error and writes nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from crewbook.autonomous.api import loop_init, open_autonomous
from crewbook.core.commit import MAX_STATE_BYTES
from crewbook.crew.api import crew_init, crew_step, open_crew
from crewbook.errors import CrewbookError, CrewError, InvalidInputError

from .conftest import GREEN

STATE = Path("_codev/crew/state.json")


def _edit(root: Path, name: str = "state.json", **changes: Any) -> None:
    path = root / "_codev/crew" / name
    data = json.loads(path.read_text("utf-8"))
    data.update(changes)
    path.write_text(json.dumps(data), "utf-8")


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize(("key", "value"), [
    ("run", "../../../../outside/pwn"), ("run", "x" * 300), ("run", "a/b"), ("run", ".hidden"),
    ("epic", "../../../outside"), ("epic", "/etc"), ("epic", "x" * 300), ("epic", "a\x00b"),
])
def test_a_state_field_that_would_leave_its_folder_is_refused(project: Path, key: str,
                                                              value: str, cli: Any) -> None:
    outside = project.parent / "outside"
    (outside / "tasks.md").parent.mkdir(parents=True)
    (outside / "change.yaml").write_text("schema: lite\n")
    (outside / "tasks.md").write_text("# Tasks\n\n## Secret\n\n- [ ] 1.1 secret task\n")
    crew_init("ship it", bar={"test": GREEN}, project=project)
    _edit(project, **{key: value})
    before = _files(project.parent)
    with pytest.raises(CrewError) as refused:
        crew_step(project=project)
    assert f"{key} " in str(refused.value)
    assert "cannot name a file" in str(refused.value)
    result = cli("crew", "step", "--project", str(project))
    assert result.code == 1
    assert "Traceback" not in result.err
    assert "cannot name a file" in result.err
    assert _files(project.parent) == before  # nothing written, inside or out


def test_an_autonomous_run_that_would_leave_its_folder_is_refused(project: Path) -> None:
    loop_init("ship it", project=project)
    _edit(project, "loop.json", run="../../x")
    with pytest.raises(CrewError) as refused:
        open_autonomous(project)
    assert "cannot name a file" in str(refused.value)


def test_a_state_file_over_the_cap_is_refused_without_reading_it(project: Path) -> None:
    crew_init("ship it", bar={"test": GREEN}, project=project)
    with open(project / STATE, "ab") as handle:
        handle.truncate(MAX_STATE_BYTES + 1)
    with pytest.raises(InvalidInputError) as refused:
        open_crew(project)
    assert refused.value.codes == ["file_too_large"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_state_file_that_is_a_fifo_is_named_so(project: Path) -> None:
    crew_init("ship it", bar={"test": GREEN}, project=project)
    (project / STATE).unlink()
    os.mkfifo(project / STATE)
    with pytest.raises(CrewbookError) as refused:
        open_crew(project)
    assert "FIFO" in str(refused.value)


@pytest.mark.parametrize("pending", [
    b"not json", b"[]", b'{"offset": -5, "first": {}, "state": {}}',
    b'{"offset": 0, "first": {"run": "crew-9"}, "state": {"run": "x"}}',
])
def test_a_foreign_pending_file_is_dropped(project: Path, pending: bytes) -> None:
    crew_init("ship it", bar={"test": GREEN}, project=project)
    before = (project / STATE).read_bytes()
    (project / "_codev/crew/state.json.pending").write_bytes(pending)
    loop = open_crew(project)
    assert loop.view.acts == 0
    assert (project / STATE).read_bytes() == before
    assert not (project / "_codev/crew/state.json.pending").exists()
