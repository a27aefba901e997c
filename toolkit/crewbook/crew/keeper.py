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
nothing but the standard library, and little of it: it starts for every bar command, so
it runs with ``-I -S`` (no site, no user site), starts the command with ``fork`` and
``exec`` (`subprocess` takes longer to import than the rest of the keeper to run) and
takes signals from the C module (`signal` imports `enum`).
"""

from __future__ import annotations

import os
import select
import sys

TYPE_CHECKING = False  # as `typing.TYPE_CHECKING`, without importing typing
if TYPE_CHECKING:
    import signal as _signal
else:
    try:
        import _signal
    except ImportError:  # pragma: no cover - a Python without the C module's name
        import signal as _signal

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


def spawn(argv: list[str]) -> int:
    """Start `argv` in its own session (so its own process group), standard input from
    the null device, the signals Python ignores back to their defaults (as `subprocess`
    does: a pipe closed under the command must still stop it); its pid."""
    pid = os.fork()
    if pid:
        return pid
    try:  # the child: exec or exit, never return
        os.setsid()
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # the lifeline stays the keeper's
        for name in ("SIGPIPE", "SIGXFSZ"):
            number = getattr(_signal, name, None)
            if number is not None:
                _signal.signal(number, _signal.SIG_DFL)
        os.execvp(argv[0], argv)
    except BaseException as exc:  # said on the command's output, then exit 127
        os.write(2, f"crewbook bar keeper: cannot run {argv[0]}: {exc}\n".encode())
    finally:
        os._exit(127)


def status(pid: int, *, block: bool) -> int | None:
    """The exit code of `pid` (``-N`` for a death by signal N), or None while it runs."""
    done, code = os.waitpid(pid, 0 if block else os.WNOHANG)
    return os.waitstatus_to_exitcode(code) if done else None


def kill(pid: int, *, group: bool = False) -> bool:
    """SIGKILL `pid` (its process group with `group`); False when it was already gone."""
    try:
        (os.killpg if group else os.kill)(pid, _signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def default(signum: int) -> bool:
    """Put `signum` back to its default action; False for one that takes no handler
    (SIGKILL, SIGSTOP: their default stands anyway)."""
    try:
        _signal.signal(signum, _signal.SIG_DFL)
    except (OSError, ValueError):
        return False
    return True


def kill_tree(pid: int, code: int | None = None) -> int:
    """Kill the command's group and collect its status (unless `code` was), then kill
    every descendant left, until none is; returns the command's status."""
    kill(pid, group=True)
    if code is None:  # before reap(): its status must not be collected by waitpid(-1)
        code = status(pid, block=True)
        assert code is not None
    for _ in range(200):
        left = descendants(os.getpid())
        if not left:
            break
        for other in left:
            kill(other)
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

    _signal.signal(_signal.SIGTERM, stop)
    lifeline = sys.stdin.fileno()
    pid = spawn(argv)
    exited = exit_fd(pid)
    watched = [lifeline] if exited is None else [lifeline, exited]
    code = status(pid, block=False)
    while not stopping[0] and code is None:
        ready, _, _ = select.select(watched, [], [], POLL)
        if lifeline in ready and not os.read(lifeline, 1):
            break  # crewbook closed the lifeline, or died
        code = status(pid, block=False)
    if exited is not None:
        os.close(exited)
    code = kill_tree(pid, code)
    if code < 0:  # mirror a death by signal, so crewbook sees what the command saw
        default(-code)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
