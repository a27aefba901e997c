"""The bar keeper: a tiny process between crewbook and a bar command, so that no process
the command started outlives it (DESIGN rule 7).

A keeper

- is a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)`` through ctypes, Linux): every
  process the command starts, even one that calls ``setsid`` or double-forks, stays in
  the keeper's tree instead of going to init;
- runs the command in its own session (so its own process group), its output going
  straight to crewbook;
- when the command exits (seen at once through a pidfd on Linux, else within `POLL`),
  kills whatever it left running (its group, then every descendant found under
  ``/proc``, read only when a child is left) and gives the command's status;
- when its lifeline closes (crewbook asked it to stop at a timeout, or crewbook died,
  even by ``kill -9``), or on SIGTERM, kills the command's whole tree.

Two ways to run it. On Linux (`serve`), crewbook starts ``python -I -S keeper.py
--serve`` once per process: a server that forks keepers, which take requests (the
command, its folder, environment and umask, with its output pipe and its own line to
crewbook, a socket that is its lifeline) one after the other; a keeper whose command's
tree is dead has no child left and takes the next request. A bar command then costs no
Python start (about 10 ms) and no fork. Elsewhere (`main`), crewbook runs ``python -I -S
keeper.py SHELL -c COMMAND`` for each command, with the command's line on standard
input and its output on standard output, and the keeper ends once it said the status.

Without ``prctl`` and ``/proc`` (macOS) it falls back to the process group. It imports
nothing but the standard library, and little of it (it runs with ``-I -S``: no site, no
user site); it starts the command with ``posix_spawn`` (no copy of the keeper's memory;
`subprocess` takes longer to import than the rest of the keeper to run) and takes
signals from the C module (`signal` imports `enum`).
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


def parents() -> dict[int, int]:
    """The parent of every live process (from /proc; empty where there is no /proc)."""
    found: dict[int, int] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
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
            found[int(name)] = int(fields[1])
    return found


def descendants(root: int) -> list[int]:
    """Every live process under `root` (empty where there is no /proc)."""
    tree = parents()
    found: list[int] = []
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in tree.items() if ppid == parent]
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


def reap() -> bool:
    """Collect every exited child (orphans the keeper adopted included); True when no
    child is left at all, so no descendant either (they all come back to a subreaper)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return True
        if pid == 0:
            return False


#: Signals Python ignores that the command gets back to their defaults, as `subprocess`
#: gives them (a pipe closed under the command must still stop it).
DEFAULTED = [getattr(_signal, name) for name in ("SIGPIPE", "SIGXFSZ", "SIGCHLD")
             if hasattr(_signal, name)]


def spawn(argv: list[str], *, env: dict[bytes, bytes] | None = None,
          output: int | None = None) -> int:
    """Start `argv` in its own session (so its own process group), standard input from
    the null device, `DEFAULTED` signals at their defaults; its pid. `env` and `output`
    (a descriptor for its stdout and stderr) default to the keeper's own. OSError when
    it cannot be started.

    Through ``posix_spawn`` (a vfork: no copy of the keeper's memory, about 1 ms less
    than ``fork`` then ``exec``), else fork and exec."""
    actions: list[tuple[int | str, ...]] = []
    if output is not None:
        actions += [(os.POSIX_SPAWN_DUP2, output, 1), (os.POSIX_SPAWN_DUP2, output, 2)]
    actions.append((os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0))
    try:
        return os.posix_spawnp(argv[0], argv, os.environ if env is None else env,
                               file_actions=actions, setsid=True, setsigdef=DEFAULTED)
    except (NotImplementedError, AttributeError):  # pragma: no cover - no POSIX_SPAWN_SETSID
        pass
    pid = os.fork()  # pragma: no cover - the same, by hand
    if pid:  # pragma: no cover
        return pid
    try:  # pragma: no cover - the child: exec or exit, never return
        os.setsid()
        if output is not None:
            os.dup2(output, 1)
            os.dup2(output, 2)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # the lifeline stays the keeper's
        for number in DEFAULTED:
            _signal.signal(number, _signal.SIG_DFL)
        if env is None:
            os.execvp(argv[0], argv)
        os.execve(argv[0], argv, env)
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


def kill_tree(pid: int, code: int | None = None) -> int:
    """Kill the command's group and collect its status (unless `code` was), then kill
    every descendant left, until none is; returns the command's status. A command that
    left nothing behind costs two system calls: /proc is read only when a child is left."""
    kill(pid, group=True)
    if code is None:  # before reap(): its status must not be collected by waitpid(-1)
        code = status(pid, block=True)
        assert code is not None
    for _ in range(200):
        if reap():
            break
        for other in descendants(os.getpid()):
            kill(other)
        select.select([], [], [], 0.01)
    return code


def kill_adopted(keepers: set[int]) -> None:
    """Kill every process this server adopted, until none is left: the tree of a keeper
    its bar killed (a subreaper's orphans come to the nearest subreaper above them), its
    command's group first. Processes under a live keeper stay that keeper's."""
    me = os.getpid()
    for _ in range(200):
        adopted = [pid for pid, parent in parents().items()
                   if parent == me and pid not in keepers]
        if not adopted:
            return
        for pid in adopted:
            kill(pid, group=True)  # the command leads its own group
            kill(pid)
        select.select([], [], [], 0.01)  # their children come to the server in turn


def main(argv: list[str]) -> int:
    """Keep ``argv`` (a shell and its command) for crewbook without a server: its line on
    standard input, its output on standard output (see `keep`); then end."""
    become_subreaper()
    line, output = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)  # the output closes with the command's tree
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    keep(line, output, argv, os.getcwd(), dict(os.environb), served=False)
    return 0


def say(line: int, message: str) -> bool:
    """Write one line to crewbook; False when it no longer listens."""
    try:
        os.write(line, f"{message}\n".encode())
    except OSError:
        return False
    return True


def keep(line: int, output: int, argv: list[str], cwd: str, env: dict[bytes, bytes], *,
         served: bool = True) -> bool:
    """Keep one command (for a keeper server, see `serve`, or alone, `main`): `line` is
    this command's own socket to crewbook, its lifeline and where it says ``K<its pid>``
    (and ``R<the server's pid>`` when `served`) as it takes the command, ``P<command
    pid>`` once it runs, ``S<status>`` once its tree is dead; `output` is for its stdout
    and stderr. False when the keeper must end (a SIGTERM)."""
    stopping = [False]

    def stop(signum: int, frame: object) -> None:
        stopping[0] = True

    _signal.signal(_signal.SIGTERM, stop)
    # before the command: it might kill its keeper at once; R: the server, where the
    # command's tree goes then (crewbook waits for the server to have killed it)
    say(line, f"K{os.getpid()}\nR{os.getppid()}" if served else f"K{os.getpid()}")
    try:
        os.chdir(cwd)
        pid = spawn(argv, env=env, output=output)
    except OSError as exc:  # said on the command's output, as a shell would
        os.write(output, f"crewbook bar keeper: cannot run {argv[0]} in {cwd}: {exc}\n"
                 .encode())
        pid = 0
    os.close(output)  # the output closes once the command's tree is gone
    if not pid:
        say(line, "S127")
    elif not say(line, f"P{pid}"):
        stopping[0] = True  # crewbook is gone already: kill the tree at once
    if pid:
        exited = exit_fd(pid)
        watched = [line] if exited is None else [line, exited]
        code = status(pid, block=False)
        while not stopping[0] and code is None:
            ready, _, _ = select.select(watched, [], [], POLL)
            if line in ready:
                break  # crewbook asked it to stop (a timeout), or died
            code = status(pid, block=False)
        if exited is not None:
            os.close(exited)
        code = kill_tree(pid, code)  # no child left: the keeper can take another
        say(line, f"S{code}")  # unheard when crewbook died, or gave up waiting
    os.close(line)
    _signal.signal(_signal.SIGTERM, _signal.SIG_DFL)
    return not stopping[0]


def serve(control: int) -> int:
    """The keeper server: one per crewbook process, started once, so that a bar command
    costs no Python start and no fork (`crewbook.core.bar`).

    Requests come on `control` (a ``SOCK_SEQPACKET`` socket), each taken by one of the
    idle keepers the server forked (`keeper`). A keeper says on its own pipe ``T`` when
    it took a request, ``F`` when it is free again (its command's tree dead: it has no
    child left), ``E`` when it saw crewbook close `control`. The server forks a keeper
    whenever none is idle, so one waits for the next request while another runs a
    command; in a loop that runs its bar commands one after the other, two keepers take
    them in turns and no fork is left on a command's path. The server ends at an ``E``
    (each keeper still running a command kills its tree: its line closed too), or when a
    keeper it forked dies before taking any request.

    The server is a subreaper too: a bar that kills its keeper leaves its tree to the
    server, which kills it at once (`kill_adopted`); crewbook kills a keeper its bar
    stopped (SIGSTOP), so that tree comes to the server the same way.
    """
    import marshal  # noqa: F401 - once here, not in every keeper
    import socket  # noqa: F401

    if sys.platform.startswith("linux"):
        import ctypes  # noqa: F401 - for become_subreaper
    if os.fork():  # crewbook waits for this first process, not for the server
        os._exit(0)
    become_subreaper()  # not inherited across fork: each keeper asks for itself
    _signal.signal(_signal.SIGCHLD, _signal.SIG_IGN)  # keepers are reaped by the kernel
    keepers: dict[int, bytes] = {}  # the read end of a keeper's pipe: what it last said
    pids: dict[int, int] = {}  # the read end of a keeper's pipe: the keeper's pid
    while True:
        if all(said == b"T" for said in keepers.values()):  # none idle
            taken, told = os.pipe()
            pid = os.fork()
            if not pid:
                code = 1
                try:
                    for fd in [taken, *keepers]:
                        os.close(fd)
                    _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
                    code = keeper(control, told)
                finally:
                    os._exit(code)
            os.close(told)
            pids[taken] = pid
            keepers[taken] = b"N"  # new: idle, yet to take a request
        ready, _, _ = select.select(list(keepers), [], [])
        for fd in ready:
            said = os.read(fd, 64).split()  # the last word is the state
            if said:
                if said[-1] not in (b"T", b"F"):
                    return 0  # E: crewbook closed the control socket
                keepers[fd] = said[-1]
                continue
            os.close(fd)  # the keeper died: killed by its bar, or by crewbook
            del pids[fd]
            if keepers.pop(fd) == b"N":
                return 1  # a keeper that cannot serve: crewbook runs commands alone
            kill_adopted(set(pids.values()))


def keeper(control: int, told: int) -> int:
    """A keeper of the server: takes requests on `control` (a marshalled ``(argv, cwd,
    env, umask)`` with two descriptors, the command's output and its line) and keeps each
    command (`keep`) until its tree is dead, then takes the next."""
    import marshal
    import socket

    become_subreaper()
    sock = socket.socket(fileno=control)
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(sock, 1 << 20, 2)
        except OSError:
            return 1
        if not message and not fds:
            say(told, "E")  # crewbook closed the control socket
            return 0
        try:
            argv, cwd, env, umask = marshal.loads(message)
            refused = "" if len(fds) == 2 else f"{len(fds)} descriptors, not 2"
        except (ValueError, TypeError, EOFError) as exc:
            refused = str(exc)
        if refused:
            # its line closes without a word: crewbook sees a command that never ran,
            # and runs it under a keeper of its own, after this on its output
            if fds:
                say(fds[0], f"crewbook bar keeper: request refused: {refused}")
            for fd in fds:
                os.close(fd)
            continue
        for fd in fds:
            os.set_inheritable(fd, False)
        if umask >= 0:  # crewbook's own, as a child of crewbook would have it
            os.umask(umask)
        output, line = fds
        if not say(told, "T"):  # the server is gone: no one would fork a keeper when
            sock.close()  # needed; this one takes no other request
        if not keep(line, output, list(argv), str(cwd), dict(env)) or sock.fileno() < 0:
            return 0
        if not say(told, "F"):
            return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        sys.exit(serve(0))
    sys.exit(main(sys.argv[1:]))
