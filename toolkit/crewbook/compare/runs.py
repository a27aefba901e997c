"""`diff_runs(ledger_a, run_a, ledger_b, run_b)`: where two runs diverge, stage by stage.

A run is read from anything that holds a ledger frame: the frame `read_ledger` returns
(recorded runs, spec-kit imports), a path `read_ledger` reads (a ``.jsonl`` file, a
folder, a spec-kit run folder), an in-memory ledger or a loop (`.ledger.frame()`, the
runs a notebook or a simulation stepped). A ledger frame is a ledger frame.

Sections of the result:

* ``act``: the first act where the runs differ (``diverged``): the n-th event of each
  run after its ``init``, compared on kind, role, stage, verdict and attempt;
* ``stage``: stages only one run visited, and per stage the attempts, acts, tokens
  and time that differ;
* ``run``: how each run finished, its acts, tokens and time.

`stages_frame()` puts the per-stage numbers side by side; the drawing is the path of
stages each run took (arrows counted), overlaid.
"""

from __future__ import annotations

import html
import os
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ..draw.model import Edge, GraphModel, Node
from ..errors import CompareError, NotFoundError, UsageError
from .core import DiffEntry, diff_records
from .graph import overlay
from .result import Diff

if TYPE_CHECKING:
    import pandas as pd

#: Event kinds compared in order (``init`` carries the run's settings, ``note`` is free text).
SKIPPED_KINDS = frozenset({"init", "note", "rewind"})
#: What identifies an act when two runs are compared.
ACT_FIELDS: tuple[str, ...] = ("kind", "role", "stage", "verdict", "attempt")
#: Per-stage measures, in the order they are reported.
MEASURES: tuple[str, ...] = ("attempts", "acts", "tokens", "duration_ms")


def ledger_frame(ledger: Any) -> pd.DataFrame:
    """A ledger frame from a frame, a path, a ledger (`.frame()`) or a loop (`.ledger`)."""
    import pandas as pd

    if isinstance(ledger, pd.DataFrame):
        return ledger
    if isinstance(ledger, str | os.PathLike):
        from ..ledger.reader import read_ledger

        return read_ledger(ledger)
    inner = getattr(ledger, "ledger", None)
    source = inner if inner is not None and hasattr(inner, "frame") else ledger
    if hasattr(source, "frame"):
        frame = source.frame()
        if isinstance(frame, pd.DataFrame):
            return frame
    raise CompareError(
        f"cannot read a run from a {type(ledger).__name__}: give a ledger frame "
        "(crewbook.read_ledger), a ledger file or folder, or a loop with a ledger")


def run_events(frame: pd.DataFrame, run: str | None, label: str) -> tuple[str, pd.DataFrame]:
    """The events of `run` in `frame`, by `seq` (the only run when `run` is None)."""
    if "run" not in frame.columns:
        return run or "run", frame.reset_index(drop=True)
    runs = [str(r) for r in frame["run"].astype(object).dropna().unique()]
    if run is None:
        if len(runs) != 1:
            raise UsageError(
                f"{label} holds {len(runs)} runs ({', '.join(runs[:10]) or 'none'}"
                f"{' …' if len(runs) > 10 else ''}); name one as LEDGER:RUN "
                "(run_a= / run_b= in Python)")
        run = runs[0]
    if run not in runs:
        from ..errors import did_you_mean

        raise NotFoundError(
            f"{label} holds no run {run!r}"
            + (did_you_mean(run, runs) or f"; runs: {', '.join(runs[:10]) or 'none'}"))
    events = frame[frame["run"].astype(object) == run]
    if "seq" in events.columns:
        events = events.sort_values("seq", kind="stable")
    return run, events.reset_index(drop=True)


def _value(row: Mapping[Hashable, Any], name: str) -> Any:
    """A cell of one event as a plain Python value; NA and NaN are None."""
    import pandas as pd

    value = row.get(name)
    if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)):
        return None
    return value.item() if hasattr(value, "item") else value


def acts(events: pd.DataFrame) -> list[dict[str, Any]]:
    """The compared acts of a run: every event but init/note/rewind, its `ACT_FIELDS`
    and `seq`."""
    out = []
    for row in events.to_dict("records"):
        kind = _value(row, "kind")
        if kind in SKIPPED_KINDS:
            continue
        act = {name: _value(row, name) for name in ACT_FIELDS}
        act["seq"] = _value(row, "seq")
        out.append(act)
    return out


def describe_act(act: dict[str, Any] | None) -> str | None:
    """``report developer@build done (attempt 2)``, or None."""
    if act is None:
        return None
    who = "@".join(str(x) for x in (act.get("role"), act.get("stage")) if x is not None)
    text = " ".join(str(x) for x in (act.get("kind"), who, act.get("verdict")) if x)
    return text + (f" (attempt {act['attempt']})" if act.get("attempt") is not None else "")


def stage_measures(events: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Per stage, in order of first visit: attempts (highest), acts (report and verdict
    events), tokens (in + out), duration_ms (sum)."""
    out: dict[str, dict[str, Any]] = {}
    for row in events.to_dict("records"):
        stage = _value(row, "stage")
        if stage is None:
            continue
        rec = out.setdefault(str(stage), {"attempts": None, "acts": 0, "tokens": None,
                                          "duration_ms": None})
        attempt = _value(row, "attempt")
        if attempt is not None:
            rec["attempts"] = max(rec["attempts"] or 0, int(attempt))
        if _value(row, "kind") in ("report", "verdict"):
            rec["acts"] += 1
        for name in ("tokens_in", "tokens_out"):
            tokens = _value(row, name)
            if tokens is not None:
                rec["tokens"] = (rec["tokens"] or 0) + int(tokens)
        duration = _value(row, "duration_ms")
        if duration is not None:
            rec["duration_ms"] = (rec["duration_ms"] or 0) + int(duration)
    return out


def run_summary(events: pd.DataFrame) -> dict[str, Any]:
    """How a run finished, and its acts, tokens and time in total."""
    finish = None
    measures = stage_measures(events)
    for row in events.to_dict("records"):
        if _value(row, "kind") == "finish":
            finish = _value(row, "verdict")
    tokens = [m["tokens"] for m in measures.values() if m["tokens"] is not None]
    durations = [m["duration_ms"] for m in measures.values() if m["duration_ms"] is not None]
    return {"finished": finish, "events": len(events),
            "acts": sum(m["acts"] for m in measures.values()),
            "tokens": sum(tokens) if tokens else None,
            "duration_ms": sum(durations) if durations else None}


def path_graph(name: str, events: pd.DataFrame) -> GraphModel:
    """The stages a run visited (in order of first visit) and the moves between them."""
    model = GraphModel(name, title=f"run {name}")
    order: list[str] = []
    moves: dict[tuple[str, str], int] = {}
    previous = None
    for row in events.to_dict("records"):
        stage = _value(row, "stage")
        if stage is None:
            continue
        stage = str(stage)
        if stage not in order:
            order.append(stage)
        if previous is not None and previous != stage:
            moves[(previous, stage)] = moves.get((previous, stage), 0) + 1
        previous = stage
    measures = stage_measures(events)
    for rank, stage in enumerate(order):
        m = measures[stage]
        detail = ", ".join(x for x in (
            f"attempts {m['attempts']}" if m["attempts"] is not None else "",
            f"{m['tokens']:,} tok" if m["tokens"] is not None else "") if x)
        model.add_node(Node(stage, kind="stage", rank=rank, detail=detail or None))
    for (src, dst), count in moves.items():
        model.add_edge(Edge(src, dst, "flow", f"×{count}" if count > 1 else ""))
    return model


@dataclass(frozen=True, eq=False, repr=False)
class RunDiff(Diff):
    """Two runs compared (`diff_runs`): the first differing act, stages side by side."""

    kind: ClassVar[str] = "run"

    diverged_at: int | None = None
    act_a: dict[str, Any] | None = None
    act_b: dict[str, Any] | None = None
    stages_a: dict[str, dict[str, Any]] | None = None
    stages_b: dict[str, dict[str, Any]] | None = None
    summary_a: dict[str, Any] | None = None
    summary_b: dict[str, Any] | None = None

    def stages_frame(self) -> pd.DataFrame:
        """One row per stage either run visited: ``<measure>_a``, ``<measure>_b`` and
        ``<measure>_delta`` (b − a) for attempts, acts, tokens (Int64) and duration
        (timedelta), in order of first visit."""
        import pandas as pd

        a, b = self.stages_a or {}, self.stages_b or {}
        names = list(dict.fromkeys([*a, *b]))
        data: dict[str, Any] = {"stage": pd.Series(names, dtype="string")}
        for measure in MEASURES:
            left = [a.get(s, {}).get(measure) for s in names]
            right = [b.get(s, {}).get(measure) for s in names]
            delta = [None if x is None or y is None else y - x for x, y in zip(left, right,
                                                                                strict=True)]
            col = "duration" if measure == "duration_ms" else measure
            for suffix, values in (("a", left), ("b", right), ("delta", delta)):
                series = pd.Series(pd.array(values, dtype="Int64"))
                if measure == "duration_ms":
                    series = pd.to_timedelta(series.astype("float64"), unit="ms").astype(
                        "timedelta64[ns]")
                data[f"{col}_{suffix}"] = series
        return pd.DataFrame(data)

    def frames(self) -> dict[str, pd.DataFrame]:
        """`changes` (every difference) and `stages` (side by side)."""
        return {"changes": self.frame(), "stages": self.stages_frame()}

    def extra_dict(self) -> dict[str, Any]:
        return {"diverged_at": self.diverged_at, "act_a": self.act_a, "act_b": self.act_b,
                "stages": {"a": self.stages_a or {}, "b": self.stages_b or {}},
                "summary": {"a": self.summary_a or {}, "b": self.summary_b or {}}}

    def extra_lines(self) -> list[str]:
        if self.diverged_at is None:
            return ["  the runs take the same acts"]
        return [f"  diverged at act {self.diverged_at + 1}: {describe_act(self.act_a) or '—'}"
                f"  ⇒  {describe_act(self.act_b) or '—'}"]

    def extra_html(self) -> str:
        try:
            table = self.stages_frame().to_html(index=False, na_rep="—")
        except Exception as exc:  # the display must never raise
            table = (f"<p>(no table: {html.escape(type(exc).__name__)}: "
                     f"{html.escape(str(exc))})</p>")
        return f"<p><b>Stages side by side</b></p>{table}"


def diff_runs(
    ledger_a: Any,
    run_a: str | None = None,
    ledger_b: Any = None,
    run_b: str | None = None,
    *,
    labels: tuple[str, str] | None = None,
) -> RunDiff:
    """Compare run `run_a` of `ledger_a` with run `run_b` of `ledger_b` (default: the same
    ledger). A run may be None when its ledger holds a single run."""
    frame_a = ledger_frame(ledger_a)
    frame_b = frame_a if ledger_b is None else ledger_frame(ledger_b)
    name_a, events_a = run_events(frame_a, run_a, "the first ledger")
    name_b, events_b = run_events(frame_b, run_b, "the second ledger")
    label_a, label_b = labels or (name_a, name_b)
    if labels is None and label_a == label_b and ledger_b is not None:
        label_a, label_b = f"{name_a} (a)", f"{name_b} (b)"
    acts_a, acts_b = acts(events_a), acts(events_b)
    entries: list[DiffEntry] = []
    diverged = None
    for i in range(max(len(acts_a), len(acts_b))):
        x = acts_a[i] if i < len(acts_a) else None
        y = acts_b[i] if i < len(acts_b) else None
        if x is None or y is None or any(x[f] != y[f] for f in ACT_FIELDS):
            diverged = i
            break
    act_a = acts_a[diverged] if diverged is not None and diverged < len(acts_a) else None
    act_b = acts_b[diverged] if diverged is not None and diverged < len(acts_b) else None
    if diverged is not None:
        entries.append(DiffEntry("act", "changed", f"#{diverged + 1}", "diverged",
                                 describe_act(act_a), describe_act(act_b),
                                 "first act where the runs differ"))
    stages_a, stages_b = stage_measures(events_a), stage_measures(events_b)
    stages = diff_records(stages_a, stages_b)
    entries += stages.entries("stage")
    summary_a, summary_b = run_summary(events_a), run_summary(events_b)
    for name in ("finished", "acts", "tokens", "duration_ms"):
        if summary_a[name] != summary_b[name]:
            entries.append(DiffEntry("run", "changed", "run", name, summary_a[name],
                                     summary_b[name]))
    drawing = overlay(path_graph(name_a, events_a), path_graph(name_b, events_b),
                      changed={k: list(v) for k, v in stages.changed.items()},
                      name="run-diff", title=f"runs {label_a} → {label_b}")
    return RunDiff(label_a, label_b, tuple(entries), drawing, diverged, act_a, act_b,
                   stages_a, stages_b, summary_a, summary_b)
