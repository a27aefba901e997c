"""THE bar runner (DESIGN rule 7), used by the crew loop and the autonomous loop.

`run_command` runs one configured shell command so that it can never hang or kill the
loop that asked for it:

- it runs under a keeper (`crewbook.core.keeper`): a child subreaper that holds the
  command's whole tree (a child that calls ``setsid`` or double-forks included), in
  its own process group, stdin closed; on Linux the keepers come from one keeper server
  per crewbook process, started with the first command, so a command costs about what
  `subprocess.run` costs (no Python start, no fork: ``benchmarks/crew_step.py``); it
  gets crewbook's environment and umask as they are when it runs;
- it has a timeout (600 s by default, settable per command and per loop); at the
  timeout the WHOLE tree is killed, children and grandchildren included;
- when the command exits, whatever it left running is killed too, so a bar never
  leaves processes behind, and a background child holding the output pipe cannot make
  the loop wait;
- if crewbook dies while a bar runs (even by ``kill -9``), the keeper's lifeline
  closes and it kills the tree: nothing a bar started outlives crewbook (the keeper
  server ends too);
- if the keeper itself is killed, the command's process group is killed and the run
  says so (exit -9); a keeper server that died is replaced at the next command;
- its output (stdout and stderr together) is read as it comes, and only a bounded part
  is kept: the first and the last ``max_output / 2`` bytes, with the number of bytes
  cut, so a command printing gigabytes costs a few KiB of memory;
- its ``cwd`` must be inside the project (an `UnsafePathError` otherwise, before
  anything runs).

The result is a `BarRun` (exit code, duration, timed out, output tail), which the
engines log as a ``bar`` event. On systems without process groups (Windows) the
command is killed alone.
"""

from __future__ import annotations

import contextlib
import errno
import marshal
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Final, Protocol

from pydantic import BaseModel, ConfigDict

from ..errors import CrewError, Problem, UnsafePathError
from .paths import kind_of, path_problem

#: Seconds a bar command may run before its whole process group is killed (DESIGN rule 7).
DEFAULT_TIMEOUT: Final = 600.0
#: Bytes of a bar command's output kept (half from its start, half from its end).
DEFAULT_MAX_OUTPUT: Final = 64 * 1024

#: Seconds to wait for the last output once the command itself has exited.
EXIT_GRACE: Final = 0.5
#: Whether bar commands run under the keeper (`crewbook.core.keeper`, POSIX).
KEEPER: Final = hasattr(os, "killpg")
#: Seconds the keeper has to kill a command's tree once told to stop.
KEEPER_GRACE: Final = 10.0
#: Whether bar commands go through one keeper server per process (`_Server`; Linux, which
#: passes descriptors over ``SOCK_SEQPACKET`` sockets); elsewhere each gets its own keeper.
SERVER: Final = (KEEPER and sys.platform.startswith("linux")
                 and hasattr(socket, "send_fds") and hasattr(socket, "SOCK_SEQPACKET"))
#: Seconds between looks at a served command's line while the command runs (`_watch`).
LINE_CHECK: Final = 0.25
_CHUNK: Final = 65536
_KEEPER_PY: Final = str(Path(__file__).with_name("keeper.py"))


class BarRun(BaseModel):
    """What one bar command did: exit code, time, whether it passed, its output's end."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    command: str
    cwd: str
    exit_code: int | None
    timed_out: bool
    duration_ms: int
    output_bytes: int
    truncated: bool
    tail: str

    @property
    def passed(self) -> bool:
        """Exit code 0 within the timeout."""
        return self.exit_code == 0 and not self.timed_out

    def line(self) -> str:
        """`test: pass (exit 0, 1.2 s)`."""
        if self.timed_out:
            how = f"timed out after {self.duration_ms / 1000:.1f} s, process group killed"
        else:
            how = f"exit {self.exit_code}, {self.duration_ms / 1000:.1f} s"
        return f"{self.name}: {'pass' if self.passed else 'fail'} ({how})"


class BarSpec(Protocol):
    """One configured command of a bar (the crew's `BarCommand` is one)."""

    @property
    def command(self) -> str: ...
    @property
    def cwd(self) -> str | None: ...
    @property
    def timeout(self) -> float | None: ...


class BoundedOutput:
    """Keeps the first and last ``limit // 2`` bytes of a stream, counts the rest."""

    def __init__(self, limit: int = DEFAULT_MAX_OUTPUT) -> None:
        self.half = max(1, limit // 2)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        """Add a chunk."""
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.half:
                del self.tail[: len(self.tail) - self.half]

    @property
    def truncated(self) -> bool:
        """Whether bytes were dropped from the middle."""
        return self.total > len(self.head) + len(self.tail)

    def text(self) -> str:
        """Head, a marker saying how much was cut, tail (decoded, errors replaced)."""
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        if not self.truncated:
            return head + tail
        cut = self.total - len(self.head) - len(self.tail)
        return f"{head}\n… [{cut} bytes of output cut] …\n{tail}"


def confined_cwd(root: Path, cwd: str | None) -> Path:
    """The folder `cwd` names (relative to `root`, or absolute under it), which must be
    an existing folder inside the project; `UnsafePathError` or `CrewError` otherwise."""
    base = root.resolve()
    if cwd is None or cwd in ("", "."):
        return base
    why = path_problem(cwd)
    if why is not None:
        raise UnsafePathError(f"bar cwd {cwd[:60]!r} cannot name a folder: {why}; give a "
                              "folder relative to the project root, such as 'src'")
    raw = Path(cwd)
    target = (raw if raw.is_absolute() else base / raw).resolve()
    if not target.is_relative_to(base):
        raise UnsafePathError(
            f"bar cwd {cwd!r} leads outside the project ({base}); a bar command runs inside "
            "the project: give a folder relative to its root, such as 'src'")
    if kind_of(target) != "folder":
        raise CrewError("bar cwd is not a folder", [Problem(
            "bar_cwd_missing", f"{cwd!r} is not a folder of the project; create it or fix "
            "the bar's cwd", key="cwd")])
    return target


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the command's whole process group (or the command alone without groups)."""
    killpg = getattr(os, "killpg", None)
    if killpg is not None:
        # ProcessLookupError: the whole group is already gone, nothing is left to kill.
        with contextlib.suppress(ProcessLookupError):
            killpg(proc.pid, signal.SIGKILL)
    elif proc.poll() is None:
        proc.kill()


class _Server:
    """This process's keeper server (`crewbook.core.keeper.serve`), started on the first
    bar command: a bar command then goes to a keeper already running instead of starting
    a Python interpreter (about 10 ms, more than the rest of the runner). Requests go on
    one ``SOCK_SEQPACKET`` socket, each with its output pipe and its line (`_watch`)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sock: socket.socket | None = None
        os.register_at_fork(after_in_child=self.after_fork)

    def after_fork(self) -> None:
        """In a forked child: the parent's server is the parent's; start one when asked."""
        self.lock = threading.Lock()
        if self.sock is not None:
            self.sock.close()  # the child's copy only
            self.sock = None

    def drop(self) -> None:
        """Leave a server that took no request (it died): the next request starts one."""
        with self.lock:
            if self.sock is not None:
                self.sock.close()
                self.sock = None

    def _start(self) -> socket.socket:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            # it forks the server and exits at once; no stdout nor stderr: a server holding
            # crewbook's open would keep whoever reads them waiting (it speaks on the
            # commands' output)
            first = subprocess.Popen(
                [sys.executable, "-I", "-S", _KEEPER_PY, "--serve"], stdin=theirs.fileno(),
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            first.wait()
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        return ours

    def send(self, request: bytes, fds: list[int]) -> bool:
        """Hand a request to the server (started, or started again after it died);
        False when it cannot take it (then the command gets a keeper of its own)."""
        with self.lock:
            for _ in range(2):
                try:
                    if self.sock is None:
                        self.sock = self._start()
                    socket.send_fds(self.sock, [request], fds)
                    return True
                except OSError as exc:
                    if exc.errno == errno.EMSGSIZE:
                        return False  # a huge environment: this request only
                    if self.sock is not None:  # the server died: start another
                        self.sock.close()
                        self.sock = None
            return False


_SERVER: Final = _Server() if SERVER else None


def _kill(pid: int, *, group: bool) -> None:
    """SIGKILL `pid` (or its group), whatever is left of it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        (os.killpg if group else os.kill)(pid, signal.SIGKILL)


class _Line:
    """What a keeper said on a command's line (`keeper.keep`): its pid and the command's
    (``K``, ``P``), the command's status once its tree is dead (``S``), or that it closed."""

    def __init__(self, line: socket.socket) -> None:
        self.line = line
        self.pids: list[int] = []
        self.code: int | None = None
        self.closed = False
        self._said = b""

    def hear(self, *, block: bool) -> None:
        """Read what is there (without waiting unless `block`)."""
        try:
            data = self.line.recv(256, 0 if block else socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        if not data:
            self.closed = True
            return
        self._said += data
        *lines, self._said = self._said.split(b"\n")
        for said in lines:
            if said[:1] in (b"K", b"P"):  # never 0: killpg(0) would be crewbook's group
                self.pids += [p for p in map(int, said[1:].split()) if p > 0]
            elif said[:1] == b"S":
                self.code = int(said[1:])


def _watch(output: int, line: socket.socket, out: BoundedOutput,
           deadline: float) -> tuple[int | None, bool] | None:
    """Read a served command's output until it closes, then its keeper's status: (status,
    timed out), or None when no keeper took the command. At the deadline the line is
    shut, so its keeper kills the tree and says the status.

    The line is read when the output has closed, and every `LINE_CHECK` s before: it
    says nothing else than ``S`` while the command runs, except when its keeper dies, and
    waking crewbook for each word would take a CPU from the command as it starts."""
    said = _Line(line)
    timed_out = False
    limit = deadline
    checked = time.monotonic()
    with selectors.DefaultSelector() as selector:
        selector.register(output, selectors.EVENT_READ)
        while True:  # the output, until it closes
            now = time.monotonic()
            if now >= limit:
                if timed_out or said.code is not None:
                    break  # the keeper does not answer, or leftovers hold the output
                timed_out = True
                line.shutdown(socket.SHUT_WR)  # the keeper kills the whole tree
                limit = now + KEEPER_GRACE
                continue
            if selector.select(min(limit - now, LINE_CHECK)):
                chunk = os.read(output, _CHUNK)
                if not chunk:
                    break  # every writer closed it: the command's tree is dead
                out.feed(chunk)
                if now - checked < LINE_CHECK:
                    continue
            checked = now
            if said.closed or said.code is not None:
                continue
            said.hear(block=False)
            if said.closed and said.code is None:  # its keeper died
                if not said.pids:
                    return None  # before it took the command (then nothing ran)
                if len(said.pids) == 2:
                    _kill(said.pids[1], group=True)
                    out.feed(b"\ncrewbook: the bar keeper was killed; command killed\n")
                else:  # between its start and its pid: its tree is out of reach
                    out.feed(b"\ncrewbook: the bar keeper was killed as the command "
                             b"started\n")
                said.code = -signal.SIGKILL
                limit = min(limit, now + EXIT_GRACE)
            elif said.code is not None:
                limit = min(limit, now + EXIT_GRACE)
        selector.unregister(output)
        selector.register(line, selectors.EVENT_READ)
        while not said.closed and said.code is None:  # its status
            now = time.monotonic()
            if now >= limit:
                if timed_out:
                    break  # the keeper does not answer
                timed_out = True
                line.shutdown(socket.SHUT_WR)
                limit = now + KEEPER_GRACE
                continue
            if selector.select(limit - now):
                said.hear(block=False)
    if said.code is None:
        if not said.pids:
            return None  # no keeper took the command: nothing ran
        for pid, group in zip(said.pids, (False, True), strict=False):
            _kill(pid, group=group)  # gave up waiting: kill what is in reach
        out.feed(b"\ncrewbook: no status from the bar keeper; what was left of it killed\n")
        return -signal.SIGKILL, timed_out
    return said.code, timed_out


def _umask() -> int:
    """This process's umask, for the command (the server's may be older); -1 if unknown."""
    try:
        with open("/proc/self/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        return -1
    return -1


def _run_served(argv: list[str], folder: Path, out: BoundedOutput,
                deadline: float) -> tuple[int | None, bool] | None:
    """Run through this process's keeper server; None when it cannot take the command."""
    assert _SERVER is not None
    request = marshal.dumps((argv, str(folder), dict(os.environb), _umask()))
    for _ in range(2):  # a request no keeper took: the server died, start another
        reader, writer = os.pipe()
        ours, theirs = socket.socketpair()
        try:
            sent = _SERVER.send(request, [writer, theirs.fileno()])
        finally:
            os.close(writer)
            theirs.close()
        try:
            done = _watch(reader, ours, out, deadline) if sent else None
        finally:
            os.close(reader)
            ours.close()  # the line: a keeper still running kills its tree
        if done is not None or not sent:
            return done
        _SERVER.drop()
    return None


def _run_alone(argv: list[str], folder: Path, out: BoundedOutput, deadline: float,
               name: str) -> tuple[int | None, bool]:
    """Run under a keeper of its own (a Python start per command), or, without process
    groups (Windows), alone; (status, timed out)."""
    lifeline: int | None = None
    try:
        if KEEPER:  # POSIX: through the keeper, so no process of the bar outlives it
            reader, lifeline = os.pipe()
            try:
                proc = subprocess.Popen(  # a command the user configured (rule 7)
                    [sys.executable, "-I", "-S", _KEEPER_PY, *argv], cwd=folder,
                    stdin=reader, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                    start_new_session=True)
            finally:
                os.close(reader)
        else:  # pragma: no cover - Windows: the command alone
            proc = subprocess.Popen(
                argv[-1], shell=True, cwd=folder, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError as exc:
        if lifeline is not None:
            os.close(lifeline)
        raise CrewError("cannot start the bar command", [Problem(
            "bar_not_started", f"{name}: {exc}", key=name)]) from None
    timed_out = False
    exited_at: float | None = None
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            now = time.monotonic()
            if now >= deadline:
                timed_out = proc.poll() is None
                break
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at >= EXIT_GRACE:
                break  # a leftover child holds the pipe: it is killed below
            wait = deadline - now
            if exited_at is not None:
                wait = min(wait, EXIT_GRACE - (now - exited_at))
            if not selector.select(timeout=min(wait, 0.25)):
                continue
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                break  # end of output: every writer closed it
            out.feed(chunk)
    if not timed_out and proc.poll() is None:  # output closed, the command still runs
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
    if lifeline is not None:
        os.close(lifeline)  # the keeper kills the command's whole tree, then exits
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=KEEPER_GRACE)
    _kill_group(proc)  # the keeper's own group: a keeper that did not exit in time
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL cannot be ignored
        proc.kill()
        proc.wait()
    proc.stdout.close()
    return proc.returncode, timed_out


def run_command(
    command: str,
    *,
    root: Path,
    cwd: str | None = None,
    name: str = "test",
    timeout: float = DEFAULT_TIMEOUT,
    max_output: int = DEFAULT_MAX_OUTPUT,
    tail_chars: int = 2000,
) -> BarRun:
    """Run `command` with a shell in `cwd` (inside `root`), bounded in time and output.

    Never raises for what the command does (a failure, a timeout, a flood of output are
    facts in the `BarRun`); raises `UnsafePathError`/`CrewError` for a bad `cwd` and
    `CrewError` when the shell cannot be started, before anything runs.
    """
    folder = confined_cwd(root, cwd)
    shown_cwd = folder.relative_to(root.resolve()).as_posix() or "."
    started = time.monotonic()
    deadline = started + timeout
    argv = ["/bin/sh", "-c", command]
    out = BoundedOutput(max_output)
    done = _run_served(argv, folder, out, deadline) if _SERVER is not None else None
    if done is None:
        done = _run_alone(argv, folder, out, deadline, name)
    code, timed_out = done
    duration_ms = int((time.monotonic() - started) * 1000)
    text = out.text()
    return BarRun(
        name=name, command=command, cwd=shown_cwd,
        exit_code=None if timed_out else code, timed_out=timed_out,
        duration_ms=duration_ms, output_bytes=out.total, truncated=out.truncated,
        tail=text[-tail_chars:] if tail_chars else "",
    )


def run_bar(
    bar: Mapping[str, BarSpec], *, root: Path, timeout: float = DEFAULT_TIMEOUT,
    max_output: int = DEFAULT_MAX_OUTPUT,
) -> list[BarRun]:
    """Run every command of a bar in order (test, lint, typecheck, build as configured)."""
    return [
        run_command(c.command, root=root, cwd=c.cwd, name=name,
                    timeout=c.timeout or timeout, max_output=max_output)
        for name, c in bar.items()
    ]


def bar_event(run: BarRun, *, act: int | None = None, role: str | None = None,
              attempt: int | None = None, version: int | None = None) -> dict[str, object]:
    """The ``bar`` ledger event of one run: verdict pass/fail, exit code, duration, tail."""
    event: dict[str, object] = {
        "kind": "bar", "stage": run.name, "verdict": "pass" if run.passed else "fail",
        "summary": f"{run.line()}: {run.command}", "duration_ms": run.duration_ms,
        "payload": {"act": act, "command": run.command, "cwd": run.cwd,
                    "exit_code": run.exit_code, "timed_out": run.timed_out,
                    "output_bytes": run.output_bytes, "truncated": run.truncated,
                    "tail": run.tail},
    }
    if role is not None:
        event["role"] = role
    if attempt is not None:
        event["attempt"] = attempt
    if version is not None:
        event["version"] = version
    return event


__all__ = ["DEFAULT_MAX_OUTPUT", "DEFAULT_TIMEOUT", "BarRun", "BarSpec", "BoundedOutput",
           "bar_event", "confined_cwd", "run_bar", "run_command"]
