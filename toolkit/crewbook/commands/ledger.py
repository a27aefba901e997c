"""The ``crewbook ledger`` command: ``summary PATH… [--json]``, ``convert PATH --to parquet``,
``import SRC… -o OUT.jsonl [--from SOURCE]``, ``by-change SRC… --project DIR`` and
``export LEDGER --otlp -o spans.json``
(``[--format protobuf] [--otlp-endpoint URL [--header K=V]]``).

`register` adds the command to the main parser's subparsers; each subcommand sets
``func(args) -> int``: 0 when every line was a valid event, 1 when invalid input was
found (the summary still covers what could be read).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import LedgerError, Problem, plural
from ._shared import emit_json

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["by_change_command", "convert_command", "export_command", "import_command",
           "register", "summary_command"]

# Building the parser imports nothing heavy; pandas and pyarrow load when a command runs.
PROBLEMS_ATTR = "crewbook_problems"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
             common: argparse.ArgumentParser | None = None) -> None:
    """Add ``ledger`` with its ``summary`` and ``convert`` subcommands.

    `common` is the main parser's shared-options parent (``--json``...); without it,
    each subcommand gets its own ``--json``.
    """
    parents = [common] if common is not None else []
    parser = subparsers.add_parser(
        "ledger", parents=parents,
        help="summarise, convert and check run ledgers (JSON Lines)",
        description="Work with run ledgers: JSON Lines files of loop events, folders of "
        "them, and spec-kit run folders (.specify/workflows/runs/<id>/).",
    )
    commands = parser.add_subparsers(dest="ledger_command", metavar="COMMAND", required=True)

    summary = commands.add_parser(
        "summary", parents=parents, help="events, runs, outcomes and spend of one or more ledgers",
        description="Summarise ledgers: events, runs, how they finished, rounds, tokens "
        "and cost. Bad lines are skipped and listed; the exit status is 1 if any.",
    )
    summary.add_argument("paths", nargs="*", type=Path, metavar="PATH",
                         help="a ledger file, a folder of them, or a spec-kit run folder")
    summary.add_argument("--parquet", type=Path, metavar="FOLDER",
                         help="summarise a Parquet folder (written by `convert --to "
                         "parquet-folder`) with DuckDB, without loading it in memory")
    _finish(summary, common, summary_command)

    convert = commands.add_parser(
        "convert", parents=parents, help="convert ledgers to Parquet (payload kept as JSON text)",
        description="Write each ledger as Parquet, for DuckDB or Spark. A folder is "
        "converted file by file, keeping relative names.",
    )
    convert.add_argument("path", type=Path, metavar="PATH",
                         help="a ledger file, a folder of them, or a spec-kit run folder")
    convert.add_argument("--to", choices=["parquet", "parquet-folder"], required=True,
                         help="target format: 'parquet' writes one file per ledger; "
                         "'parquet-folder' writes one folder partitioned by date "
                         "(date=YYYY-MM-DD/), for `summary --parquet` and DuckDB")
    convert.add_argument("-o", "--output", type=Path, metavar="OUT",
                         help="output file (for one ledger) or folder (default: next to "
                         "each ledger, .parquet instead of .jsonl)")
    convert.add_argument("--errors", choices=["raise", "skip"], default="raise",
                         help="'skip' converts the valid lines of a ledger with bad lines "
                         "(default: leave that ledger out and exit 1)")
    _finish(convert, common, convert_command)

    from ..ledger.import_sources import DESCRIPTIONS, SOURCES

    imp = commands.add_parser(
        "import", parents=parents, help="import other agent tools' logs as one ledger",
        description="Read run logs of other tools into one crewbook ledger (JSON Lines): "
        + "; ".join(f"{k}: {v}" for k, v in DESCRIPTIONS.items())
        + ". The source is detected from each file's content unless --from names it. "
        "Each event keeps its origin (file and line or record) in payload.origin.",
    )
    imp.add_argument("sources", nargs="+", type=Path, metavar="SRC",
                     help="a log file, a run folder, or a folder of logs")
    imp.add_argument("-o", "--output", type=Path, metavar="OUT", required=True,
                     help="the ledger to write (.jsonl; replaced if it exists)")
    imp.add_argument("--from", dest="source", choices=["auto", *SOURCES], default="auto",
                     help="the tool that wrote the logs (default: detect from content)")
    _finish(imp, common, import_command)

    by_change = commands.add_parser(
        "by-change", parents=parents,
        help="cost, tokens and time of agent sessions per change and phase",
        description="Import agent session logs (as `import` does) and tie each session "
        "to the change of the project it served: /openspec: or /opsx: commands, files "
        "written under the change's folder or named by its tasks, the git branch. "
        "Prints per change and phase: sessions, model calls, tokens, cost, wall time, "
        "rework; sessions tied to no change are the (untied) row.",
    )
    by_change.add_argument("sources", nargs="+", type=Path, metavar="SRC",
                           help="a log file, a run folder, or a folder of logs")
    by_change.add_argument("--from", dest="source", choices=["auto", *SOURCES],
                           default="auto", help="the tool that wrote the logs "
                           "(default: detect from content)")
    if common is None:
        by_change.add_argument("--project", metavar="DIR",
                               help="the project root (default: walk up from here)")
    _finish(by_change, common, by_change_command)

    export = commands.add_parser(
        "export", parents=parents, help="export a ledger as OpenTelemetry GenAI spans",
        description="Write a ledger's runs as OTLP traces, or send them to an OTLP/HTTP "
        "endpoint (Phoenix, Langfuse, Jaeger, any collector). A run is an invoke_workflow "
        "span, a role's turn an invoke_agent span, a model call a chat span with model, "
        "tokens and cost (GenAI semantic conventions and OpenInference), plus crewbook.* "
        "attributes: importing the file gives back the same events.",
    )
    export.add_argument("ledger", type=Path, metavar="LEDGER",
                        help="a ledger file, a folder of them, or a spec-kit run folder")
    export.add_argument("--otlp", action="store_true",
                        help="OTLP (the only export format; accepted for clarity)")
    export.add_argument("-o", "--output", type=Path, metavar="OUT",
                        help="the file to write (needed unless --otlp-endpoint is given)")
    export.add_argument("--format", choices=["json", "protobuf"], default="json",
                        help="OTLP JSON (default) or protobuf (an ExportTraceServiceRequest)")
    export.add_argument("--otlp-endpoint", metavar="URL",
                        help="send the spans to this OTLP/HTTP endpoint (protobuf, gzip, "
                        "batched, retried), e.g. http://127.0.0.1:6006 for Phoenix")
    export.add_argument("--header", action="append", default=[], metavar="K=V",
                        help="an HTTP header for the endpoint (repeatable), e.g. "
                        "'Authorization=Bearer TOKEN'")
    export.add_argument("--clockless-at", metavar="TIME",
                        help="place runs whose source had no clock (SWE-agent) from this "
                        "ISO-8601 time, or 'now' (default: leave them out, counted)")
    export.add_argument("--trace-project", metavar="NAME",
                        help="the Phoenix project the traces go to "
                        "(openinference.project.name)")
    _finish(export, common, export_command)


def _finish(parser: argparse.ArgumentParser, common: argparse.ArgumentParser | None,
            func: Callable[[argparse.Namespace], int]) -> None:
    """Give a subcommand its ``--json`` (unless the shared parent has it) and its function."""
    if common is None:
        parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=func)


def summary_command(args: argparse.Namespace) -> int:
    """``crewbook ledger summary``: print the summary; 1 if any line was invalid."""
    from ..ledger.reader import read_ledger

    if args.parquet is not None:
        return _summary_parquet(args)
    if not args.paths:
        print("give the ledgers to summarise (PATH...) or --parquet FOLDER", file=sys.stderr)
        return 2
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            df = read_ledger(args.paths, errors="skip", payload="none")
    except LedgerError as exc:
        return _fail(exc.problems, getattr(args, "json", False))
    problems: list[Problem] = df.attrs.get(PROBLEMS_ATTR, [])
    data = summarise(df)
    data["files"] = len(df.attrs.get("crewbook_sources", []))
    data["problems"] = [p.to_dict() for p in problems]
    if getattr(args, "json", False):
        emit_json(data)
    else:
        print(_summary_text(data))
        for problem in problems:
            print(problem, file=sys.stderr)
    return 1 if any(p.severity == "error" for p in problems) else 0


def _summary_parquet(args: argparse.Namespace) -> int:
    """``summary --parquet FOLDER``: the same figures, computed by DuckDB."""
    from ..ledger.parquet import LedgerFolder

    as_json = getattr(args, "json", False)
    try:
        folder = LedgerFolder(args.parquet)
    except LedgerError as exc:
        return _fail(exc.problems, as_json)
    data = summarise_folder(folder)
    data["files"] = len(folder.files)
    data["problems"] = []
    if as_json:
        emit_json(data)
    else:
        print(_summary_text(data))
    return 0


def _convert_folder(args: argparse.Namespace) -> int:
    """``convert --to parquet-folder``: every ledger into one folder partitioned by date."""
    from ..ledger.parquet import write_parquet

    as_json = getattr(args, "json", False)
    if args.output is None:
        return _fail([Problem("no_output", "--to parquet-folder needs -o FOLDER (the "
                              "folder to write)", str(args.path))], as_json)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            files = write_parquet(args.path, args.output)
    except LedgerError as exc:
        return _fail(exc.problems, as_json)
    if as_json:
        emit_json({"output": str(args.output), "files": [str(f) for f in files]})
    else:
        print(f"wrote {plural(len(files), 'file')} under {args.output}")
    return 0


def convert_command(args: argparse.Namespace) -> int:
    """``crewbook ledger convert``: one Parquet file per ledger; 1 if any was left out."""
    from ..core.atomic import output_path
    from ..ledger.reader import find_ledgers, read_ledger, to_parquet

    if args.to == "parquet-folder":
        return _convert_folder(args)
    root: Path = args.path
    try:
        files = find_ledgers(root)
    except LedgerError as exc:
        return _fail(exc.problems, getattr(args, "json", False))
    if not files:
        return _fail([Problem("no_ledger", "no ledger here: no *.jsonl file and no spec-kit "
                              "run folder below this path", str(root))],
                     getattr(args, "json", False))
    written: list[dict[str, Any]] = []
    problems: list[Problem] = []
    failed = False
    for path, shown in files:
        target = _target(root, path, args.output, single=len(files) == 1 and root == path)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                df = read_ledger(path, errors=args.errors)
        except LedgerError as exc:
            problems.extend(exc.problems)
            failed = True
            continue
        problems.extend(df.attrs.get(PROBLEMS_ATTR, []))
        failed = failed or any(p.severity == "error" for p in df.attrs.get(PROBLEMS_ATTR, []))
        # convert makes the folders it writes into (as it always has)
        with output_path(target, inputs=[path], parents=True) as tmp:
            to_parquet(df, tmp)
        written.append({"source": shown, "output": str(target), "events": len(df)})
    if getattr(args, "json", False):
        emit_json({"written": written, "problems": [p.to_dict() for p in problems]})
    else:
        for item in written:
            print(f"wrote {item['output']} ({plural(item['events'], 'event')} from "
                  f"{item['source']})")
        for problem in problems:
            print(problem, file=sys.stderr)
        if failed and args.errors == "raise":
            print("ledgers with bad lines were not converted; fix them, or pass "
                  "--errors skip to convert their valid lines", file=sys.stderr)
    return 1 if failed else 0


def _counts(values: pd.Series) -> dict[str, int]:
    """Counts of each value, most frequent first and ties by name: the same order on any
    machine (`value_counts` leaves ties to the CPU's sort kernel)."""
    counts = values.dropna().astype(str).value_counts(sort=False)
    ranked = sorted(counts.items(), key=lambda kv: (-int(kv[1]), kv[0]))
    return {str(name): int(n) for name, n in ranked}


def import_command(args: argparse.Namespace) -> int:
    """``crewbook ledger import``: one ledger from other tools' logs. Every file that can
    be imported is written; 1 when any was skipped (each is listed with its reason) or
    when nothing could be imported (nothing is written then). The output is refused
    before any work when it is a folder, a device that is not a stream, or an input."""
    from ..core.atomic import output_kind, write_output
    from ..ledger.importers import find_sources, gather

    as_json = getattr(args, "json", False)
    try:
        paths = find_sources(args.sources)
        output_kind(args.output, inputs=paths)  # refused before any work
        result = gather(paths, args.source)
    except LedgerError as exc:
        return _fail(exc.problems, as_json)
    lines = [event.to_line() for event in result.events]
    write_output(args.output, "".join(line + "\n" for line in lines), inputs=paths)
    read: list[dict[str, Any]] = [
        {"source": str(path), "format": name, "events": len(events),
         "runs": len({e.run for e in events})} for path, name, events in result.read]
    skipped, unknown = result.skipped_records(), result.unknown()
    if as_json:
        emit_json({"output": str(args.output), "events": len(lines), "read": read,
                   "skipped": skipped, "unknown_types": unknown})
    else:
        for item in read:
            print(f"{item['source']}: {item['format']}, {plural(item['runs'], 'run')}, "
                  f"{plural(item['events'], 'event')}")
        for kind, n in unknown.items():
            print(f"kept {plural(n, 'event')} of unknown type {kind} as notes")
        for item in skipped:
            print(f"skipped {item['file']}: {item['reason']} [{item['code']}]",
                  file=sys.stderr)
        print(f"wrote {args.output} ({plural(len(lines), 'event')})"
              + (f"; skipped {plural(len(skipped), 'file')}" if skipped else ""))
    return 1 if skipped else 0


def by_change_command(args: argparse.Namespace) -> int:
    """``crewbook ledger by-change``: the table of `runs_by_change`; 1 if a log could not
    be imported or the project cannot be found (raised to `main`)."""
    from ..artifacts.change_runs import runs_by_change
    from ..artifacts.project import Project
    from ..ledger.importers import import_runs

    as_json = getattr(args, "json", False)
    project = Project(getattr(args, "project", None))
    try:
        runs = import_runs(args.sources, source=args.source)
    except LedgerError as exc:
        return _fail(exc.problems, as_json)
    table = runs_by_change(project, runs)
    rows = [{k: _plain(v) for k, v in row.items()} for row in table.to_dict("records")]
    if as_json:
        emit_json({"project": str(project.root), "rows": rows})
        return 0
    if not rows:
        print("no sessions")
        return 0
    print(f"{'change':<28} {'phase':<9} {'sessions':>8} {'calls':>6} {'tokens':>12} "
          f"{'cost $':>9} {'wall':>10} {'rework':>6}")
    for r in rows:
        tokens = (r["tokens_in"] or 0) + (r["tokens_out"] or 0)
        cost = "-" if r["cost"] is None else f"{r['cost']:.4f}"
        print(f"{r['change']:<28} {r['phase']:<9} {r['sessions']:>8} {r['model_calls']:>6} "
              f"{tokens:>12,} {cost:>9} {r['wall_time']:>10} {r['rework']:>6}")
    return 0


def _plain(value: Any) -> Any:
    """A frame value as JSON: NA → None, numpy numbers → int/float, timedelta → text."""
    import pandas as pd

    if _na(value):
        return None
    if isinstance(value, pd.Timedelta):
        seconds = int(value.total_seconds())
        return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    return value.item() if hasattr(value, "item") else value


def export_command(args: argparse.Namespace) -> int:
    """``crewbook ledger export``: the ledger's runs as OTLP spans, written or sent."""
    from ..errors import SendError, UsageError
    from ..ledger.reader import read_ledger

    as_json = getattr(args, "json", False)
    if args.output is None and args.otlp_endpoint is None:
        print("give the file to write (-o OUT) or the endpoint to send to "
              "(--otlp-endpoint URL)", file=sys.stderr)
        return 2
    if args.output is not None:
        from ..core.atomic import output_kind

        output_kind(args.output, inputs=[args.ledger])  # refused before any work
    try:
        clockless_at = _clockless_at(args.clockless_at)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            df = read_ledger(args.ledger)
        sent = _send(args, df, clockless_at) if args.otlp_endpoint else None
        export = sent.export if sent is not None else None
        if args.output is not None:
            export = _write_export(args, df, clockless_at)
    except LedgerError as exc:
        return _fail(exc.problems, as_json)
    except UsageError as exc:
        print(exc, file=sys.stderr)
        return 2
    except SendError as exc:
        if as_json:
            emit_json({"error": {"type": "SendError", "message": str(exc)}})
        else:
            print(exc, file=sys.stderr)
        return 1
    assert export is not None
    doc: dict[str, Any] = {"traces": export.traces, "spans": export.spans,
                           "placed": export.placed, "left_out": export.left_out}
    if args.output is not None:
        doc["output"] = str(args.output)
    if sent is not None:
        doc.update(endpoint=sent.endpoint, requests=sent.requests, retries=sent.retries,
                   rejected=sent.rejected)
    if as_json:
        emit_json(doc)
        return 1 if sent is not None and sent.rejected else 0
    what = f"{plural(export.traces, 'trace')}, {plural(export.spans, 'span')}"
    if args.output is not None:
        print(f"wrote {args.output} ({what})")
    if sent is not None:
        print(f"sent {what} to {sent.endpoint} in {plural(sent.requests, 'request')}"
              + (f"; it rejected {plural(sent.rejected, 'span')}: "
                 + "; ".join(sent.messages) if sent.rejected else ""))
    if export.placed:
        print(f"{plural(export.placed, 'event')} without a clock placed after the run's "
              "previous span (flagged crewbook.time_placed)")
    if export.left_out:
        print(f"left out {plural(len(export.left_out), 'run')} with no clock at all "
              f"({', '.join(export.left_out[:3])}{'…' if len(export.left_out) > 3 else ''}):"
              " --clockless-at TIME (or now) places them")
    return 1 if sent is not None and sent.rejected else 0


def _clockless_at(text: str | None) -> datetime | None:
    """``--clockless-at``: None, ``now`` (to the second), or an ISO-8601 time (UTC when
    it names no offset)."""
    from ..errors import UsageError

    if text is None:
        return None
    if text == "now":
        return datetime.now(UTC).replace(microsecond=0)
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--clockless-at takes an ISO-8601 time such as "
                         f"2026-01-05T12:00:00Z, or 'now'; not {text!r}") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _send(args: argparse.Namespace, df: pd.DataFrame,
          clockless_at: datetime | None) -> Any:
    from ..ledger.otlp_send import parse_headers, send_otlp

    return send_otlp(df, args.otlp_endpoint, parse_headers(args.header),
                     clockless_at=clockless_at, project=args.trace_project)


def _write_export(args: argparse.Namespace, df: pd.DataFrame,
                  clockless_at: datetime | None) -> Any:
    import json

    from ..core.atomic import write_output
    from ..ledger.otlp_export import otlp_export

    export = otlp_export(df, clockless_at=clockless_at, project=args.trace_project)
    if args.format == "protobuf":
        from ..ledger.otlp_send import to_protobuf

        data: str | bytes = to_protobuf(export.document)
    else:
        data = json.dumps(export.document, indent=1, sort_keys=True,
                          ensure_ascii=False) + "\n"
    write_output(args.output, data, inputs=[args.ledger])
    return export


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
        "first": _iso(df["ts"].min()),
        "last": _iso(df["ts"].max()),
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
        "first": _iso(_utc(totals["first"])),
        "last": _iso(_utc(totals["last"])),
        "finished": reasons,
        "unfinished": int((~outcomes["finished"]).sum()),
        "escalated": int(outcomes["escalated"].sum()),
        "rounds_median": float(rounds.median()) if len(rounds) else None,
        "rounds_max": int(rounds.max()) if len(rounds) else None,
        "tokens_in": None if _na(totals["tokens_in"]) else int(totals["tokens_in"]),
        "tokens_out": None if _na(totals["tokens_out"]) else int(totals["tokens_out"]),
        "cost": None if _na(totals["cost"]) else round(float(totals["cost"]), 6),
    }


def _utc(value: Any) -> Any:
    """A DuckDB timestamp (UTC, maybe without its zone) as a UTC pandas Timestamp."""
    import pandas as pd

    if _na(value):
        return None
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def _na(value: Any) -> bool:
    import pandas as pd

    return value is None or bool(pd.isna(value))


def _total(counts: pd.Series) -> int | None:
    return None if counts.isna().all() else int(counts.sum())


def _summary_text(d: dict[str, Any]) -> str:
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


def _iso(value: Any) -> str | None:
    import pandas as pd

    if value is None or value is pd.NaT or pd.isna(value):
        return None
    return str(pd.Timestamp(value).isoformat()).replace("+00:00", "Z")


def _target(root: Path, path: Path, output: Path | None, *, single: bool) -> Path:
    if single:
        return output if output is not None else path.with_suffix(".parquet")
    relative = path.relative_to(root) if root.is_dir() else Path(path.name)
    base = output if output is not None else root if root.is_dir() else path.parent
    return (base / relative).with_suffix(".parquet")


def _fail(problems: tuple[Problem, ...] | list[Problem], as_json: bool) -> int:
    """Print the problems; 2 when they are only paths that do not exist (a usage error,
    as in every command), else 1."""
    if as_json:  # the error document of every command (docs/hardening.md)
        emit_json({"error": {"type": "LedgerError", "message": "cannot read the ledger",
                             "problems": [p.to_dict() for p in problems]}})
    else:
        for problem in problems:
            print(problem, file=sys.stderr)
    return 2 if problems and all(p.code == "file_not_found" for p in problems) else 1
