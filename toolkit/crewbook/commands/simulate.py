"""`crewbook simulate FILE`: Monte Carlo runs of a pipeline or a delivery task, and sweeps.

FILE is a pipeline (``.toml``) or a delivery task (``.yaml``). The policy playing the
roles comes from ``--policy policy.yaml`` (docs/simulate.md; default: a random policy
with its defaults). ``--set KEY=VALUE`` changes a loop setting (``max_retries=1``,
``launches.developer=2``, ``review=risk-based``) or the policy
(``policy.roles.qa.fail=0.3``); ``--sweep KEY=V1,V2,…`` (repeatable) runs every
combination and prints one summary per setting.

``--out FOLDER`` streams the runs to Parquet files there (``runs/``; ``events/`` too with
``--events``) in bounded memory, then prints the same summary. ``--executor`` runs them
``inline``, on ``processes`` (``--workers N``), on a local Dask cluster (``dask``) or on
a Dask scheduler (``tcp://HOST:PORT``); ``--progress`` shows a bar on stderr (default:
when stderr is a terminal).

``--json`` prints one JSON document: the runs, the seed, the outcome mix, the summary
(means and percentiles) and the refusals per code, per setting for a sweep.
Exit status: 0 done; 1 invalid input; 2 a file named does not exist.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..core.paths import checked_path, kind_of
from ..errors import NotFoundError, SimulationError
from ._shared import emit


def _value(text: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text) if text.strip() else ""
    except yaml.YAMLError:
        return text


def _pairs(items: list[str] | None, option: str) -> list[tuple[str, str]]:
    out = []
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise SimulationError(f"{option} {item!r}: write KEY=VALUE")
        out.append((key.strip(), value))
    return out


def _summary(frame: Any) -> dict[str, Any]:
    from ..simulate import outcome_mix, summarise

    mix = outcome_mix(frame)
    row = summarise(frame).iloc[0]
    refused = {c.split(".", 1)[1]: int(frame[c].sum()) for c in frame.columns
               if c.startswith("refused.")}
    return {
        "runs": len(frame),
        "outcomes": {str(reason): {"runs": int(runs), "share": round(float(share), 6)}
                     for reason, runs, share in zip(mix["finished_reason"], mix["runs"],
                                                    mix["share"], strict=True)},
        "summary": {k: round(float(row[k]), 6) for k in (
            "finished", "acts", "rounds", "refusals", "tokens", "cost", "cost_p90",
            "duration_ms_p50", "duration_ms_p90")},
        "refusals": refused,
    }


def _text(summary: dict[str, Any], head: str) -> str:
    lines = [head]
    for reason, o in summary["outcomes"].items():
        lines.append(f"  {reason:<14}{o['runs']:>9,} runs  {o['share']:7.1%}")
    s = summary["summary"]
    lines.append(f"  mean acts {s['acts']:.1f}, rounds {s['rounds']:.2f}, refusals "
                 f"{s['refusals']:.2f}, tokens {s['tokens']:,.0f}, cost {s['cost']:.4f} "
                 f"(p90 {s['cost_p90']:.4f})")
    lines.append(f"  duration p50 {s['duration_ms_p50'] / 60000:.1f} min, p90 "
                 f"{s['duration_ms_p90'] / 60000:.1f} min")
    if summary["refusals"]:
        lines.append("  refused: " + ", ".join(f"{c} {n:,}" for c, n in
                                               summary["refusals"].items()))
    return "\n".join(lines)


def cmd_simulate(args: argparse.Namespace) -> int:
    """Run the simulation or sweep and print its summary."""
    from concurrent.futures import Executor, ProcessPoolExecutor

    from ..simulate import (
        InlineExecutor,
        RandomPolicy,
        load_policy,
        simulate,
        simulate_to,
        sweep,
    )
    from ..simulate.executors import cores

    path = checked_path(args.file, "FILE")
    if kind_of(path) == "missing":
        raise NotFoundError(f"no such file: {args.file} (give a pipeline .toml or a task "
                            ".yaml)")
    if args.policy and kind_of(checked_path(args.policy, "--policy")) == "missing":
        raise NotFoundError(f"no such policy file: {args.policy}")
    if args.n < 0:
        raise SimulationError(f"-n must be 0 or more, not {args.n}")
    policy = load_policy(args.policy) if args.policy else RandomPolicy()
    settings = {k: _value(v) for k, v in _pairs(args.set, "--set")}
    grid: dict[str, list[Any]] = {}
    for key, listed in _pairs(args.sweep, "--sweep"):
        grid[key] = [_value(v) for v in listed.split(",")]
    executor: Executor | None = None
    if args.workers is not None and args.workers < 1:
        raise SimulationError(f"--workers must be 1 or more, not {args.workers}")
    if args.ledger and args.out:
        raise SimulationError("--ledger writes JSON Lines; with --out, add --events to keep "
                              "the events as Parquet beside the runs")
    if args.events and not args.out:
        raise SimulationError("--events keeps the events in the --out folder: give --out")
    where: Any = None
    if args.executor in (None, "processes", "inline"):
        if args.executor == "inline" or args.workers == 1:
            executor = InlineExecutor()
        elif args.workers is not None or args.executor == "processes":
            executor = ProcessPoolExecutor(args.workers or cores())
    else:
        where = args.executor  # 'dask' or a scheduler address, checked by simulate
    try:
        if args.out:
            out = simulate_to(args.out, path, policy, n=args.n, grid=grid or None,
                              settings=settings, seed=args.seed, executor=executor or where,
                              events=args.events, progress=args.progress,
                              max_acts=args.max_acts)
            frame = out.outcomes()
            if grid:
                return _sweep_out(args, path, frame, grid, str(out.path))
            summary = _summary(frame)
            data = {"file": str(path), "seed": out.seed, "settings": settings,
                    "out": str(out.path), "events": args.events, **summary}
            emit(args, data, _text(summary, f"{path.name}: {args.n:,} simulated runs (seed "
                                            f"{out.seed}), written to {out.path}"))
            return 0
        if grid:
            for key, value in settings.items():
                grid.setdefault(key, [value])
            frame = sweep(path, policy, grid, n=args.n, seed=args.seed,
                          executor=executor or where, ledger=args.ledger,
                          max_acts=args.max_acts, progress=args.progress)
            return _sweep_out(args, path, frame, grid, None)
        ledger: Any = args.ledger if args.ledger else False
        frame = simulate(path, policy, n=args.n, seed=args.seed, executor=executor or where,
                         ledger=ledger, settings=settings, max_acts=args.max_acts,
                         progress=args.progress)
        summary = _summary(frame)
        data = {"file": str(path), "seed": frame.attrs["crewbook_seed"], "settings": settings,
                "ledger": args.ledger, **summary}
        emit(args, data, _text(summary, f"{path.name}: {args.n:,} simulated runs (seed "
                                        f"{data['seed']})"))
        return 0
    finally:
        if executor is not None:
            executor.shutdown()


def _sweep_out(args: argparse.Namespace, path: Any, frame: Any, grid: dict[str, list[Any]],
               out: str | None) -> int:
    """Print a sweep's summary per setting."""
    keys = list(grid)
    per: list[dict[str, Any]] = []
    texts: list[str] = []
    for number, part in frame.groupby("setting", sort=True):
        values: dict[str, Any] = {k: _plain(part[k].iloc[0]) for k in keys}
        summary = _summary(part)
        per.append({"setting": _plain(number), "values": values, **summary})
        texts.append(_text(summary, "setting " + ", ".join(
            f"{k}={v}" for k, v in values.items())))
    data = {"file": str(path), "seed": frame.attrs["crewbook_seed"], "n": args.n,
            "grid": grid, "settings": per, "ledger": args.ledger, "out": out}
    emit(args, data, f"sweep of {path.name}: {len(per)} settings x {args.n:,} runs "
         f"(seed {data['seed']})" + (f", written to {out}" if out else "") + "\n"
         + "\n".join(texts))
    return 0


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    """Add `simulate` to the `crewbook` subparsers."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "simulate", parents=[common], help="Monte Carlo runs of a pipeline or task (what-if)",
        description="Simulate runs of a pipeline (.toml) or a delivery task (.yaml) with a "
        "policy playing the roles, offline; --sweep runs every combination of settings.")
    p.add_argument("file", metavar="FILE", help="a pipeline .toml or a delivery task .yaml")
    p.add_argument("--policy", metavar="POLICY.yaml", help="the policy file (default: random "
                   "with defaults)")
    p.add_argument("-n", type=int, default=1_000, help="runs (per setting; default 1000)")
    p.add_argument("--seed", type=int, default=0, help="the seed (default 0)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="a loop setting (max_retries=1) or policy setting "
                   "(policy.roles.qa.fail=0.3); repeatable")
    p.add_argument("--sweep", action="append", metavar="KEY=V1,V2",
                   help="sweep a setting over values; repeatable (every combination)")
    p.add_argument("--ledger", metavar="OUT.jsonl", help="write every run's events there")
    p.add_argument("--workers", type=int, metavar="N", help="worker processes (1: in this "
                   "process; default: by the number of runs)")
    p.add_argument("--out", metavar="FOLDER", help="stream the runs to Parquet files in "
                   "FOLDER (runs/; events/ with --events), in bounded memory")
    p.add_argument("--events", action="store_true", help="with --out: keep every run's "
                   "ledger events too (read_ledger's columns; slower: the engine plays them)")
    p.add_argument("--executor", metavar="WHERE", help="inline, processes (default for "
                   "many runs), dask (a local Dask cluster) or a Dask scheduler address "
                   "tcp://HOST:PORT")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="a progress bar on stderr (default: when stderr is a terminal)")
    p.add_argument("--max-acts", type=int, default=500, help="acts after which a run ends "
                   "unfinished (default 500)")
    p.set_defaults(func=cmd_simulate)
