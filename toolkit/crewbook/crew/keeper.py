"""The bar keeper: a tiny process between crewbook and a bar command, so that no process
the command started outlives it (DESIGN rule 7).

`crewbook.crew.bar` runs ``python -I -S keeper.py SHELL COMMAND`` with a *lifeline* pipe
on standard input. The keeper

- becomes a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)`` through ctypes, Linux):
  every process the command starts, even one that calls ``setsid`` or double-forks,
  stays in the keeper's tree instead of going to init;
- runs the command in its own process group, its output going straight to crewbook;
- when the command exits (seen at once through a pidfd on Linux, else within `POLL`),
  kills whatever it left running (its group, then every descendant found under
  ``/proc``) and exits with the command's status;
- when the lifeline closes (crewbook asked it to stop at a timeout, or crewbook died,
  even by ``kill -9``), or on SIGTERM, kills the command's whole tree and exits.

Without ``prctl`` and ``/proc`` (macOS) it falls back to the process group. It imports
nothing but the standard library (it runs with ``-I -S``: fast, and no user site).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys

PR_SET_CHILD_SUBREAPER = 36
POLL = 0.05


def become_subreaper() -> bool:
    """Ask Linux to give this process the orphans of its tree; False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def descendants(root: int) -> list[int]:
    """Every live process under `root` (from /proc; empty where there is no /proc)."""
    parents: dict[int, int] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and fields[0] != b"Z":
            parents[int(name)] = int(fields[1])
    found: list[int] = []
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


def exit_fd(pid: int) -> int | None:
    """A descriptor that becomes readable when `pid` exits (Linux's pidfd), so the keeper
    wakes at once instead of at its next poll; None where there is none (then it polls)."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return int(opener(pid))
    except OSError:  # an older kernel, or a sandbox that forbids it
        return None


def reap() -> None:
    """Collect every exited child (orphans the keeper adopted included)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_tree(child: subprocess.Popen[bytes]) -> int:
    """Kill the command's group and collect its status, then kill every descendant left,
    until none is; returns the command's status."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
    code = child.wait()  # before reap(): its status must not be collected by waitpid(-1)
    for _ in range(200):
        left = descendants(os.getpid())
        if not left:
            break
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        reap()
        select.select([], [], [], 0.01)
    reap()
    return code


def main(argv: list[str]) -> int:
    """Run ``argv`` (a shell and its command) and keep its tree (see the module doc)."""
    become_subreaper()
    stopping = [False]

    def stop(signum: int, frame: object) -> None:
        stopping[0] = True

    signal.signal(signal.SIGTERM, stop)
    lifeline = sys.stdin.fileno()
    child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, start_new_session=True)
    exited = exit_fd(child.pid)
    watched = [lifeline] if exited is None else [lifeline, exited]
    while not stopping[0] and child.poll() is None:
        ready, _, _ = select.select(watched, [], [], POLL)
        if lifeline in ready and not os.read(lifeline, 1):
            break  # crewbook closed the lifeline, or died
    if exited is not None:
        os.close(exited)
    code = kill_tree(child)
    if code < 0:  # mirror a death by signal, so crewbook sees what the command saw
        with contextlib.suppress(OSError, ValueError):  # SIGKILL, SIGSTOP: no handler to set
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
