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

from crewbook.crew.bar import run_command

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the keeper's subreaper is Linux")

#: Starts a `setsid` sleeper and a double-forked one, records their pids, then `rest`.
ESCAPERS = ("setsid sleep 300 & echo $! >> pids; "
            "(sh -c 'sleep 300 & echo $! >> pids' &); sleep 0.3; {rest}")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:].split()[0] != b"Z"


def _pids(folder: Path) -> list[int]:
    return [int(line) for line in (folder / "pids").read_text().split()]


def _gone(pids: list[int], within: float = 20.0) -> bool:
    deadline = time.monotonic() + within  # a bound on waiting, not a speed assertion
    while time.monotonic() < deadline:
        if not any(_alive(p) for p in pids):
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
    from crewbook.crew.bar import run_command
    run_command(sys.argv[2], root=Path(sys.argv[1]), timeout=600)
""")


def test_nothing_survives_crewbook_killed_mid_bar(tmp_path: Path) -> None:
    command = ESCAPERS.format(rest="echo started > started; sleep 300")
    proc = subprocess.Popen([sys.executable, "-c", CREWBOOK, str(tmp_path), command])
    deadline = time.monotonic() + 60
    while not (tmp_path / "started").exists():
        assert time.monotonic() < deadline, "the bar never started"
        assert proc.poll() is None
        time.sleep(0.05)
    pids = _pids(tmp_path)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert _gone(pids)
    assert len(pids) == 2
