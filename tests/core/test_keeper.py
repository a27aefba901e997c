"""No process a bar started survives the bar: setsid children after a normal exit and
after a timeout, and when crewbook itself is killed with -9 mid-bar."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from crewbook.core.bar import run_command
from procs import alive

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the keeper's subreaper is Linux")

#: Starts a `setsid` sleeper and a double-forked one, records their pids, then `rest`.
ESCAPERS = ("setsid sleep 300 & echo $! >> pids; "
            "(sh -c 'sleep 300 & echo $! >> pids' &); sleep 0.3; {rest}")


def _pids(folder: Path) -> list[int]:
    return [int(line) for line in (folder / "pids").read_text().split()]


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as handle:
        stat = handle.read()
    return int(stat[stat.rfind(b")") + 2:].split()[1])


def _gone(pids: list[int], within: float = 20.0) -> bool:
    deadline = time.monotonic() + within  # a bound on waiting, not a speed assertion
    while time.monotonic() < deadline:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def test_setsid_children_die_when_the_command_exits(tmp_path: Path) -> None:
    run = run_command(ESCAPERS.format(rest="exit 3"), root=tmp_path, timeout=60)
    assert run.exit_code == 3
    pids = _pids(tmp_path)
    assert len(pids) == 2
    assert _gone(pids)


def test_setsid_children_die_at_the_timeout(tmp_path: Path) -> None:
    run = run_command(ESCAPERS.format(rest="sleep 300"), root=tmp_path, timeout=2)
    assert run.timed_out
    assert _gone(_pids(tmp_path))


def test_a_command_killed_by_a_signal_reports_it(tmp_path: Path) -> None:
    run = run_command("kill -TERM $$", root=tmp_path, timeout=60)
    assert run.exit_code == -signal.SIGTERM
    assert not run.passed


def test_the_command_does_not_inherit_pythons_ignored_sigpipe(tmp_path: Path) -> None:
    """Python ignores SIGPIPE; the command gets it back (as `subprocess` gives it), so
    ``producer | head -1`` stops the producer."""
    run = run_command("grep SigIgn /proc/$$/status", root=tmp_path, timeout=60)
    assert run.passed
    ignored = int(run.tail.split()[-1], 16)
    assert not ignored & (1 << (signal.SIGPIPE - 1))


def test_a_command_killed_by_sigkill_reports_it_too(tmp_path: Path) -> None:
    """SIGKILL takes no handler: the keeper still dies by it, without a traceback."""
    run = run_command("kill -KILL $$", root=tmp_path, timeout=60)
    assert run.exit_code == -signal.SIGKILL
    assert "Traceback" not in run.tail


CREWBOOK = textwrap.dedent("""
    import sys
    from pathlib import Path
    from crewbook.core.bar import run_command
    run_command(sys.argv[2], root=Path(sys.argv[1]), timeout=600)
""")


def test_nothing_survives_crewbook_killed_mid_bar(tmp_path: Path) -> None:
    """The command's tree dies, and so do its keeper and the keeper server."""
    command = ESCAPERS.format(rest="echo $PPID > keeper; echo started > started; sleep 300")
    proc = subprocess.Popen([sys.executable, "-c", CREWBOOK, str(tmp_path), command])
    deadline = time.monotonic() + 60
    while not (tmp_path / "started").exists():
        assert time.monotonic() < deadline, "the bar never started"
        assert proc.poll() is None
        time.sleep(0.05)
    pids = _pids(tmp_path)
    keeper = int((tmp_path / "keeper").read_text())
    server = _parent(keeper)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert _gone(pids)
    assert len(pids) == 2
    assert _gone([keeper, server])



def test_a_keeper_killed_mid_command_is_no_crash_and_its_command_dies(tmp_path: Path) -> None:
    """(Once the keeper said the command's pid: the command waits a little for that.)"""
    run = run_command("echo $$ > pid; sleep 0.5; kill -KILL $PPID; sleep 300", root=tmp_path,
                      timeout=60)
    assert run.exit_code == -signal.SIGKILL
    assert not run.timed_out
    assert "bar keeper was killed" in run.tail
    assert _gone([int((tmp_path / "pid").read_text())])
    assert run_command("echo again", root=tmp_path, timeout=60).tail == "again\n"


def test_commands_run_at_once_from_two_threads(tmp_path: Path) -> None:
    """Each command waits for the other's file: both pass only if they run together."""
    import threading

    wait = "touch {me}; for i in $(seq 500); do [ -e {other} ] && exit 0; sleep 0.01; done; exit 1"
    runs = {}

    def run(me: str, other: str) -> None:
        runs[me] = run_command(wait.format(me=me, other=other), root=tmp_path, timeout=60)

    threads = [threading.Thread(target=run, args=pair) for pair in (("a", "b"), ("b", "a"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert runs["a"].passed
    assert runs["b"].passed


def test_the_keeper_server_dies_and_is_replaced(tmp_path: Path) -> None:
    """Killing the keeper server (and then its keepers) costs no command."""
    keeper = int(run_command("echo $PPID", root=tmp_path, timeout=60).tail)
    server = _parent(keeper)
    os.kill(server, signal.SIGKILL)
    assert _gone([server])
    for _ in range(3):  # the keepers left end after a command, then a new server starts
        assert run_command("echo ok", root=tmp_path, timeout=60).tail == "ok\n"
    os.kill(int(run_command("echo $PPID", root=tmp_path, timeout=60).tail), signal.SIGKILL)
    assert run_command("echo ok", root=tmp_path, timeout=60).tail == "ok\n"


def test_a_keeper_of_its_own_when_there_is_no_server(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The way macOS runs, and Linux when the server cannot take a command."""
    from crewbook.core import keeping

    monkeypatch.setattr(keeping, "SERVER", None)
    run = run_command(ESCAPERS.format(rest="echo out; exit 3"), root=tmp_path, timeout=60)
    assert run.exit_code == 3
    assert run.tail == "out\n"
    assert _gone(_pids(tmp_path))


#: Starts a background sleeper (`start` before it: ``setsid`` or nothing) that records its
#: pid, then sends its own keeper `signal`, then waits.
HOSTILE = ("{start}sh -c 'echo $$ > bg; sleep 300' & sleep 0.5; kill -{signal} $PPID; "
           "sleep 300")


@pytest.mark.parametrize("start", ["", "setsid "])
@pytest.mark.parametrize("signal_name", ["KILL", "STOP"])
def test_a_bar_that_kills_or_stops_its_keeper_leaves_no_survivor(
        tmp_path: Path, signal_name: str, start: str) -> None:
    """The keeper server, a subreaper, gets the tree of a keeper its bar killed (a stopped
    keeper is killed at once) and kills it before crewbook reports."""
    run = run_command(HOSTILE.format(start=start, signal=signal_name), root=tmp_path,
                      timeout=60)
    assert not alive(int((tmp_path / "bg").read_text()))  # at once, not within a while
    assert run.exit_code == -signal.SIGKILL
    assert not run.timed_out
    assert ("was stopped" if signal_name == "STOP" else "was killed") in run.tail
    assert run_command("echo again", root=tmp_path, timeout=60).tail == "again\n"


@pytest.mark.parametrize("signal_name", ["KILL", "STOP"])
def test_a_keeper_of_its_own_killed_or_stopped_takes_its_command_group_along(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signal_name: str) -> None:
    """Without the server (macOS) the command's process group is what is in reach."""
    from crewbook.core import keeping

    monkeypatch.setattr(keeping, "SERVER", None)
    run = run_command(HOSTILE.format(start="", signal=signal_name), root=tmp_path,
                      timeout=60)
    # the group was sent SIGKILL (nothing waits for its death here, unlike the server
    # path): on a busy machine the sleeper may take a moment to be scheduled and die
    assert _gone([int((tmp_path / "bg").read_text())], within=5.0)
    assert run.exit_code == -signal.SIGKILL
    assert not run.timed_out
