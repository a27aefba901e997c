"""The bar runner: own process group, timeout killing the whole group, bounded output."""

from __future__ import annotations

import os
import shlex
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crewbook.core.bar import BoundedOutput, bar_event, run_bar, run_command
from crewbook.crew.model import BarCommand
from crewbook.errors import CrewError, UnsafePathError

PY = shlex.quote(sys.executable)
posix_only = pytest.mark.skipif(not hasattr(os, "killpg"), reason="needs process groups")


def _gone(pid: int, within: float = 5.0) -> bool:
    """Whether `pid` has ended (or is a zombie waiting for init) within `within` s."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        status = Path(f"/proc/{pid}/status")
        if status.exists() and "\nState:\tZ" in status.read_text():
            return True
        time.sleep(0.05)
    return False


def test_exit_code_duration_and_output(tmp_path: Path) -> None:
    run = run_command(f"{PY} -c \"print('hello'); raise SystemExit(3)\"", root=tmp_path)
    assert run.exit_code == 3
    assert not run.timed_out
    assert not run.passed
    assert run.tail == "hello\n"
    assert run.output_bytes == 6
    assert not run.truncated
    assert run.duration_ms >= 0
    assert run.cwd == "."
    ok = run_command(f"{PY} -c pass", root=tmp_path, name="lint")
    assert ok.passed
    assert ok.name == "lint"
    assert ok.line().startswith("lint: pass (exit 0")


@posix_only
def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    script = (
        "import subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
        "time.sleep(60)\n"
    )
    (tmp_path / "spawn.py").write_text(script)
    started = time.monotonic()
    run = run_command(f"{PY} spawn.py", root=tmp_path, timeout=1.5)
    assert time.monotonic() - started < 10
    assert run.timed_out
    assert run.exit_code is None
    assert not run.passed
    assert "timed out" in run.line()
    grandchild = int(pidfile.read_text())
    assert _gone(grandchild), "the grandchild outlived the timeout: the group was not killed"


@posix_only
def test_a_child_left_running_is_killed_and_does_not_hold_the_loop(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    script = (
        "import subprocess, sys\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
        "print('parent done')\n"
    )
    (tmp_path / "leave.py").write_text(script)
    started = time.monotonic()
    run = run_command(f"{PY} leave.py", root=tmp_path, timeout=30)
    assert time.monotonic() - started < 10  # not the 30 s timeout, not the child's 60 s
    assert run.passed
    assert "parent done" in run.tail
    assert _gone(int(pidfile.read_text()))


def test_flooding_output_is_bounded(tmp_path: Path) -> None:
    size = 5_000_000
    run = run_command(f"{PY} -c \"import sys; sys.stdout.write('x' * {size}); "
                      "sys.stdout.write('THE END')\"", root=tmp_path, max_output=4096,
                      tail_chars=100)
    assert run.passed
    assert run.output_bytes == size + 7
    assert run.truncated
    assert run.tail.endswith("THE END")
    assert len(run.tail) == 100


def test_stderr_is_captured_with_stdout(tmp_path: Path) -> None:
    run = run_command(f"{PY} -c \"import sys; sys.stderr.write('oops')\"", root=tmp_path)
    assert run.tail == "oops"


def test_cwd_is_confined_to_the_project(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    run = run_command(f"{PY} -c \"import os; print(os.getcwd())\"", root=tmp_path, cwd="sub")
    assert Path(run.tail.strip()).resolve() == (tmp_path / "sub").resolve()
    assert run.cwd == "sub"
    with pytest.raises(UnsafePathError, match="outside the project"):
        run_command("true", root=tmp_path / "sub", cwd="..")
    with pytest.raises(UnsafePathError):
        run_command("true", root=tmp_path / "sub", cwd=str(tmp_path))
    with pytest.raises(CrewError, match="bar cwd is not a folder") as exc:
        run_command("true", root=tmp_path, cwd="missing")
    assert exc.value.codes == ["bar_cwd_missing"]


def test_run_bar_runs_each_command_with_its_own_timeout(tmp_path: Path) -> None:
    runs = run_bar({"test": BarCommand(command=f"{PY} -c pass"),
                    "lint": BarCommand(command=f"{PY} -c \"import time; time.sleep(30)\"",
                                       timeout=0.5)}, root=tmp_path, timeout=60)
    assert [r.name for r in runs] == ["test", "lint"]
    assert runs[0].passed
    assert runs[1].timed_out
    event = bar_event(runs[1], act=3, version=1)
    assert event["kind"] == "bar"
    assert event["verdict"] == "fail"
    assert event["stage"] == "lint"
    assert event["payload"]["timed_out"] is True  # type: ignore[index]


@given(st.lists(st.binary(max_size=50), max_size=30), st.integers(min_value=2, max_value=64))
def test_bounded_output_keeps_exactly_head_and_tail(chunks: list[bytes], limit: int) -> None:
    out = BoundedOutput(limit)
    for chunk in chunks:
        out.feed(chunk)
    data = b"".join(chunks)
    half = limit // 2
    assert out.total == len(data)
    assert bytes(out.head) == data[:half]
    rest = data[half:]
    assert bytes(out.tail) == rest[-half:] if rest else bytes(out.tail) == b""
    assert out.truncated == (len(data) > 2 * half)


@posix_only
def test_the_command_gets_crewbooks_environment_and_umask_of_the_moment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands may go through a keeper started earlier: they still get the caller's
    environment and umask as they are when the command runs."""
    assert run_command("true", root=tmp_path).passed  # a keeper (server) runs by now
    monkeypatch.setenv("CREWBOOK_BAR_PROBE", "set after the first bar")
    old = os.umask(0o027)
    try:
        run = run_command("echo $CREWBOOK_BAR_PROBE; umask", root=tmp_path)
    finally:
        os.umask(old)
    assert run.tail.split("\n")[:2] == ["set after the first bar", "0027"]


@posix_only
def test_a_stopped_command_is_killed_whole_and_refused(tmp_path: Path) -> None:
    """`stopping`: another thread sets the stop mid-command; the whole tree (a grandchild
    included) is killed well before the timeout and `run_command` raises bar_stopped; a
    command started after the stop never runs; outside the block nothing changes."""
    import threading

    from crewbook.core.bar import stopping
    from crewbook.errors import LoopRefused

    pidfile = tmp_path / "grandchild.pid"
    (tmp_path / "spawn.py").write_text(
        "import subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
        f"open({str(pidfile)!r} + '.tmp', 'w').write(str(p.pid))\n"
        "import os\n"
        f"os.replace({str(pidfile)!r} + '.tmp', {str(pidfile)!r})\n"
        "time.sleep(300)\n")
    stop = threading.Event()

    def stop_once_started() -> None:
        while not pidfile.exists():
            time.sleep(0.05)
        stop.set()

    threading.Thread(target=stop_once_started, daemon=True).start()
    started = time.monotonic()
    with stopping(stop), pytest.raises(LoopRefused) as refused:
        run_command(f"{PY} spawn.py", root=tmp_path, timeout=300)
    assert time.monotonic() - started < 60
    assert refused.value.code == "bar_stopped"
    assert _gone(int(pidfile.read_text())), "the grandchild outlived the stop"
    marker = tmp_path / "ran"
    with stopping(stop), pytest.raises(LoopRefused):
        run_command(f"touch {shlex.quote(str(marker))}", root=tmp_path)
    assert not marker.exists()
    assert run_command(f"{PY} -c pass", root=tmp_path).passed  # outside: not stopped
