"""One act, one commit: a loop's state file and its ledger move together.

A loop whose state lives in a file (the crew and autonomous loops, `_codev/crew/`) logs an
act's events in a ledger and saves its new state. A crash between the two used to leave
them disagreeing. `StateStore.commit` makes the pair one commit:

1. the new state is written, whole, to ``<state>.pending`` with where the ledger ends now
   and the first event to come (its run, kind and ts);
2. the events are appended to the ledger (one write: the commit point);
3. the state file is replaced by the new state and the pending file removed.

`StateStore.load` (under the lock) first settles a pending file left by a crash: when the
ledger holds its first event at the recorded offset the state is rolled forward, else the
pending file is dropped (the act never happened, its caller never got an answer). So after
a ``kill -9`` at any instant the state and the ledger agree.

Every caller (a notebook's loop, the CLI, the MCP server) acts under one lock file
(`turn`), reentrant within a process, and a loop checks under it that the file is still
the one it read (`fresh`). State files are capped (`MAX_STATE_BYTES`).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import InvalidInputError, LoopRefused, NotFoundError, Problem
from .atomic import write_atomic
from .paths import file_or_absent, kind_of, read_capped
from .stamping import appender

M = TypeVar("M", bound=BaseModel)

#: Largest state file read (a crew state with thousands of acts is well under 1 MiB).
MAX_STATE_BYTES: Final = 16 * 1024 * 1024
#: Bytes of the ledger read back to settle a pending commit.
_PROBE_BYTES: Final = 1 << 20

_LOCKS: dict[str, Any] = {}
_LOCKS_GUARD = threading.Lock()


def _forget_locks_in_child() -> None:
    """After `fork`: the parent's locks belong to the parent (filelock refuses a lock
    inherited across fork), so the child opens its own on first use."""
    global _LOCKS_GUARD
    _LOCKS.clear()
    _LOCKS_GUARD = threading.Lock()  # another thread may have held it at the fork


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_locks_in_child)


def turn_lock(path: Path) -> Any:
    """The one `FileLock` of `path` in this process (reentrant; threads and processes
    take turns on it; a forked child gets its own). The path is checked to be a regular
    file or absent (`file_or_absent`) once, when its lock is made: every act takes the
    turn, and a ``stat`` each time found nothing new."""
    key = os.path.abspath(path)
    with _LOCKS_GUARD:
        lock = _LOCKS.get(key)
        if lock is None:
            from filelock import FileLock

            file_or_absent(Path(path), "lock file")
            lock = _LOCKS[key] = FileLock(key)
        return lock


def acquired(lock: Any, path: Path, timeout: float = -1) -> None:
    """Take `lock` (`path`'s turn lock); a path that became a folder, a link loop or
    anything but a regular file since the lock was made is the named error of
    `file_or_absent`, not the `OSError` the lock file's ``open`` raised."""
    from filelock import Timeout

    try:
        lock.acquire(timeout=timeout)
    except Timeout:
        raise
    except OSError:
        file_or_absent(Path(path), "lock file")
        raise


@contextmanager
def taking_turn(path: Path) -> Iterator[None]:
    """Hold `path`'s turn lock (`turn_lock`), waiting for it; but refused at once
    (`LoopRefused`, code ``inside_bar``) when this process runs inside a bar command of
    the project the lock belongs to (`core.bar.BAR_ROOT_ENV`) and the lock is held: the
    loop measuring that bar holds it until the bar ends, so a nested report would only
    wait for the bar's timeout."""
    from filelock import Timeout

    from .bar import BAR_ROOT_ENV

    lock = turn_lock(path)
    root = os.environ.get(BAR_ROOT_ENV)
    if root and Path(path).resolve().is_relative_to(root):
        try:
            acquired(lock, path, timeout=0)
        except Timeout:
            raise LoopRefused(
                f"this crewbook runs inside a bar command of the project {root} (as "
                f"{BAR_ROOT_ENV} says), and the loop measuring that bar holds the project's "
                "lock until the bar ends: a bar cannot report to, or step, the loop that "
                "runs it. Report once the bar has run, from outside it", "inside_bar",
            ) from None
    else:
        acquired(lock, path)
    try:
        yield
    finally:
        lock.release()


class StateStore(Generic[M]):
    """A loop's state file (`model`), its ledger file and the lock they share."""

    def __init__(self, state: Path, ledger: Path, lock: Path, model: type[M], *,
                 shown: str, missing: str,
                 problems: Callable[[ValidationError, str], list[Problem]]) -> None:
        self.path = state
        self.pending = state.with_name(state.name + ".pending")
        self.ledger = ledger
        self.lock = lock
        self.model = model
        self.shown = shown
        self.missing = missing
        self._problems = problems
        self._seen: str | None = None
        self._dumped: tuple[M, str] | None = None  # the state `commit` just serialised

    # ---------------------------------------------------------------- locking
    @contextmanager
    def turn(self) -> Iterator[None]:
        """Hold the lock: one caller at a time acts on the loop."""
        self.lock.parent.mkdir(parents=True, exist_ok=True)
        with taking_turn(self.lock):
            yield

    def fresh(self) -> bool:
        """Whether the state file is still the one last read or written here."""
        return self._digest() == self._seen

    @contextmanager
    def fresh_turn(self, reopen: str) -> Iterator[None]:
        """Hold the lock, and refuse (``stale``) when the state file changed since this
        loop read it; `reopen` names the call that opens the loop again."""
        with self.turn():
            if not self.fresh():
                raise LoopRefused("the loop's state file changed since this loop was opened "
                                  "(the CLI, the MCP server or another notebook acted); open "
                                  f"it again with {reopen}", code="stale")
            yield

    # ---------------------------------------------------------------- reading
    def exists(self) -> bool:
        """Whether there is a state (or a pending first state) to open."""
        return kind_of(self.path) != "missing" or kind_of(self.pending) != "missing"

    def load(self) -> M:
        """The state, after settling a commit a crash left pending (under the lock).

        When another caller holds the lock (an act being committed, a bar being measured
        for minutes), the committed state file is read as it is, without waiting: it is
        only ever replaced whole, and the holder settles any pending commit itself. A
        writer that opened such a state is refused as stale if the holder then moved on."""
        from filelock import Timeout

        self.lock.parent.mkdir(parents=True, exist_ok=True)
        lock = turn_lock(self.lock)
        try:
            acquired(lock, self.lock, timeout=0)
        except Timeout:
            return self._read()
        try:
            self.recover()
            return self._read()
        finally:
            lock.release()

    def _read(self) -> M:
        if kind_of(self.path) == "missing":
            raise NotFoundError(self.missing)
        data = read_capped(self.path, MAX_STATE_BYTES, shown=self.shown)
        try:
            state = self.model.model_validate_json(data)
        except ValidationError as exc:
            from ..errors import CrewError

            error = CrewError(f"{self.shown} is not a valid state file; start again with "
                              "force=True", self._problems(exc, self.shown))
            raise error.naming("force") from None
        self._seen = hashlib.blake2b(data, digest_size=16).hexdigest()
        return state

    def recover(self) -> bool | None:
        """Settle a pending commit (call under the lock): True rolled forward, False
        dropped, None when there was none."""
        try:
            raw = read_capped(self.pending, MAX_STATE_BYTES + _PROBE_BYTES,
                              shown=self.shown + ".pending")
        except NotFoundError:
            return None
        try:
            pending = json.loads(raw)
            offset, first, state = pending["offset"], pending["first"], pending["state"]
        except (ValueError, KeyError, TypeError):
            self.pending.unlink(missing_ok=True)  # written atomically: only a foreign file
            return False
        if self._logged(offset, first):
            write_atomic(self.path, json.dumps(state, indent=1, ensure_ascii=False) + "\n")
            self.pending.unlink(missing_ok=True)
            return True
        self.pending.unlink(missing_ok=True)
        return False

    def _logged(self, offset: Any, first: Any) -> bool:
        if not isinstance(offset, int) or offset < 0 or not isinstance(first, dict):
            return False
        if kind_of(self.ledger) != "file":  # never open a FIFO: it would block
            return False
        try:
            with open(self.ledger, "rb") as handle:
                handle.seek(offset)
                line = handle.readline(_PROBE_BYTES)
        except (OSError, ValueError):
            return False
        if not line.endswith(b"\n"):
            return False  # cut short by the crash: readers leave it out, so not logged
        try:
            event = json.loads(line)
        except ValueError:
            return False
        return isinstance(event, dict) and all(_same(k, event.get(k), v) for k, v in first.items())

    # ---------------------------------------------------------------- writing
    def commit(self, sink: Any, events: Sequence[Mapping[str, Any]], state: M) -> Any:
        """Log `events` in `sink` (a `Ledger` on this store's ledger file) and save `state`
        as one commit (see the module docstring). Call under `turn`."""
        if not events:
            self.save(state)
            return []
        try:
            offset = os.stat(self.ledger).st_size
        except FileNotFoundError:
            offset = 0
        head = events[0]
        first = {k: head[k] for k in ("run", "kind", "ts") if head.get(k) is not None}
        if "run" not in first:
            first["run"] = getattr(sink, "run", None)
        if "ts" in first and not isinstance(first["ts"], str):
            first["ts"] = first["ts"].isoformat()
        text = state.model_dump_json(indent=1)  # serialised once: the pending file and the state
        where = json.dumps({"offset": offset, "first": first}, ensure_ascii=False)
        write_atomic(self.pending, f'{where[:-1]}, "state": {text}}}\n')
        stored = appender(sink)(list(events))  # the engines' one seam to a sink
        self._dumped = (state, text)
        self.save(state)
        self.pending.unlink(missing_ok=True)
        return stored

    def save(self, state: M) -> None:
        """Write the state file (atomically) and remember it as the one this loop holds."""
        dumped, self._dumped = self._dumped, None
        text = (dumped[1] if dumped is not None and dumped[0] is state
                else state.model_dump_json(indent=1)) + "\n"
        write_atomic(self.path, text)
        self._seen = hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()

    def _digest(self) -> str | None:
        try:
            data = read_capped(self.path, MAX_STATE_BYTES, shown=self.shown)
        except (NotFoundError, InvalidInputError):
            return None
        return hashlib.blake2b(data, digest_size=16).hexdigest()


def _same(key: str, found: Any, wanted: Any) -> bool:
    """Whether a logged field is the one recorded (times compared as instants)."""
    if key != "ts" or found == wanted:
        return bool(found == wanted)
    from datetime import UTC, datetime

    def instant(value: Any) -> datetime | None:
        if not isinstance(value, str):
            return None
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)

    a, b = instant(found), instant(wanted)
    return a is not None and a == b


__all__ = ["MAX_STATE_BYTES", "StateStore", "taking_turn", "turn_lock"]
