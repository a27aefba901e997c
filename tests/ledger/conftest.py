"""Shared fixtures for the ledger tests: the bundled ledgers and a line writer."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "ledgers"
HISTORY = DATA / "history"
SPECKIT_PROJECT = DATA / "speckit-project"
SPECKIT_RUNS = SPECKIT_PROJECT / ".specify" / "workflows" / "runs"


def event(n: int, **fields: Any) -> dict[str, Any]:
    """Valid event number `n` of run r1 (an `act` by the developer); `fields` override."""
    base: dict[str, Any] = {
        "v": 1, "ts": f"2025-03-01T09:{n // 60 % 60:02d}:{n % 60:02d}Z", "run": "r1",
        "seq": n, "loop": "crew", "kind": "act", "role": "developer", "stage": "build",
    }
    base.update(fields)
    return base


def without_nulls(value: Any) -> Any:
    """What a payload reads back as: its null-valued keys left out, at every depth."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"))


@pytest.fixture
def write_ledger(tmp_path: Path) -> Callable[..., Path]:
    """Write lines (dicts or raw strings) to a fresh .jsonl file; return its path."""
    counter = iter(range(1_000_000))

    def write(lines: list[dict[str, Any] | str], name: str | None = None,
              end: str = "\n") -> Path:
        path = tmp_path / (name or f"ledger-{next(counter)}.jsonl")
        text = "\n".join(x if isinstance(x, str) else line(x) for x in lines)
        path.write_text(text + (end if lines else ""), encoding="utf-8")
        return path

    return write
