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
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from .engine import RunResult

COLUMNS = ("run", "finished_reason", "finished", "acts", "rounds", "refusals", "tokens_in",
           "tokens_out", "tokens", "cost", "duration_ms")
_INTS = ("run", "acts", "rounds", "refusals", "tokens_in", "tokens_out", "duration_ms")


def outcomes_frame(results: Sequence[RunResult]) -> pd.DataFrame:
    """One typed row per run (see the module docstring)."""
    columns: dict[str, Any] = {}
    for name in _INTS:
        columns[name] = pd.array([getattr(r, name) for r in results], dtype="Int64")
    reasons = [r.finished_reason for r in results]
    columns["finished_reason"] = pd.Categorical(reasons, categories=sorted(set(reasons)))
    columns["finished"] = pd.array([r.finished for r in results], dtype=bool)
    columns["tokens"] = columns["tokens_in"] + columns["tokens_out"]
    columns["cost"] = pd.array([r.cost for r in results], dtype="float64")
    frame = pd.DataFrame({name: columns[name] for name in COLUMNS})
    roles = _keys(r.attempts for r in results)
    codes = _keys(r.refused for r in results)
    extra = {f"attempts.{role}": pd.array([r.attempts.get(role, 0) for r in results],
                                          dtype="Int64") for role in roles}
    extra |= {f"refused.{code}": pd.array([r.refused.get(code, 0) for r in results],
                                          dtype="Int64") for code in sorted(codes)}
    if extra:
        frame = pd.concat([frame, pd.DataFrame(extra)], axis=1)
    return frame


def _keys(dicts: Any) -> list[str]:
    seen: dict[str, None] = {}
    for d in dicts:
        for key in d:
            seen.setdefault(key, None)
    return list(seen)


def sweep_frame(keys: Sequence[str], combos: Sequence[tuple[Any, ...]],
                results: Sequence[Sequence[RunResult]]) -> pd.DataFrame:
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
