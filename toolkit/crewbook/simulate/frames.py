"""The frames of a simulation: outcomes (one row per run), sweeps, summaries.

Outcome columns, in order:

==================  ==========  ====================================================
``run``             Int64       the run's index (its seed is ``(seed, run)``)
``finished_reason`` category    how it ended: the loop's reason (``done``,
                                ``escalated``, ``pull_request``, ``already_done``,
                                ``failed``…) or ``stuck`` / ``unfinished``
``finished``        bool        whether the loop itself finished the run
``acts``            Int64       accepted reports
``rounds``          Int64       times work was sent back
``refusals``        Int64       reports the loop refused (counted, never hidden)
``tokens_in``       Int64       prompt tokens of the accepted reports
``tokens_out``      Int64       completion tokens
``tokens``          Int64       both
``cost``            float64     cost of the accepted reports
``duration_ms``     Int64       simulated time the accepted reports took
``attempts.<role>`` Int64       the highest attempt of each role (or stage) among its
                                accepted reports, as its contracts say (a stage's
                                tries, a delivery role's launches); one column each
``refused.<code>``  Int64       refusals per code (``wait_expired``…), one column each
==================  ==========  ====================================================

A sweep frame starts with ``setting`` (Int64, the combination's number) and one
column per swept key (Int64, float64, bool or category), then the same columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from .runs import RunResult

COLUMNS = ("run", "finished_reason", "finished", "acts", "rounds", "refusals", "tokens_in",
           "tokens_out", "tokens", "cost", "duration_ms")
_INTS = ("run", "acts", "rounds", "refusals", "tokens_in", "tokens_out", "duration_ms")


@dataclass
class Outcomes:
    """The outcomes of a chunk of runs as columns: what a worker sends back when no
    ledger is kept (a few arrays pickle in microseconds; a list of `RunResult` objects
    costs the parent a Python object per run to unpickle and to read again)."""

    ints: np.ndarray[Any, np.dtype[np.int64]]  # one row per name of _INTS
    cost: np.ndarray[Any, np.dtype[np.float64]]
    finished: np.ndarray[Any, np.dtype[np.bool_]]
    reasons: list[str]
    attempts: dict[str, np.ndarray[Any, np.dtype[np.int64]]]  # first-seen key order
    refused: dict[str, np.ndarray[Any, np.dtype[np.int64]]]

    def __len__(self) -> int:
        return len(self.reasons)


def outcomes_of(results: Sequence[RunResult]) -> Outcomes:
    """`results` as columns (what `outcomes_frame` reads)."""
    n = len(results)
    ints = np.array([[getattr(r, name) for r in results] for name in _INTS],
                    dtype=np.int64).reshape(len(_INTS), n)

    def counts(attr: str) -> dict[str, np.ndarray[Any, np.dtype[np.int64]]]:
        keys = _keys(getattr(r, attr) for r in results)
        return {k: np.array([getattr(r, attr).get(k, 0) for r in results], dtype=np.int64)
                for k in keys}

    return Outcomes(ints, np.array([r.cost for r in results], dtype=np.float64),
                    np.array([r.finished for r in results], dtype=bool),
                    [r.finished_reason for r in results], counts("attempts"),
                    counts("refused"))


def outcomes_frame(results: Sequence[RunResult] | Sequence[Outcomes]) -> pd.DataFrame:
    """One typed row per run (see the module docstring), from the runs' results or
    from chunks of `Outcomes` (joined in order)."""
    parts = [r for r in results if isinstance(r, Outcomes)]
    if len(parts) != len(results):
        parts = [outcomes_of([r for r in results if not isinstance(r, Outcomes)])]
    ints = np.concatenate([p.ints for p in parts], axis=1) if parts else \
        np.zeros((len(_INTS), 0), dtype=np.int64)
    columns: dict[str, Any] = {name: pd.array(ints[i], dtype="Int64")
                               for i, name in enumerate(_INTS)}
    reasons = [x for p in parts for x in p.reasons]
    columns["finished_reason"] = pd.Categorical(reasons, categories=sorted(set(reasons)))
    columns["finished"] = pd.array(_joined([p.finished for p in parts], bool), dtype=bool)
    columns["tokens"] = columns["tokens_in"] + columns["tokens_out"]
    columns["cost"] = pd.array(_joined([p.cost for p in parts], np.float64), dtype="float64")
    frame = pd.DataFrame({name: columns[name] for name in COLUMNS})
    roles = _keys(p.attempts for p in parts)
    codes = _keys(p.refused for p in parts)
    extra = {f"attempts.{role}": pd.array(_column(parts, "attempts", role), dtype="Int64")
             for role in roles}
    extra |= {f"refused.{code}": pd.array(_column(parts, "refused", code), dtype="Int64")
              for code in sorted(codes)}
    if extra:
        frame = pd.concat([frame, pd.DataFrame(extra)], axis=1)
    return frame


def _joined(arrays: list[np.ndarray[Any, Any]], dtype: Any) -> np.ndarray[Any, Any]:
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype=dtype)


def _column(parts: Sequence[Outcomes], attr: str, key: str) -> np.ndarray[Any, Any]:
    """One count column over the chunks (0 for runs of a chunk that never had `key`)."""
    return _joined([getattr(p, attr).get(key, np.zeros(len(p), dtype=np.int64))
                    for p in parts], np.int64)


def _keys(dicts: Any) -> list[str]:
    seen: dict[str, None] = {}
    for d in dicts:
        for key in d:
            seen.setdefault(key, None)
    return list(seen)


def sweep_frame(keys: Sequence[str], combos: Sequence[tuple[Any, ...]],
                results: Sequence[Sequence[RunResult] | Sequence[Outcomes]]) -> pd.DataFrame:
    """The outcomes of every setting, with the setting's values in front."""
    parts = []
    for number, (combo, per) in enumerate(zip(combos, results, strict=True)):
        frame = outcomes_frame(per)
        front: dict[str, Any] = {"setting": pd.array([number] * len(frame), dtype="Int64")}
        for key, value in zip(keys, combo, strict=True):
            front[key] = [value] * len(frame)
        parts.append(pd.concat([pd.DataFrame(front), frame], axis=1))
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    for key in keys:
        out[key] = _typed(out[key])
    out["finished_reason"] = out["finished_reason"].astype("category")
    for column in out.columns:
        if column.startswith(("attempts.", "refused.")):
            out[column] = out[column].fillna(0).astype("Int64")
    return out


def _typed(column: pd.Series) -> pd.Series:
    values = column.tolist()
    if all(isinstance(v, bool) for v in values):
        return column.astype(bool)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return column.astype("Int64")
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return column.astype("float64")
    return column.astype(str).astype("category")


def outcome_mix(frame: pd.DataFrame, by: str | Sequence[str] | None = None) -> pd.DataFrame:
    """How runs ended: ``by…``, ``finished_reason``, ``runs`` (Int64) and ``share`` (0-1)."""
    keys = [by] if isinstance(by, str) else list(by or [])
    counts = (frame.groupby([*keys, "finished_reason"], observed=True).size()
              .rename("runs").reset_index())
    totals = counts.groupby(keys)["runs"].transform("sum") if keys else counts["runs"].sum()
    counts["share"] = (counts["runs"] / totals).astype("float64")
    counts["runs"] = counts["runs"].astype("Int64")
    return counts


def summarise(frame: pd.DataFrame, by: str | Sequence[str] | None = None) -> pd.DataFrame:
    """Per group (or overall): ``runs``, ``finished`` share, mean ``acts``, ``rounds``,
    ``refusals``, ``tokens``, ``cost``, and the median and 90th percentile of
    ``duration_ms`` and ``cost``."""
    keys = [by] if isinstance(by, str) else list(by or [])
    data = frame.assign(_all=0) if not keys else frame
    group = data.groupby(keys or ["_all"], observed=True)
    out = pd.DataFrame({
        "runs": group.size().astype("Int64"),
        "finished": group["finished"].mean().astype("float64"),
        "acts": group["acts"].mean().astype("float64"),
        "rounds": group["rounds"].mean().astype("float64"),
        "refusals": group["refusals"].mean().astype("float64"),
        "tokens": group["tokens"].mean().astype("float64"),
        "cost": group["cost"].mean().astype("float64"),
        "cost_p90": group["cost"].quantile(0.9).astype("float64"),
        "duration_ms_p50": group["duration_ms"].median().astype("float64"),
        "duration_ms_p90": group["duration_ms"].quantile(0.9).astype("float64"),
    })
    return out.reset_index(drop=not keys)


def ledger_frame(lines: Sequence[str]) -> pd.DataFrame:
    """The standard ledger frame (as `read_ledger` builds it) of ledger lines."""
    from ..ledger.parse import parse_bytes
    from ..ledger.reader import build_frame

    data = "".join(line + "\n" for line in lines).encode("utf-8")
    parsed = parse_bytes(data, "<simulation>")
    return build_frame([parsed])
