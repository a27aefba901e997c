"""The figures of ``crewbook ledger summary`` and their text.

Kept apart from the command so the same figures come from a frame (`summarise`) and
from a Parquet folder read by DuckDB (`summarise_folder`), in one order on any machine.
pandas loads inside the functions: the command line's start-up stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import plural

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["iso", "na", "summarise", "summarise_folder", "summary_text"]


def _counts(values: pd.Series) -> dict[str, int]:
    """Counts of each value, most frequent first and ties by name: the same order on any
    machine (`value_counts` leaves ties to the CPU's sort kernel)."""
    counts = values.dropna().astype(str).value_counts(sort=False)
    ranked = sorted(counts.items(), key=lambda kv: (-int(kv[1]), kv[0]))
    return {str(name): int(n) for name, n in ranked}


def summarise(df: pd.DataFrame) -> dict[str, Any]:
    """The figures `summary` prints, as plain JSON-ready values."""
    from ..ledger.analyses import run_outcomes

    outcomes = run_outcomes(df)
    reasons = _counts(outcomes["finished_reason"].astype(object).dropna())
    rounds = outcomes["rounds"].dropna()
    return {
        "events": len(df),
        "runs": len(outcomes),
        "loops": _counts(outcomes["loop"].astype(object)),
        "kinds": {k: v for k, v in _counts(df["kind"].astype(object)).items() if v},
        "first": iso(df["ts"].min()),
        "last": iso(df["ts"].max()),
        "finished": reasons,
        "unfinished": int((~outcomes["finished"]).sum()),
        "escalated": int(outcomes["escalated"].sum()),
        "rounds_median": float(rounds.median()) if len(rounds) else None,
        "rounds_max": int(rounds.max()) if len(rounds) else None,
        # None when no event records it (spec-kit logs carry no tokens): unknown, not 0
        "tokens_in": _total(df["tokens_in"]),
        "tokens_out": _total(df["tokens_out"]),
        "cost": None if df["cost"].isna().all() else round(float(df["cost"].sum()), 6),
    }


def summarise_folder(folder: Any) -> dict[str, Any]:
    """`summarise` of a `LedgerFolder`: the same figures, from DuckDB aggregates."""
    from ..ledger.analyses import run_outcomes

    outcomes = run_outcomes(folder)
    reasons = _counts(outcomes["finished_reason"].astype(object).dropna())
    rounds = outcomes["rounds"].dropna()
    kinds = folder.sql("SELECT kind, count(*) AS n FROM events GROUP BY kind")
    totals = folder.sql("""SELECT count(*) AS events, min(ts) AS first, max(ts) AS last,
                                  sum(tokens_in)::BIGINT AS tokens_in,
                                  sum(tokens_out)::BIGINT AS tokens_out,
                                  sum(cost) AS cost FROM events""").iloc[0]
    ranked = sorted(((str(k), int(n)) for k, n in zip(kinds["kind"], kinds["n"], strict=True)),
                    key=lambda kv: (-kv[1], kv[0]))
    return {
        "events": int(totals["events"]),
        "runs": len(outcomes),
        "loops": _counts(outcomes["loop"].astype(object)),
        "kinds": dict(ranked),
        "first": iso(_utc(totals["first"])),
        "last": iso(_utc(totals["last"])),
        "finished": reasons,
        "unfinished": int((~outcomes["finished"]).sum()),
        "escalated": int(outcomes["escalated"].sum()),
        "rounds_median": float(rounds.median()) if len(rounds) else None,
        "rounds_max": int(rounds.max()) if len(rounds) else None,
        "tokens_in": None if na(totals["tokens_in"]) else int(totals["tokens_in"]),
        "tokens_out": None if na(totals["tokens_out"]) else int(totals["tokens_out"]),
        "cost": None if na(totals["cost"]) else round(float(totals["cost"]), 6),
    }


def _utc(value: Any) -> Any:
    """A DuckDB timestamp (UTC, maybe without its zone) as a UTC pandas Timestamp."""
    import pandas as pd

    if na(value):
        return None
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def na(value: Any) -> bool:
    import pandas as pd

    return value is None or bool(pd.isna(value))


def _total(counts: pd.Series) -> int | None:
    return None if counts.isna().all() else int(counts.sum())


def summary_text(d: dict[str, Any]) -> str:
    loops = ", ".join(f"{k} {v:,}" for k, v in d["loops"].items()) or "none"
    finished = ", ".join(f"{k} {v:,}" for k, v in d["finished"].items()) or "none"
    lines = [
        f"{plural(d['files'], 'file')}, {plural(d['events'], 'event')}, "
        f"{plural(d['runs'], 'run')} ({loops})",
        f"from {d['first'] or '-'} to {d['last'] or '-'}",
        f"finished: {finished}; not finished: {d['unfinished']:,}; "
        f"escalated: {d['escalated']:,}",
    ]
    if d["rounds_max"] is not None:
        lines.append(f"rounds: median {d['rounds_median']:g}, max {d['rounds_max']}")
    tokens = [f"{d[k]:,} {k[7:]}" for k in ("tokens_in", "tokens_out") if d[k] is not None]
    lines.append(f"tokens: {', '.join(tokens) or 'not recorded'}; cost "
                 + (f"{d['cost']:,.2f}" if d["cost"] is not None else "not recorded"))
    if d["problems"]:
        errors = sum(p["severity"] == "error" for p in d["problems"])
        lines.append(f"problems: {plural(errors, 'bad line')} skipped, "
                     f"{plural(len(d['problems']) - errors, 'warning')} (listed on stderr)")
    return "\n".join(lines)


def iso(value: Any) -> str | None:
    import pandas as pd

    if value is None or value is pd.NaT or pd.isna(value):
        return None
    return str(pd.Timestamp(value).isoformat()).replace("+00:00", "Z")
