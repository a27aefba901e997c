"""``crewbook step PIPELINE.toml --run DIR [--report FILE|-] [--json]``: a pipeline run
stepped from a shell, one report per call; ``crewbook step FAMILY [SOURCE] --run DIR``
steps a loop of any family whose ``FAMILY.store`` keeps runs (``delivery TASK.yaml``,
``crew`` and ``autonomous`` with DIR the project), found through `crewbook.families`.

DIR keeps the run: ``state.json`` (where the run is, its artifacts, the pipeline's
hash) and ``ledger.jsonl`` (every accepted act; `crewbook.Ledger` format). Without
``--report`` the command prints the current contract and changes nothing (DIR need
not exist). With a JSON report (a file, or ``-`` for standard input) it applies it,
saves the state and prints the next contract. A refused report exits 1 with the
reason and leaves DIR byte-identical; so does a pipeline file that changed since the
run started. ``--workspace`` (checked by ``ground_references``; default: the one the
run started with, else the current folder), ``--kinds`` and ``--invalid`` are
remembered from the first accepted report.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInputError, LoopRefused
from ._shared import emit_json

if TYPE_CHECKING:  # the engine loads when a step runs, not when the parser is built
    from ..core.loop import Act
    from ..pipeline.engine import InvalidPolicy, PipelineLoop

STATE_FILE = "state.json"
LEDGER_FILE = "ledger.jsonl"
STATE_FORMAT = "crewbook-pipeline-run/1"


def register(subparsers: Any, common: argparse.ArgumentParser | None = None) -> None:
    """Add ``step`` to the `crewbook` command's subparsers (`common`: shared options such
    as ``--json``, given as a parent parser)."""
    p = subparsers.add_parser(
        "step", help="step a pipeline run: print the contract, or apply a report (SPEC B)",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[common] if common is not None else [])
    p.add_argument("pipeline", metavar="PIPELINE.toml|FAMILY",
                   help="the pipeline file, or a loop family (delivery, crew, autonomous...)")
    p.add_argument("source", nargs="?", metavar="SOURCE",
                   help="with a family: what to start a new run from (a task file...)")
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


class _LazyLedger:
    """Opens the run's ledger only when an accepted act is appended (refusals touch nothing)."""

    def __init__(self, path: Path, run: str) -> None:
        self.path, self.run = path, run
        self._ledger: Any = None

    def append(self, event: Any) -> Any:
        if self._ledger is None:
            from ..ledger import Ledger

            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._ledger = Ledger(self.path, run=self.run, loop="pipeline")
        return self._ledger.append(event)

    @property
    def opened(self) -> bool:
        """Whether an act was appended (the ledger file was written)."""
        return self._ledger is not None

    def close(self) -> None:
        if self._ledger is not None:
            self._ledger.close()


def cmd_step(args: argparse.Namespace) -> int:
    """The ``step`` command (see the module docstring)."""
    as_json = bool(getattr(args, "json", False))
    out = _Output(as_json)
    from ..families import FAMILIES

    if args.pipeline in FAMILIES and args.pipeline != "pipeline":
        return _step_family(args, out)
    if args.pipeline == "pipeline":
        if args.source is None:
            return out.fail("usage", "name the pipeline file: crewbook step pipeline "
                            "PIPELINE.toml --run DIR")
        args.pipeline = args.source
    folder = Path(args.run)
    try:
        saved = _read_state(folder)
    except (ValueError, OSError) as exc:
        return out.fail("bad_run", f"cannot read the run in {folder}: {exc}")
    from ..pipeline.engine import PipelineState, parse_report
    from ..pipeline.pipeline import load_pipeline

    try:
        pipeline = load_pipeline(args.pipeline, kinds=args.kinds or saved.get("kinds"))
    except InvalidInputError as exc:
        return out.fail("invalid_pipeline", str(exc))
    if saved and saved.get("pipeline", {}).get("sha256") != pipeline.sha256:
        return out.fail("pipeline_changed", f"{args.pipeline} changed since the run in "
                        f"{folder} started; start a new run folder (or restore the file)")
    workspace = args.workspace or saved.get("workspace") or os.getcwd()
    invalid: InvalidPolicy = "refuse" if (args.invalid or saved.get("invalid")) == "refuse" \
        else "retry"
    run = saved.get("run") or _new_run_id()
    ledger = _LazyLedger(folder / LEDGER_FILE, run)
    state = PipelineState.from_dict(saved["state"]) if saved else None
    loop = pipeline.loop(Path(workspace), ledger=ledger, run=run, invalid=invalid,
                         state=state, acts=int(saved.get("acts", 0)))
    if args.report is None:
        return out.contract(loop, accepted=None, note=f"nothing written: {folder} keeps the "
                            "run once a report is applied (--report FILE, or - for stdin)")
    try:
        data = _read_report(args.report)
        loop.report(parse_report(data))
    except LoopRefused as exc:
        return out.fail(exc.code, exc.message)
    finally:
        ledger.close()
    _write_state(folder, {
        "format": STATE_FORMAT, "run": run, "acts": loop.acts,
        "pipeline": {"id": pipeline.id, "path": str(Path(args.pipeline).resolve()),
                     "sha256": pipeline.sha256},
        "kinds": str(pipeline.kinds_config) if args.kinds else saved.get("kinds"),
        "workspace": str(Path(workspace).resolve()), "invalid": invalid,
        "state": loop.state.to_dict(),
    })
    written = [folder / STATE_FILE] + ([folder / LEDGER_FILE] if ledger.opened else [])
    return out.contract(loop, accepted=True,
                        note="wrote " + " and ".join(str(p) for p in written))


def _step_family(args: argparse.Namespace, out: _Output) -> int:
    """Step a loop of the family `args.pipeline` kept by its store in `args.run`."""
    from ..core.family import Declined
    from ..families import family

    found = family(args.pipeline)
    if isinstance(found.store, Declined) or isinstance(found.codec, Declined):
        reason = found.store if isinstance(found.store, Declined) else found.codec
        return out.fail("not_steppable", f"the {found.name} family keeps no runs for the "
                        f"command line: {reason}")
    folder = Path(args.run)
    loop = found.store.load(folder, args.source)
    if args.report is None:
        return out.loop_contract(loop, accepted=None)
    try:
        loop.report(found.codec.parse(_read_report(args.report)))
    except LoopRefused as exc:
        return out.fail(exc.code, exc.message)
    found.store.save(loop, folder)
    return out.loop_contract(loop, accepted=True)


def _new_run_id() -> str:
    from ..ledger.writer import new_run_id

    return new_run_id()


def _read_state(folder: Path) -> dict[str, Any]:
    path = folder / STATE_FILE
    if not path.is_file():
        return {}
    data = json.loads(path.read_text("utf-8"))
    if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
        raise InvalidInputError(f"{path} is not a crewbook pipeline run state ({STATE_FORMAT})")
    return data


def _write_state(folder: Path, data: dict[str, Any]) -> None:
    from ..core.atomic import write_atomic

    write_atomic(folder / STATE_FILE, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


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

    def contract(self, loop: PipelineLoop, accepted: bool | None, note: str = "") -> int:
        """Print the next contract; in text, `note` (what was written) follows it."""
        act = loop.contract()
        if self.as_json:
            inputs = {n: loop.artifact(n) for n in act.receives if n in loop.artifacts}
            emit_json({"accepted": accepted, "run": loop.run, "contract": act.to_dict(),
                       "inputs": inputs, "status": loop.status().to_dict()})
        else:
            print(render_contract(act, loop.pipeline.id, accepted))
            if note:
                print(note)
        return 0

    def loop_contract(self, loop: Any, accepted: bool | None) -> int:
        act = loop.contract()
        if self.as_json:
            emit_json({"accepted": accepted, "run": loop.run, "contract": act.to_dict(),
                       "status": loop.status().to_dict()})
        else:
            print(render_act(act, accepted))
        return 0


def render_act(act: Act, accepted: bool | None = None) -> str:
    """A contract of any loop as ``step FAMILY`` prints it."""
    lines = [f"accepted; next is act {act.act}"] if accepted else []
    if act.finished:
        lines.append(f"{act.loop} loop finished: {act.finished_reason}")
    else:
        lines += [f"{act.loop} · act {act.act} · {act.stage or act.role} "
                  f"(role {act.role}, attempt {act.attempt})",
                  f"expects: {act.expects or 'a report'}",
                  "moves: " + (", ".join(act.moves) or "none")]
        lines += [f"feedback: {f}" for f in act.feedback]
    return "\n".join(lines)


def render_contract(act: Act, pipeline: str, accepted: bool | None = None) -> str:
    """A contract as the ``step`` command prints it."""
    lines = [f"accepted; next is act {act.act}"] if accepted else []
    if act.finished:
        lines.append(f"pipeline {pipeline} finished: {act.finished_reason}")
        if act.details.get("reason"):
            lines.append(f"reason: {act.details['reason']}")
    else:
        details = act.details
        lines += [
            f"pipeline {pipeline} · act {act.act} · stage {act.stage} (attempt {act.attempt})",
            "receives: " + (", ".join(f"{n} v{details.get('inputs', {}).get(n, '?')}"
                                      for n in act.receives) or "nothing"),
            f"produces: {act.expects or 'nothing'}",
            f"prompt: {act.prompt_path}",
            "budget: " + ", ".join(f"{k} {v}" for k, v in act.budget.items() if v is not None),
            "moves: " + (", ".join(act.moves) or "none"),
        ]
        if details.get("writes") is not None:
            lines.append("writes: " + ", ".join(details["writes"]))
        if act.feedback:
            lines.append("feedback:")
            lines += [f"  - {f}" for f in act.feedback]
    if act.journal:
        lines.append("journal:")
        lines += [f"  - {j.kind}" + (f" ({j.by})" if j.by else "") + f": {j.text}"
                  for j in act.journal]
    return "\n".join(lines)

