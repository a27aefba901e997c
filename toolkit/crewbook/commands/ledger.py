"""The ``crewbook ledger`` command: ``summary PATH… [--json]``, ``convert PATH --to parquet``,
``import SRC… -o OUT.jsonl [--from SOURCE]``, ``by-change SRC… --project DIR`` and
``export LEDGER --otlp -o spans.json``
(``[--format protobuf] [--otlp-endpoint URL [--header K=V]]``).

`register` adds the command to the main parser's subparsers; each subcommand sets
``func(args) -> int``: 0 when every line was a valid event, 1 when invalid input was
found (the summary still covers what could be read). The summary's figures live in
`_ledger_figures`, the export command in `_ledger_export`, the error report of a
ledger that cannot be read in `_ledger_problems`.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import LedgerError, Problem, plural
from ._ledger_export import export_command
from ._ledger_figures import na, summarise, summarise_folder, summary_text
from ._ledger_problems import fail
from ._shared import emit_json

__all__ = ["by_change_command", "convert_command", "export_command", "import_command",
           "register", "summary_command"]

# Building the parser imports nothing heavy; pandas and pyarrow load when a command runs.

def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
             common: argparse.ArgumentParser | None = None) -> None:
    """Add ``ledger`` with its subcommands (summary, convert, import, by-change, export).

    `common` is the main parser's shared-options parent (``--json``...); without it,
    each subcommand gets its own ``--json``.
    """
    parents = [common] if common is not None else []
    parser = subparsers.add_parser(
        "ledger", parents=parents,
        help="run ledgers: summary, convert, import, export, by-change",
        description="Work with run ledgers: JSON Lines files of loop events, folders of "
        "them, and spec-kit run folders (.specify/workflows/runs/<id>/); import agent "
        "logs, export OTLP spans, tie runs to the changes they served.",
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
    from ..ledger.reader import PROBLEMS_ATTR, read_ledger

    if args.parquet is not None:
        return _summary_parquet(args)
    if not args.paths:
        print("give the ledgers to summarise (PATH...) or --parquet FOLDER", file=sys.stderr)
        return 2
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # the default payload mode: its read checks every key of every line (with
            # payload="none" a key that is not a field would go unseen), and the payloads
            # stay texts, parsed by nobody here
            df = read_ledger(args.paths, errors="skip")
    except LedgerError as exc:
        return fail(exc.problems, getattr(args, "json", False))
    problems: list[Problem] = df.attrs.get(PROBLEMS_ATTR, [])
    data = summarise(df)
    data["files"] = len(df.attrs.get("crewbook_sources", []))
    data["problems"] = [p.to_dict() for p in problems]
    if getattr(args, "json", False):
        emit_json(data)
    else:
        print(summary_text(data))
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
        return fail(exc.problems, as_json)
    data = summarise_folder(folder)
    data["files"] = len(folder.files)
    data["problems"] = []
    if as_json:
        emit_json(data)
    else:
        print(summary_text(data))
    return 0


def _convert_folder(args: argparse.Namespace) -> int:
    """``convert --to parquet-folder``: every ledger into one folder partitioned by date."""
    from ..ledger.parquet import write_parquet

    as_json = getattr(args, "json", False)
    if args.output is None:
        return fail([Problem("no_output", "--to parquet-folder needs -o FOLDER (the "
                              "folder to write)", str(args.path))], as_json)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            files = write_parquet(args.path, args.output)
    except LedgerError as exc:
        return fail(exc.problems, as_json)
    if as_json:
        emit_json({"output": str(args.output), "files": [str(f) for f in files]})
    else:
        print(f"wrote {plural(len(files), 'file')} under {args.output}")
    return 0


def convert_command(args: argparse.Namespace) -> int:
    """``crewbook ledger convert``: one Parquet file per ledger; 1 if any was left out."""
    from ..core.atomic import output_path
    from ..ledger.reader import PROBLEMS_ATTR, find_ledgers, read_ledger, to_parquet

    if args.to == "parquet-folder":
        return _convert_folder(args)
    root: Path = args.path
    try:
        files = find_ledgers(root)
    except LedgerError as exc:
        return fail(exc.problems, getattr(args, "json", False))
    if not files:
        return fail([Problem("no_ledger", "no ledger here: no *.jsonl file and no spec-kit "
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
        found: list[Problem] = df.attrs.get(PROBLEMS_ATTR, [])
        problems.extend(found)
        failed = failed or any(p.severity == "error" for p in found)
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
        return fail(exc.problems, as_json)
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
        return fail(exc.problems, as_json)
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

    if na(value):
        return None
    if isinstance(value, pd.Timedelta):
        seconds = int(value.total_seconds())
        return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    return value.item() if hasattr(value, "item") else value


def _target(root: Path, path: Path, output: Path | None, *, single: bool) -> Path:
    if single:
        return output if output is not None else path.with_suffix(".parquet")
    relative = path.relative_to(root) if root.is_dir() else Path(path.name)
    base = output if output is not None else root if root.is_dir() else path.parent
    return (base / relative).with_suffix(".parquet")
