"""THE bar runner (DESIGN rule 7), used by the crew loop and the autonomous loop.

`run_command` runs one configured shell command so that it can never hang or kill the
loop that asked for it:

- it runs under the keeper (`crewbook.crew.keeper`): a child subreaper that holds the
  command's whole tree (a child that calls ``setsid`` or double-forks included), in
  its own process group, stdin closed;
- it has a timeout (600 s by default, settable per command and per loop); at the
  timeout the WHOLE tree is killed, children and grandchildren included;
- when the command exits, whatever it left running is killed too, so a bar never
  leaves processes behind, and a background child holding the output pipe cannot make
  the loop wait;
- if crewbook dies while a bar runs (even by ``kill -9``), the keeper's lifeline pipe
  closes and it kills the tree: nothing a bar started outlives crewbook;
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
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Final

from ..core.paths import kind_of, path_problem
from ..errors import CrewError, Problem, UnsafePathError
from .model import DEFAULT_MAX_OUTPUT, DEFAULT_TIMEOUT, BarCommand, BarRun

#: Seconds to wait for the last output once the command itself has exited.
EXIT_GRACE: Final = 0.5
#: Whether bar commands run under the keeper (`crewbook.crew.keeper`, POSIX).
KEEPER: Final = hasattr(os, "killpg")
#: Seconds the keeper has to kill a command's tree once told to stop.
KEEPER_GRACE: Final = 10.0
_CHUNK: Final = 65536


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
    lifeline: int | None = None
    try:
        if KEEPER:  # POSIX: through the keeper, so no process of the bar outlives it
            reader, lifeline = os.pipe()
            try:
                proc = subprocess.Popen(  # a command the user configured (rule 7)
                    [sys.executable, "-I", "-S", str(Path(__file__).with_name("keeper.py")),
                     "/bin/sh", "-c", command], cwd=folder, stdin=reader,
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
            finally:
                os.close(reader)
        else:  # pragma: no cover - Windows: the command alone
            proc = subprocess.Popen(
                command, shell=True, cwd=folder, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError as exc:
        if lifeline is not None:
            os.close(lifeline)
        raise CrewError("cannot start the bar command", [Problem(
            "bar_not_started", f"{name}: {exc}", key=name)]) from None
    out = BoundedOutput(max_output)
    deadline = started + timeout
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
    duration_ms = int((time.monotonic() - started) * 1000)
    text = out.text()
    return BarRun(
        name=name, command=command, cwd=shown_cwd,
        exit_code=None if timed_out else proc.returncode, timed_out=timed_out,
        duration_ms=duration_ms, output_bytes=out.total, truncated=out.truncated,
        tail=text[-tail_chars:] if tail_chars else "",
    )


def run_bar(
    bar: dict[str, BarCommand], *, root: Path, timeout: float = DEFAULT_TIMEOUT,
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


__all__ = ["BoundedOutput", "bar_event", "confined_cwd", "run_bar", "run_command"]
