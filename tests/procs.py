"""Process helpers the tests of separate packages share (tests/ is on the path)."""

from __future__ import annotations


def alive(pid: int) -> bool:
    """Whether `pid` runs: a zombie waiting for its parent counts as ended (Linux
    `/proc`; the tests that use it are skipped where there is none)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:].split()[0] != b"Z"
