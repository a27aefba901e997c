"""One act, one commit: kill -9 at random instants and at the instant the ledger grows,
and concurrent callers (notebook objects, the CLI, the MCP server) on one crew loop.

Every check reads the files afterwards: the acts the state's trail holds must be exactly
the acts the ledger holds (no act lost, none logged twice), every act a caller was told
was accepted must be there, and `crewbook validate _codev/crew --rules` must accept it.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from crewbook.autonomous.api import loop_init
from crewbook.crew.api import crew_init, crew_report, crew_step, open_crew
from crewbook.crew.engine import CrewReport
from crewbook.errors import LoopRefused

from .conftest import GREEN

pytestmark = pytest.mark.skipif(os.name != "posix", reason="kill -9 and fork are POSIX")

CREW = Path("_codev/crew")

#: The child: acts on the loop for ever (qa says no-go, so the loop never finishes),
#: printing "ack N" once act N was accepted. MODE chooses where it kills itself.
CHILD = textwrap.dedent("""
    import os, signal, sys
    from crewbook.ledger.appendfile import AppendFile
    root, loop, mode, nth = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    original = AppendFile.write  # where every append's lines reach the file, in one write
    calls = [0]

    def write(self, data, numbered):
        calls[0] += 1
        if mode == "before-append" and calls[0] == nth:
            os.kill(os.getpid(), signal.SIGKILL)
        original(self, data, numbered)
        if mode == "after-append" and calls[0] == nth:
            os.kill(os.getpid(), signal.SIGKILL)

    AppendFile.write = write
    from crewbook.autonomous.api import loop_step, open_autonomous
    from crewbook.crew.api import crew_report, crew_step
    print("ready", flush=True)
    if loop == "crew":
        while True:
            act = crew_step(project=root)
            verdict = "no-go" if act.role == "qa" else "done"
            crew_report(act.role, verdict, f"act {act.act}", project=root, act=act.act)
            print("ack", act.act, flush=True)
    else:
        while True:
            n = open_autonomous(root).contract().act
            loop_step("exit 1", project=root, act=n)
            print("ack", n, flush=True)
""")


def _events(root: Path, name: str) -> list[dict[str, Any]]:
    lines = (root / CREW / name).read_bytes().splitlines()
    out = []
    for line in lines:
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a line cut by the kill: readers leave it out too
    return out


def _crew_acts(root: Path) -> list[int]:
    return [e["payload"]["act"] for e in _events(root, "crew.jsonl")
            if e["kind"] in ("report", "verdict")]


def _loop_acts(root: Path) -> list[int]:
    return [e["payload"]["act"] for e in _events(root, "loop.jsonl")
            if e["kind"] in ("plan", "report", "verdict")]


def _check_agree(root: Path, loop: str, acked: set[int], cli: Any) -> int:
    """State and ledger agree, nothing acknowledged is missing, nothing is doubled."""
    if loop == "crew":
        state = open_crew(root).view  # opening settles a pending commit
        logged = _crew_acts(root)
        in_state = [r.act for r in state.trail]
        assert in_state == list(range(1, state.acts + 1))
        total = state.acts
    else:
        from crewbook.autonomous.api import open_autonomous

        total = open_autonomous(root).view.steps
        logged = _loop_acts(root)
    dup = [n for n, k in Counter(logged).items() if k > 1]
    assert dup == [], f"acts logged twice: {dup}"
    assert sorted(logged) == list(range(1, total + 1)), (logged, total)
    assert acked <= set(logged), f"acknowledged but lost: {sorted(acked - set(logged))}"
    assert not (root / CREW / f"{'state' if loop == 'crew' else 'loop'}.json.pending").exists()
    result = cli("validate", str(root / CREW), "--rules")
    assert result.code == 0, result.out + result.err
    return total


def _start(root: Path, loop: str) -> None:
    if loop == "crew":
        crew_init("ship it", scope="epic", max_rounds=0, bar={"test": GREEN}, project=root)
    else:
        loop_init("ship it", project=root, max_recettes=0)


def _child(root: Path, loop: str, mode: str, nth: int) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", CHILD, str(root), loop, mode, str(nth)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _acks(out: str) -> set[int]:
    return {int(line.split()[1]) for line in out.splitlines() if line.startswith("ack ")}


@pytest.mark.parametrize("loop", ["crew", "autonomous"])
def test_kill_9_at_the_instant_the_ledger_grows(project: Path, loop: str, cli: Any) -> None:
    """Killed right before and right after each of the first appends of a process: the
    next process settles the commit, and state and ledger agree every time."""
    _start(project, loop)
    acked: set[int] = set()
    totals = []
    for mode in ("after-append", "before-append", "after-append"):
        for nth in (1, 2, 3):
            proc = _child(project, loop, mode, nth)
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == -signal.SIGKILL, err
            acked |= _acks(out)
            totals.append(_check_agree(project, loop, acked, cli))
    # every "after-append" kill left an act in the ledger that the next open kept
    assert totals[-1] > totals[0] >= 1
    assert acked


@pytest.mark.parametrize("loop", ["crew", "autonomous"])
def test_kill_9_at_random_instants(project: Path, loop: str, cli: Any) -> None:
    """Killed from outside at seeded random instants: 0 acts lost or doubled."""
    _start(project, loop)
    rng = random.Random(23)
    acked: set[int] = set()
    for _ in range(6):
        proc = _child(project, loop, "none", 0)
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n"
        time.sleep(rng.uniform(0.3, 2.0))
        proc.kill()
        out, _err = proc.communicate(timeout=60)
        acked |= _acks(out)
        _check_agree(project, loop, acked, cli)
    assert acked, "no act was accepted at all: the children never got going"


def test_a_retry_with_its_act_id_is_not_logged_twice(project: Path) -> None:
    crew_init("ship it", bar={"test": GREEN}, project=project)
    first = crew_step(project=project)
    nxt = crew_report("analyst", "done", "framed", project=project, act=first.act)
    again = crew_report("analyst", "done", "framed", project=project, act=first.act)
    assert again.act == nxt.act == 2
    assert _crew_acts(project) == [1]
    with pytest.raises(LoopRefused) as refused:
        crew_report("analyst", "done", "another text", project=project, act=first.act)
    assert refused.value.code == "stale"
    with pytest.raises(LoopRefused):
        crew_report("developer", "done", "built", project=project, act=5)
    assert _crew_acts(project) == [1]


def test_a_notebook_loop_takes_the_lock_and_refuses_when_stale(project: Path) -> None:
    crew_init("ship it", bar={"test": GREEN}, project=project)
    notebook = open_crew(project)
    crew_report("analyst", "done", "framed by the CLI", project=project)
    with pytest.raises(LoopRefused) as refused:
        notebook.report(CrewReport("analyst", "done", "framed by the notebook"))
    assert refused.value.code == "stale"
    assert _crew_acts(project) == [1]
    from crewbook.core.commit import turn_lock

    lock = turn_lock(project / CREW / ".lock")
    fresh = open_crew(project)
    fresh.report(CrewReport("developer", "done", "built", act=2))
    assert not lock.is_locked  # released after the act
    assert _crew_acts(project) == [1, 2]


def test_a_crash_after_the_ledger_write_is_rolled_forward(project: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """In process: the ledger is written, then saving the state fails; opening again
    finds the pending commit and the act is in the state too."""
    from crewbook.core import commit

    crew_init("ship it", bar={"test": GREEN}, project=project)
    monkeypatch.setattr(commit.StateStore, "save", _boom)
    with pytest.raises(OSError, match="disk gone"):
        crew_report("analyst", "done", "framed", project=project)
    monkeypatch.undo()
    assert (project / CREW / "state.json.pending").exists()
    loop = open_crew(project)
    assert loop.view.acts == 1
    assert _crew_acts(project) == [1]
    assert not (project / CREW / "state.json.pending").exists()


def _boom(self: Any, state: Any) -> None:
    raise OSError("disk gone")


# ------------------------------------------------------------------------ concurrency
NOTEBOOK = textwrap.dedent("""
    import sys
    from crewbook.crew.api import open_crew
    from crewbook.crew.engine import CrewReport
    from crewbook.errors import LoopRefused
    root, who, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
    loop, done = open_crew(root), 0
    while done < want:
        act = loop.contract()
        verdict = "no-go" if act.role == "qa" else "done"
        summary = f"{who}-{done}"
        try:
            loop.report(CrewReport(act.role, verdict, summary, act=act.act))
        except LoopRefused:
            loop = open_crew(root)  # another caller acted: read the loop again
            continue
        print("ack", summary, flush=True)
        done += 1
""")

CLI = textwrap.dedent("""
    import json, subprocess, sys
    root, who, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
    base = [sys.executable, "-c", "import sys; from crewbook.commands import main; "
            "sys.exit(main())"]
    done = 0
    while done < want:
        step = subprocess.run(base + ["crew", "step", "--json", "--project", root],
                              capture_output=True, text=True)
        act = json.loads(step.stdout)
        verdict = "no-go" if act["role"] == "qa" else "done"
        summary = f"{who}-{done}"
        rep = subprocess.run(base + ["crew", "report", act["role"], verdict, summary,
                                     "--act", str(act["act"]), "--json", "--project", root],
                             capture_output=True, text=True)
        if rep.returncode == 0:
            print("ack", summary, flush=True)
            done += 1
""")

MCP = textwrap.dedent("""
    import json, os, sys
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    root, who, want = sys.argv[1], sys.argv[2], int(sys.argv[3])

    async def main():
        server = StdioServerParameters(
            command=sys.executable, cwd=root, env=dict(os.environ),
            args=["-c", "import sys; from crewbook.commands import main; sys.exit(main())",
                  "mcp", "--project", root])
        async with stdio_client(server) as (read, write), \\
                ClientSession(read, write) as session:
            await session.initialize()
            done = 0
            while done < want:
                step = await session.call_tool("crew_step", {})
                act = json.loads(step.content[0].text)
                verdict = "no-go" if act["role"] == "qa" else "done"
                summary = f"{who}-{done}"
                rep = await session.call_tool("crew_report", {
                    "role": act["role"], "verdict": verdict, "summary": summary,
                    "act": act["act"]})
                if not rep.is_error:
                    print("ack", summary, flush=True)
                    done += 1

    anyio.run(main)
""")


def test_notebooks_the_cli_and_the_mcp_server_take_turns(project: Path, cli: Any,
                                                         tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    crew_init("ship it", max_rounds=0, bar={"test": GREEN}, project=project)
    env = {**os.environ, "CREWBOOK_HOME": str(tmp_path / "home")}
    workers = [("nb1", NOTEBOOK, 6), ("nb2", NOTEBOOK, 6), ("cli", CLI, 3), ("mcp", MCP, 4)]
    procs = [(who, subprocess.Popen([sys.executable, "-c", code, str(project), who, str(n)],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    env=env))
             for who, code, n in workers]
    acked: list[str] = []
    for who, proc in procs:
        out, err = proc.communicate(timeout=540)
        assert proc.returncode == 0, f"{who}: {err[-2000:]}"
        acked += [line.split()[1] for line in out.splitlines() if line.startswith("ack ")]
    assert len(acked) == sum(n for _, _, n in workers)
    state = open_crew(project).view
    trail = [r.summary for r in state.trail]
    logged = [e["summary"] for e in _events(project, "crew.jsonl")
              if e["kind"] in ("report", "verdict")]
    assert logged == trail  # the same acts, in the same order
    assert sorted(trail) == sorted(acked)  # each accepted act once, none lost
    assert _crew_acts(project) == list(range(1, state.acts + 1))
    result = cli("validate", str(project / CREW), "--rules")
    assert result.code == 0, result.out + result.err


def test_a_loop_used_from_a_forked_child(project: Path) -> None:
    """A crew loop opened (and locked once) in a process, then used from forked children:
    each child takes its own lock (filelock refuses one inherited across fork), and the
    acts of racing children are all logged once."""
    crew_init("ship it", bar={"test": GREEN}, project=project)
    crew_report("analyst", "done", "framed", project=project)  # the parent took the lock
    pids = []
    for n in range(4):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 3
            try:
                crew_report("developer", "done", f"child {n}", project=project)
                code = 0
            except LoopRefused:
                code = 1  # a racing child found the loop moved on: a clean refusal
            finally:
                os._exit(code)
        pids.append(pid)
    codes = [os.WEXITSTATUS(os.waitpid(pid, 0)[1]) for pid in pids]
    assert 3 not in codes, codes
    assert 0 in codes
    acts = _crew_acts(project)
    assert acts == list(range(1, len(acts) + 1))
