"""``crewbook step FAMILY [SOURCE] --run DIR [--report FILE|-] [--json]``: a run of any
loop family whose store keeps runs, stepped from a shell, one report per call; the
family is named, or found from SOURCE (``crewbook step PIPELINE.toml --run DIR``: the
family whose engine reads that file). Families and their stores come from
`crewbook.families`; this command names none.

DIR keeps the run as the family's store says (a pipeline: ``state.json`` and
``ledger.jsonl``; a delivery task: ``run.json``; the crew loop: the project at DIR). A
family that keeps its runs otherwise says so (the autonomous loop is stepped by
``crewbook autonomous step``, which runs its recette's test command). Without
``--report`` the command prints the current contract and changes nothing (DIR need not
exist). With a JSON report (a file, or ``-`` for standard input) it applies it, saves
the run and prints the next contract. A refused
report exits 1 with the reason and leaves DIR byte-identical; so does a run the store
cannot load (a pipeline file that changed since the run started...). ``--workspace``,
``--kinds`` and ``--invalid`` are settings of the stores that take them (a pipeline's),
remembered from the first accepted report.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import LoopRefused
from ._shared import emit_json

if TYPE_CHECKING:
    from ..core.family import Store
    from ..families import AnyFamily

#: The settings flags of ``step``, by the name a store takes them under.
SETTINGS = ("workspace", "kinds", "invalid")


def register(subparsers: Any, common: argparse.ArgumentParser | None = None) -> None:
    """Add ``step`` to the `crewbook` command's subparsers (`common`: shared options such
    as ``--json``, given as a parent parser)."""
    p = subparsers.add_parser(
        "step", help="step a run of a loop family: print the contract, or apply a report",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[common] if common is not None else [])
    p.add_argument("path", metavar="FAMILY|FILE",
                   help="a loop family (the names crewbook.families registers), or a "
                   "file one of their engines reads (PIPELINE.toml, TASK.yaml...)")
    p.add_argument("source", nargs="?", metavar="SOURCE",
                   help="with a family: what a new run starts from (a pipeline or task "
                   "file...)")
    p.add_argument("--run", required=True, metavar="DIR", help="the folder keeping the run")
    p.add_argument("--report", metavar="FILE|-", help="a JSON report to apply ('-': stdin)")
    p.add_argument("--workspace", metavar="DIR", help="the folder ground_references checks")
    p.add_argument("--kinds", metavar="CONFIG.toml", help="the artifact-kinds config")
    p.add_argument("--invalid", choices=("retry", "refuse"),
                   help="failed work: a counted retry (default) or a refusal")
    if common is None or not any("--json" in a.option_strings for a in common._actions):
        p.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                       help="print one JSON document instead of text")
    p.set_defaults(func=cmd_step)


def cmd_step(args: argparse.Namespace) -> int:
    """The ``step`` command (see the module docstring)."""
    out = _Output(bool(getattr(args, "json", False)))
    found, source = _family_and_source(args.path, args.source)
    if found is None:
        return out.fail("usage", f"no loop family steps {args.path!r}: name a family "
                        f"({source}) or a file one of their engines reads")
    from ..core.family import Declined

    store, codec = found.store, found.codec
    if isinstance(store, Declined) or isinstance(codec, Declined):
        return out.fail("not_steppable", f"the {found.name} family keeps no runs for the "
                        f"command line: {store if isinstance(store, Declined) else codec}")
    settings = {k: str(getattr(args, k)) for k in SETTINGS if getattr(args, k, None)}
    unknown = sorted(set(settings) - set(store.settings))
    if unknown:
        return out.fail("usage", f"a {found.name} run takes no --{unknown[0]}"
                        + (f" (it takes --{', --'.join(store.settings)})"
                           if store.settings else ""))
    folder = Path(args.run)
    try:
        loop = store.load(folder, source, settings)
    except LoopRefused as exc:
        return out.fail(exc.code, exc.message)
    if args.report is None:
        return out.show(store, loop, accepted=None,
                        note=f"nothing written: {folder} keeps the run once a report is "
                        "applied (--report FILE, or - for stdin)")
    before = _files(folder)
    try:
        loop.report(codec.parse(_read_report(args.report)))
    except LoopRefused as exc:
        return out.fail(exc.code, exc.message)
    store.save(loop, folder)
    written = [path for path, stamp in _files(folder).items() if before.get(path) != stamp]
    return out.show(store, loop, accepted=True,
                    note="wrote " + " and ".join(str(p) for p in written) if written
                    else f"nothing written in {folder}")


def _files(folder: Path) -> dict[Path, tuple[int, int]]:
    """The files directly in `folder` with their (mtime_ns, size): what a save changed."""
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return {}
    stamps = {}
    for path in entries:
        try:
            info = path.stat()
        except OSError:
            continue
        if path.is_file():
            stamps[path] = (info.st_mtime_ns, info.st_size)
    return stamps


def _family_and_source(target: str, source: str | None) -> tuple[AnyFamily | None, Any]:
    """The family `target` names (and `source`), or the one whose engine reads the file
    `target` (and `target` as the source); (None, the family names) when neither."""
    from ..core.family import Declined
    from ..families import FAMILIES, families, family

    if target in FAMILIES:
        return family(target), source
    for found in families():
        if not isinstance(found.engine, Declined) and not isinstance(found.store, Declined) \
                and found.engine.factory_for(target) is not None:
            return found, target
    return None, ", ".join(FAMILIES)


def _read_report(source: str) -> Any:
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LoopRefused(f"cannot read the report {source}: {exc}", code="bad_report") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise LoopRefused(f"the report is not JSON: {exc.msg} (line {exc.lineno}, column "
                          f"{exc.colno})", code="bad_report") from None


class _Output:
    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json

    def fail(self, code: str, reason: str) -> int:
        if self.as_json:
            emit_json({"refused": True, "code": code, "reason": reason})
        else:
            print(f"refused [{code}]: {reason}", file=sys.stderr)
        return 1

    def show(self, store: Store[Any, Any], loop: Any, accepted: bool | None,
             note: str = "") -> int:
        """Print the next contract; in text, `note` (what was written) follows it."""
        data, text = store.shown(loop, accepted)
        if self.as_json:
            emit_json(data)
        else:
            print(text)
            if note:
                print(note)
        return 0
