"""crewbook's side of the bar keeper (`crewbook.core.keeper`): how `core.bar` hands a
command to a keeper and watches it (DESIGN rule 7).

`run_kept` gives the command to this process's keeper server (Linux: one per process,
started with the first command, `SERVER`) or, when there is none or it cannot take the
command, to a keeper of its own. Either way the keeper speaks on the command's line
(`_Line`): its pid, its server's, the command's, then the command's status once its
tree is dead; crewbook reads the output meanwhile (`BoundedOutput`), shuts the line at
the deadline (the keeper kills the tree), and kills what it can reach when the keeper
dies or is stopped, then waits for the server, a subreaper, to have killed the rest.
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
from typing import Final

from ..errors import CrewError, Problem
from . import keeper
from .bar_output import BoundedOutput

#: Seconds to wait for the last output once the command itself has exited.
EXIT_GRACE: Final = 0.5
#: Whether bar commands run under the keeper (`crewbook.core.keeper`, POSIX).
KEEPER: Final = hasattr(os, "killpg")
#: Seconds the keeper has to kill a command's tree once told to stop.
KEEPER_GRACE: Final = 10.0
#: Whether bar commands go through one keeper server per process (`SERVER`; Linux, which
#: passes descriptors over ``SOCK_SEQPACKET`` sockets); elsewhere each gets its own keeper.
SERVED: Final = (KEEPER and sys.platform.startswith("linux")
                 and hasattr(socket, "send_fds") and hasattr(socket, "SOCK_SEQPACKET"))
#: Seconds between looks at a served command's line while the command runs (`_watch`).
LINE_CHECK: Final = 0.25
_CHUNK: Final = 65536
_KEEPER_PY: Final = str(Path(__file__).with_name("keeper.py"))


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


#: This process's keeper server, where there is one (`SERVED`).
SERVER: Final = _Server() if SERVED else None


def _kill(pid: int, *, group: bool) -> None:
    """SIGKILL `pid` (or its group), whatever is left of it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        (os.killpg if group else os.kill)(pid, signal.SIGKILL)


def _stopped(pid: int) -> bool:
    """Whether `pid` is stopped (SIGSTOP, a tracer), from /proc; False where there is none."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:][:1] in (b"T", b"t")


class _Line:
    """What a keeper said on a command's line (`keeper.keep`): its pid and the command's
    (``K``, ``P``), the command's status once its tree is dead (``S``), or that it closed."""

    def __init__(self, line: socket.socket) -> None:
        self.line = line
        self.pids: list[int] = []
        self.code: int | None = None
        self.closed = False
        self.stopped = False
        self.died = False  # the line closed before the keeper said the status
        self.server: int | None = None
        self._said = b""

    def look(self) -> None:
        """Hear what is there; a keeper found stopped (its bar sent it SIGSTOP) can keep
        nothing: it is killed, so its line closes and the keeper server, a subreaper,
        kills the tree it leaves (`keeper.kill_adopted`)."""
        self.hear(block=False)
        if not self.closed and self.code is None and self.pids and _stopped(self.pids[0]):
            self.stopped = True
            _kill(self.pids[0], group=False)

    def hear(self, *, block: bool) -> None:
        """Read what is there (without waiting unless `block`)."""
        try:
            data = self.line.recv(256, 0 if block else socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        if not data:
            self.closed = True
            self.died = self.code is None
            return
        self._said += data
        *lines, self._said = self._said.split(b"\n")
        for said in lines:
            if said[:1] in (b"K", b"P"):  # never 0: killpg(0) would be crewbook's group
                self.pids += [p for p in map(int, said[1:].split()) if p > 0]
            elif said[:1] == b"S":
                self.code = int(said[1:])
            elif said[:1] == b"R" and int(said[1:]) > 1:
                self.server = int(said[1:])


def _cmdline(pid: int) -> bytes | None:
    """The command line of `pid` (None once it is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _adopted_killed(server: int | None, until: float) -> bool:
    """Wait (until `until`) for the keeper server to have killed what it adopted from a
    keeper that died (`keeper.kill_adopted`), so nothing of the bar outlives its report:
    True once its children are its keepers alone (forks of it, its command line)."""
    own = None if server is None else _cmdline(server)
    if server is None or own is None:
        return True  # no server to wait for (gone, or no /proc)
    while True:
        left = [pid for pid, parent in keeper.parents().items()
                if parent == server and _cmdline(pid) not in (own, None)]
        if not left:
            return True
        if time.monotonic() >= until:
            return False
        time.sleep(0.01)


def _watch(output: int, line: socket.socket, out: BoundedOutput, deadline: float,
           stop: threading.Event | None = None) -> tuple[int | None, bool] | None:
    """`_watch_line`, then, when the command's keeper died, the wait for its server to
    have killed the tree it left (`_adopted_killed`)."""
    said = _Line(line)
    done = _watch_line(output, said, out, deadline, stop)
    if said.died and said.pids and not _adopted_killed(
            said.server, time.monotonic() + KEEPER_GRACE):
        out.feed(b"\ncrewbook: the bar keeper server did not kill what was left\n")
    return done


def _watch_line(output: int, said: _Line, out: BoundedOutput, deadline: float,
                stop: threading.Event | None = None) -> tuple[int | None, bool] | None:
    """Read a served command's output until it closes, then its keeper's status: (status,
    timed out), or None when no keeper took the command. At the deadline, or within
    `LINE_CHECK` s of `stop` being set (the caller gave up), the line is shut, so its
    keeper kills the tree and says the status.

    The line is read when the output has closed, and every `LINE_CHECK` s before: it
    says nothing else than ``S`` while the command runs, except when its keeper dies, and
    waking crewbook for each word would take a CPU from the command as it starts."""
    line = said.line
    timed_out = False
    limit = deadline
    checked = time.monotonic()
    stopping = stop is not None
    with selectors.DefaultSelector() as selector:
        selector.register(output, selectors.EVENT_READ)
        while True:  # the output, until it closes
            now = time.monotonic()
            if stopping and stop is not None and stop.is_set():
                stopping = False
                limit = now  # as at the deadline: the keeper kills the whole tree
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
            said.look()
            if said.closed and said.code is None:  # its keeper died
                if not said.pids:
                    return None  # before it took the command (then nothing ran)
                if len(said.pids) == 2:
                    _kill(said.pids[1], group=True)
                    out.feed(b"\ncrewbook: the bar keeper was stopped and killed; command "
                             b"killed\n" if said.stopped else
                             b"\ncrewbook: the bar keeper was killed; command killed\n")
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
            selector.select(min(limit - now, LINE_CHECK))
            said.look()
    if said.code is None:
        if not said.pids:
            return None  # no keeper took the command: nothing ran
        for pid, group in zip(said.pids, (False, True), strict=False):
            _kill(pid, group=group)  # gave up waiting: kill what is in reach
        why = b"was stopped" if said.stopped else b"was killed" if said.closed else \
            b"gave no status"
        out.feed(b"\ncrewbook: the bar keeper " + why + b"; what was left of its command "
                 b"killed\n")
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


def _run_served(argv: list[str], folder: Path, env: Mapping[str, str], out: BoundedOutput,
                deadline: float, stop: threading.Event | None = None,
                ) -> tuple[int | None, bool] | None:
    """Run through this process's keeper server; None when it cannot take the command."""
    assert SERVER is not None
    environment = dict(os.environb)
    environment.update({os.fsencode(k): os.fsencode(v) for k, v in env.items()})
    request = marshal.dumps((argv, str(folder), environment, _umask()))
    for _ in range(2):  # a request no keeper took: the server died, start another
        reader, writer = os.pipe()
        ours, theirs = socket.socketpair()
        try:
            sent = SERVER.send(request, [writer, theirs.fileno()])
        finally:
            os.close(writer)
            theirs.close()
        try:
            done = _watch(reader, ours, out, deadline, stop) if sent else None
        finally:
            os.close(reader)
            ours.close()  # the line: a keeper still running kills its tree
        if done is not None or not sent:
            return done
        SERVER.drop()
    return None


def _run_alone(argv: list[str], folder: Path, env: Mapping[str, str], out: BoundedOutput,
               deadline: float, name: str,
               stop: threading.Event | None = None) -> tuple[int | None, bool]:
    """Run under a keeper of its own (a Python start per command: ``keeper.main``, the
    line on its standard input, the output on its standard output), or, without process
    groups (Windows), alone; (status, timed out)."""
    if not KEEPER:  # pragma: no cover - Windows: the command alone, its output read whole
        return _run_bare(argv[-1], folder, env, out, deadline)
    reader, writer = os.pipe()
    ours, theirs = socket.socketpair()
    try:
        proc = subprocess.Popen(  # a command the user configured (rule 7)
            [sys.executable, "-I", "-S", _KEEPER_PY, *argv], cwd=folder, stdin=theirs.fileno(),
            stdout=writer, stderr=subprocess.DEVNULL, start_new_session=True,
            env={**os.environ, **env})
    except OSError as exc:
        os.close(reader)
        ours.close()
        raise CrewError("cannot start the bar command", [Problem(
            "bar_not_started", f"{name}: {exc}", key=name)]) from None
    finally:
        os.close(writer)
        theirs.close()
    try:
        done = _watch(reader, ours, out, deadline, stop)
    finally:
        os.close(reader)
        ours.close()  # the line: a keeper still running kills its tree, then ends
        try:
            proc.wait(timeout=KEEPER_GRACE)
        except subprocess.TimeoutExpired:
            _kill(proc.pid, group=True)
            proc.wait()
    if done is None:  # the keeper ended before it took the command: nothing ran
        out.feed(f"crewbook: the bar keeper ended before the command ran (status "
                 f"{proc.returncode})\n".encode())
        return proc.returncode, False
    return done


def _run_bare(command: str, folder: Path, env: Mapping[str, str], out: BoundedOutput,
              deadline: float) -> tuple[int | None, bool]:  # pragma: no cover - Windows
    """The command alone, where there are no process groups: killed alone at the
    deadline, its output bounded once read."""
    proc = subprocess.Popen(command, shell=True, cwd=folder, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env={**os.environ, **env})
    try:
        output, _ = proc.communicate(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        output, _ = proc.communicate()
        out.feed(output)
        return None, True
    out.feed(output)
    return proc.returncode, False


def run_kept(argv: list[str], folder: Path, env: Mapping[str, str], out: BoundedOutput,
             deadline: float, name: str,
             stop: threading.Event | None = None) -> tuple[int | None, bool]:
    """Run `argv` in `folder` under a keeper until `deadline` or until `stop` is set (its
    whole tree killed either way), with crewbook's environment and `env`, its output into
    `out`: (status, timed out). `CrewError` when no keeper can be started."""
    done = (_run_served(argv, folder, env, out, deadline, stop) if SERVER is not None
            else None)
    return (_run_alone(argv, folder, env, out, deadline, name, stop) if done is None
            else done)


__all__ = ["SERVER", "run_kept"]
