"""Run-history analyses: plain functions from a ledger frame to a summary DataFrame.

Each takes the frame `read_ledger` returns (filter it first with ordinary pandas:
``df[df.loop == "crew"]``) and returns a new DataFrame (pandas gives it its rich
display). Functions, not a ``df.ledger`` accessor: they compose with any frame that
has the columns, type-check, and register nothing globally (docs/ledger.md, "Why
functions").

Conventions they rely on (see `events.KIND_MEANINGS`): acts are ``report`` and
``verdict`` events; a send-back is a ``verdict`` or ``bar`` event whose verdict is
negative (`NEGATIVE_VERDICTS`); the finished reason is the verdict of ``finish``;
a task is ``payload["task"]`` (or the whole run when events name no task).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import pandas as pd

from ..errors import UsageError

if TYPE_CHECKING:
    from .parquet import LedgerFolder

#: Verdicts that let work go on.
POSITIVE_VERDICTS: Final = frozenset({
    "go", "approved", "approve", "pass", "passed", "done", "completed", "ok"})
#: Verdicts that send work back to the implementer.
NEGATIVE_VERDICTS: Final = frozenset({
    "no-go", "changes", "changes_requested", "rejected", "reject", "fail", "failed"})
#: Event kinds that are the work a role delivered (counted as acts).
ACT_KINDS: Final = ("report", "verdict")
#: Event kinds that close a span of work on a timeline.
SPAN_KINDS: Final = ("report", "verdict", "bar", "plan", "question", "answer")
#: Task label for events that name no task.
WHOLE_RUN: Final = "(whole run)"

_REQUIRED: Final = ("run", "ts", "kind")


def run_outcomes(df: pd.DataFrame | LedgerFolder) -> pd.DataFrame:
    """One row per run: loop, start, end, duration, acts, rounds, how it finished, spend.

    Columns: ``loop``, ``started``, ``ended``, ``duration`` (timedelta), ``events``,
    ``acts`` (report and verdict events), ``rounds`` (highest `attempt`: 1 means
    right first time), ``finished`` (bool), ``finished_reason`` (verdict of the last
    ``finish``; NA while running or after a crash), ``escalated`` (bool),
    ``tokens_in``, ``tokens_out``, ``tokens``, ``cost``. Sorted by start. A run
    with events its source did not time (null `ts`) has no ``ended`` nor ``duration``
    (NaT): unknown, never 0.
    """
    if not isinstance(df, pd.DataFrame):  # a LedgerFolder: DuckDB over Parquet
        return df.run_outcomes()
    _need(df, *_REQUIRED, "loop", "attempt", "verdict")
    # Group on the run names as text: a category index of a subset has codes of
    # another width (int8 vs int16 past 127 runs), which pandas cannot reindex across.
    df = df.assign(run=df["run"].astype(object))
    g = df.groupby("run", sort=False)
    out = pd.DataFrame({
        "loop": g["loop"].first(),
        "started": g["ts"].min(),
        "ended": g["ts"].max(),
    })
    # A run with events the source did not time (ts null: imports from logs with no
    # clock) has no known end: its duration is unknown (NaT), never 0.
    unclocked = df["ts"].isna().groupby(df["run"], sort=False).any()
    out["ended"] = out["ended"].where(~unclocked.reindex(out.index).to_numpy(bool))
    out["duration"] = out["ended"] - out["started"]
    out["events"] = g.size().astype("Int64")
    kinds = df["kind"].astype(object)
    out["acts"] = _count(df[kinds.isin(ACT_KINDS)], out.index)
    out["rounds"] = g["attempt"].max().astype("Int64")
    finish = df[kinds == "finish"].groupby("run")["verdict"].last()
    out["finished"] = out.index.isin(finish.index)
    reason = finish.astype(object).reindex(out.index)
    out["finished_reason"] = reason.astype("category")
    out["escalated"] = out.index.isin(df.loc[kinds == "escalate", "run"].unique())
    for name in ("tokens_in", "tokens_out"):
        out[name] = (g[name].sum(min_count=1) if name in df.columns else pd.NA)
        out[name] = out[name].astype("Int64")
    out["tokens"] = out["tokens_in"].add(out["tokens_out"], fill_value=0).astype("Int64")
    out["cost"] = g["cost"].sum(min_count=1).astype("float64") if "cost" in df.columns \
        else float("nan")
    out.index = pd.Index(out.index.astype(str), name="run")
    return out.sort_values(["started", "run"], kind="stable")  # ties broken by name


def usage_by_role(df: pd.DataFrame | LedgerFolder,
                  by: str | Sequence[str] = ("role", "stage")) -> pd.DataFrame:
    """Time, tokens and cost per role and stage (or any columns `by` names).

    Columns: ``events``, ``acts``, ``time`` (sum of `duration_ms` as a timedelta),
    ``tokens_in``, ``tokens_out``, ``tokens``, ``cost``, and the share of the total of
    ``time``, ``tokens`` and ``cost`` (0–1). Events with no role are left out when
    grouping by role. Sorted by time spent, largest first.
    """
    if not isinstance(df, pd.DataFrame):  # a LedgerFolder: DuckDB over Parquet
        return df.usage_by_role(by)
    keys = [by] if isinstance(by, str) else list(by)
    _need(df, *keys, "kind", "duration_ms", "tokens_in", "tokens_out", "cost")
    data = df.dropna(subset=["role"]) if "role" in keys else df
    g = data.groupby(keys, observed=True, sort=True, dropna=False)
    out = pd.DataFrame({"events": g.size()})
    out["acts"] = g["kind"].agg(lambda k: int(k.astype(object).isin(ACT_KINDS).sum()))
    out["time"] = pd.to_timedelta(g["duration_ms"].sum(min_count=0).astype("float64"),
                                  unit="ms")
    for name in ("tokens_in", "tokens_out"):
        out[name] = g[name].sum().astype("Int64")
    out["cost"] = g["cost"].sum().astype("float64")
    return usage_finish(out)


def usage_finish(out: pd.DataFrame) -> pd.DataFrame:
    """The last steps of `usage_by_role` (totals, shares, dtypes, order) on per-group
    ``events``, ``acts``, ``time``, ``tokens_in``, ``tokens_out`` and ``cost``, groups in
    key order: shared by the pandas and the DuckDB (`parquet`) versions."""
    out["tokens"] = out["tokens_in"] + out["tokens_out"]
    out["cost"] = out.pop("cost")
    for name in ("time", "tokens", "cost"):
        total = out[name].sum()
        share = out[name] / total if total else out[name] * 0
        out[f"{name}_share"] = pd.to_numeric(share, errors="coerce").astype("float64").round(4)
    out = out.astype({"events": "Int64", "acts": "Int64"})
    return out.sort_values("time", ascending=False, kind="stable")


def rework(df: pd.DataFrame | LedgerFolder) -> pd.DataFrame:
    """How often work went back to the implementer, per task and per cause.

    Rows: every (run, task) with work done (report, verdict or bar events).
    Columns: one per cause, e.g. ``qa no-go``, ``reviewer changes``, ``bar fail``
    (counts of send-backs), then ``sendbacks`` (their total) and ``rounds`` (highest
    attempt). ``rework(df).sum()`` gives the totals per cause;
    ``(rework(df).sendbacks > 0).mean()`` the share of tasks that needed rework.
    """
    if not isinstance(df, pd.DataFrame):  # a LedgerFolder: DuckDB over Parquet
        return df.rework()
    _need(df, *_REQUIRED, "role", "verdict", "attempt", "seq")
    kinds = df["kind"].astype(object)
    work = df.assign(task=_tasks(df), run=df["run"].astype(object))
    tasks = work[kinds.isin((*ACT_KINDS, "bar"))]
    group = tasks.groupby(["run", "task"], sort=False)
    # Tasks in an explicit order: by run, then as they first came up in it (lowest seq).
    base = pd.DataFrame({"first": group["seq"].min(), "rounds": group["attempt"].max()})
    verdicts = df["verdict"].astype(object)
    back = work[kinds.isin(("verdict", "bar")) & verdicts.isin(NEGATIVE_VERDICTS)]
    role = back["role"].astype(object).where(back["role"].notna(), back["kind"].astype(object))
    cause = role.astype(str) + " " + back["verdict"].astype(str)
    counts = back.assign(cause=cause).groupby(["run", "task", "cause"]).size()
    return rework_finish(base, counts)


def rework_finish(base: pd.DataFrame, counts: pd.Series) -> pd.DataFrame:
    """The last steps of `rework`: `base` has ``first`` (lowest seq) and ``rounds`` per
    (run, task); `counts` the send-backs per (run, task, cause). Shared by the pandas
    and the DuckDB versions."""
    ordered = base.reset_index().sort_values(["run", "first", "task"], kind="stable")
    rounds = ordered.set_index(["run", "task"])["rounds"].astype("Int64")
    causes_table = counts.unstack("cause", fill_value=0) if len(counts) else pd.DataFrame(
        index=pd.MultiIndex.from_arrays([[], []], names=["run", "task"]))
    out = pd.DataFrame(index=rounds.index).join(causes_table, how="left").fillna(0)
    causes = sorted(c for c in out.columns)
    out = out[causes].astype("Int64")
    out["sendbacks"] = out.sum(axis=1).astype("Int64") if causes else pd.array(
        [0] * len(out), dtype="Int64")
    out["rounds"] = rounds
    out.index = pd.MultiIndex.from_arrays(
        [out.index.get_level_values(0).astype(str), out.index.get_level_values(1)],
        names=["run", "task"])
    out.columns.name = None
    return out


def verdict_funnel(df: pd.DataFrame | LedgerFolder) -> pd.DataFrame:
    """Verdicts per attempt and judging role: counts of each verdict and the pass rate.

    Rows: attempt (1, 2, …). Columns: (role, verdict) counts, e.g. (qa, go),
    (qa, no-go), (reviewer, approved), (reviewer, changes), then (role, pass rate):
    the share of that role's verdicts at that attempt that were positive.

    Each analysis also takes a `LedgerFolder` (a folder of Parquet files) in place of
    the frame: DuckDB then computes it without loading the events.
    """
    if not isinstance(df, pd.DataFrame):  # a LedgerFolder: DuckDB over Parquet
        return df.verdict_funnel()
    _need(df, *_REQUIRED, "role", "verdict", "attempt")
    kinds = df["kind"].astype(object)
    v = df[(kinds == "verdict") & df["role"].notna() & df["verdict"].notna()]
    attempt = v["attempt"].fillna(1).astype("int64")
    table = pd.crosstab(attempt.rename("attempt"),
                        [v["role"].astype(str).rename("role"),
                         v["verdict"].astype(str).rename("verdict")])
    return funnel_finish(table)


def funnel_finish(table: pd.DataFrame) -> pd.DataFrame:
    """The last steps of `verdict_funnel` on the counts per attempt (rows) and (role,
    verdict) (columns). Shared by the pandas and the DuckDB versions."""
    pairs = [(str(c[0]), str(c[1])) for c in table.columns.tolist()]
    columns: list[tuple[str, str]] = []
    data: dict[tuple[str, str], Any] = {}
    for role in sorted({r for r, _ in pairs}):
        verdicts = sorted((v for r, v in pairs if r == role),
                          key=lambda x: (x not in POSITIVE_VERDICTS, x))
        total = pd.Series(0, index=table.index, dtype="int64")
        good = pd.Series(0, index=table.index, dtype="int64")
        for verdict in verdicts:
            counts = table[(role, verdict)]
            columns.append((role, verdict))
            data[(role, verdict)] = counts.astype("Int64")
            total = total + counts
            if verdict in POSITIVE_VERDICTS:
                good = good + counts
        columns.append((role, "pass rate"))
        data[(role, "pass rate")] = (good / total.where(total > 0)).round(3)
    out = pd.DataFrame(data, index=table.index, columns=pd.MultiIndex.from_tuples(
        columns, names=["role", "verdict"]) if columns else None)
    out.index.name = "attempt"
    return out


def timeline(df: pd.DataFrame, run: str | None = None) -> pd.DataFrame:
    """Spans of work for a Gantt chart: who worked on what, from when to when.

    One row per event that closes a piece of work (`SPAN_KINDS`). ``end`` is its `ts`;
    ``start`` is ``end - duration_ms`` when measured, else the ts of the role's
    preceding ``act`` in the run, else ``end`` (an instant). Columns: ``run``,
    ``role`` (``bar`` for bar measures without a role), ``stage``, ``kind``,
    ``verdict``, ``attempt``, ``start``, ``end``, ``duration``, ``summary``. Events
    with no clock (null `ts`) come last, in run order, with NaT ``start`` and ``end``
    and the measured ``duration`` if any.
    """
    _need(df, *_REQUIRED, "role", "stage", "verdict", "attempt", "duration_ms", "summary")
    if run is not None:
        df = df[df["run"].astype(str) == run]
    kinds = df["kind"].astype(object)
    work = df.assign(role=df["role"].astype(object).where(df["role"].notna(), kinds),
                     run=df["run"].astype(str)).sort_values("ts", kind="stable")
    spans = work[kinds.reindex(work.index).isin(SPAN_KINDS)].copy()
    # Events with no clock (imports): no start nor end, a duration only when measured.
    unclocked = spans[spans["ts"].isna()]
    spans = spans[spans["ts"].notna()]
    work = work[work["ts"].notna()]
    acts = work.loc[kinds.reindex(work.index) == "act", ["run", "role", "ts"]].rename(
        columns={"ts": "act_ts"})
    spans["prev_end"] = spans.groupby(["run", "role"], sort=False)["ts"].shift()
    if len(spans) and len(acts):
        spans = pd.merge_asof(spans, acts, left_on="ts", right_on="act_ts",
                              by=["run", "role"], direction="backward")
    else:
        spans = spans.assign(act_ts=pd.Series(pd.NaT, index=spans.index, dtype=df["ts"].dtype))
    measured = pd.to_timedelta(spans["duration_ms"].astype("float64"), unit="ms")
    act_ok = spans["act_ts"].notna() & ~(spans["act_ts"] < spans["prev_end"])
    start = spans["ts"] - measured
    start = start.where(measured.notna(), spans["act_ts"].where(act_ok))
    spans["start"] = start.fillna(spans["ts"])
    spans["end"] = spans["ts"]
    spans["duration"] = spans["end"] - spans["start"]
    if len(unclocked):
        unclocked = unclocked.assign(
            start=unclocked["ts"], end=unclocked["ts"],
            duration=pd.to_timedelta(unclocked["duration_ms"].astype("float64"), unit="ms"))
        spans = pd.concat([spans, unclocked]) if len(spans) else unclocked
    cols = ["run", "role", "stage", "kind", "verdict", "attempt", "start", "end", "duration",
            "summary"]
    out = spans[cols].reset_index(drop=True)
    out["role"] = out["role"].astype("category")
    out["kind"] = out["kind"].astype(str).astype("category")
    return out


def _tasks(df: pd.DataFrame) -> pd.Series:
    if "payload.task" in df.columns:
        raw = df["payload.task"]
    elif "payload" in df.columns:
        raw = df["payload"].map(lambda p: p.get("task") if isinstance(p, dict) else None)
    else:
        raw = pd.Series(None, index=df.index, dtype=object)
    return raw.astype(object).where(raw.notna(), WHOLE_RUN).astype(str)


def _count(sub: pd.DataFrame, index: pd.Index) -> pd.Series:
    runs = sub["run"].astype(object)
    return sub.groupby(runs).size().reindex(index.astype(object), fill_value=0).astype(
        "Int64").set_axis(index)


def _need(df: pd.DataFrame, *columns: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise UsageError(
            f"the frame has no column {', '.join(repr(c) for c in missing)}; pass a frame "
            "from crewbook.read_ledger (filtered rows are fine, dropped columns are not)")
