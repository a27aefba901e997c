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
- if the bar kills its keeper, the command's process group is killed and the run says
  so (exit -9); on Linux the keeper server is a subreaper too, so the rest of the tree
  (a child that called ``setsid`` included) comes to it and it kills that before the
  run is reported; a keeper its bar stopped (SIGSTOP) is seen within
  `keeping.LINE_CHECK` s and killed, the same way (without the server, as on macOS,
  the command's process group alone is killed); a keeper server that died is replaced
  at the next command;
- it runs with `BAR_ROOT_ENV` (``CREWBOOK_BAR_ROOT``) set to the project's root, so a
  crewbook it starts that would wait for the project's lock, held by the loop measuring
  the bar, is refused at once instead (`core.commit.taking_turn`);
- its output (stdout and stderr together) is read as it comes, and only a bounded part
  is kept: the first and the last ``max_output / 2`` bytes, with the number of bytes
  cut, so a command printing gigabytes costs a few KiB of memory;
- its ``cwd`` must be inside the project (an `UnsafePathError` otherwise, before
  anything runs);
- it can be stopped from another thread (`stopping`: the MCP server when its client
  cancels the call or leaves): the whole tree is killed within `keeping.LINE_CHECK` s,
  as at the timeout, and `run_command` raises `LoopRefused` (``bar_stopped``) instead of
  returning a run, so no ``bar`` event is logged for it.

The result is a `BarRun` (exit code, duration, timed out, output tail), which the
engines log as a ``bar`` event. On systems without process groups (Windows) the
command is killed alone. crewbook's side of the keeper is `core.keeping`, the bounded
output `core.bar_output`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Final, Protocol

from pydantic import BaseModel, ConfigDict

from ..errors import CrewError, LoopRefused, Problem, UnsafePathError
from .bar_output import DEFAULT_MAX_OUTPUT, BoundedOutput
from .keeping import run_kept
from .paths import kind_of, path_problem

#: Seconds a bar command may run before its whole process group is killed (DESIGN rule 7).
DEFAULT_TIMEOUT: Final = 600.0
#: The environment variable naming the project whose bar a command runs in (its root,
#: resolved): crewbook inside a bar refuses at once what would wait for that project's
#: lock, held by the loop measuring the bar (`core.commit.taking_turn`).
BAR_ROOT_ENV: Final = "CREWBOOK_BAR_ROOT"


#: The stop of the bar commands run in this context (`stopping`); None: run to the end.
_STOP: ContextVar[threading.Event | None] = ContextVar("crewbook_bar_stop", default=None)


@contextmanager
def stopping(stop: threading.Event) -> Iterator[None]:
    """Within this block (in this thread), a bar command stops when `stop` is set: its
    whole tree is killed and `run_command` raises `LoopRefused` (``bar_stopped``). For a
    caller that runs a loop's call in a worker thread and may give up on it (the MCP
    server, when its client cancels the request or leaves): the loop code in between
    needs no parameter for it."""
    token = _STOP.set(stop)
    try:
        yield
    finally:
        _STOP.reset(token)


def _stopped(name: str, command: str) -> LoopRefused:
    """The refusal of a bar command stopped by its caller (`stopping`)."""
    return LoopRefused(f"the bar's {name} command was stopped ({command!r}): the call was "
                       "cancelled or its client left; the bar was not recorded, and the "
                       "next step measures it again", code="bar_stopped")


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
    `CrewError` when the shell cannot be started, before anything runs, and
    `LoopRefused` (``bar_stopped``) when its caller stopped it (`stopping`).
    """
    stop = _STOP.get()
    if stop is not None and stop.is_set():
        raise _stopped(name, command)
    folder = confined_cwd(root, cwd)
    shown_cwd = folder.relative_to(root.resolve()).as_posix() or "."
    started = time.monotonic()
    deadline = started + timeout
    argv = ["/bin/sh", "-c", command]
    out = BoundedOutput(max_output)
    env = {BAR_ROOT_ENV: str(root.resolve())}
    code, timed_out = run_kept(argv, folder, env, out, deadline, name, stop)
    if stop is not None and stop.is_set():
        raise _stopped(name, command)
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


__all__ = ["BAR_ROOT_ENV", "DEFAULT_MAX_OUTPUT", "DEFAULT_TIMEOUT", "BarRun", "BarSpec",
           "BoundedOutput", "bar_event", "confined_cwd", "run_bar", "run_command",
           "stopping"]
