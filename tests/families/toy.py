"""A toy two-state loop family that lives in the test suite, not in crewbook: a writer
writes (``write``), a checker passes or fails it (``check``); a failure sends the work
back, at most `MAX_ROUNDS` times. It gives every part a `LoopFamily` names, so the
protocol suite, ``crewbook step``, the Stepper, simulate and conformance can be run
over a family crewbook's own code never heard of (`test_toy_family.py`), registered
through `crewbook.families.register` alone. Its registry line also declares its own
command group (``crewbook toy show --run DIR``, built by `build` below), its roles,
which the routing profile routes, and its section of a random policy (``toy:``).
"""

from __future__ import annotations

import argparse
import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crewbook.core.atomic import write_atomic
from crewbook.core.clock import ManualClock
from crewbook.core.family import CodecBase, LoopFamily, Replay, StoreBase
from crewbook.core.form import Draft, FormBase, as_mapping
from crewbook.core.loop import Act, Cap, Loop, Status, Transition
from crewbook.core.players import Draws, Player, default_rounds
from crewbook.errors import LoopRefused
from crewbook.families import CommandGroup
from crewbook.ledger.conformance import LoopRules
from crewbook.models import FileModel

if TYPE_CHECKING:
    import numpy as np

#: The family's name and its one ledger kind.
NAME = KIND = "toy"
#: Where `register` finds this family.
DOTTED = f"{__name__}:FAMILY"
MAX_ROUNDS = 3
#: State → (the role acting in it, the moves it takes).
STATES: dict[str, tuple[str, tuple[str, ...]]] = {
    "write": ("writer", ("submit",)),
    "check": ("checker", ("pass", "fail")),
}
STATE_FILE = "toy.json"
#: Its own command group (its module is this one: `build`); ``toy-loop`` is an alias.
COMMAND = CommandGroup(NAME, "the toy loop: write, then check (tests only)", __name__,
                       "The toy loop's own commands.", aliases=("toy-loop",))
#: The roles the routing profile routes (crewbook's defaults name none of them).
ROLES = tuple(role for role, _ in STATES.values())


class ToyBehaviour(FileModel):
    """The toy family's own section of a random ``policy.yaml`` (``toy:``)."""

    lenient: bool = False  # the checker passes whatever its ``fail`` chance says


#: Its sections of a random policy: ``toy:`` (`ToyBehaviour`).
POLICY = (("toy", f"{__name__}:ToyBehaviour"),)


@dataclass(frozen=True)
class ToyState:
    """Where the toy loop is: its state, the acts and rounds so far, why it finished."""

    at: str = "write"
    acts: int = 0
    rounds: int = 0
    finished_reason: str | None = None


@dataclass(frozen=True)
class ToyReport:
    """One move (``submit``, ``pass``, ``fail``) with a note."""

    move: str
    note: str = ""


class ToyLoop(Loop[ToyState, ToyReport]):
    """write → check → (pass: finished ``approved`` | fail: back to write)."""

    kind = KIND
    copy_state = False

    def __init__(self, state: ToyState | None = None, **kwargs: Any) -> None:
        state = state or ToyState()
        kwargs.setdefault("clock", ManualClock())
        super().__init__(state, acts=state.acts, **kwargs)

    def is_finished(self) -> bool:
        return self._state.finished_reason is not None

    def transition(self, state: ToyState, report: ToyReport) -> Transition[ToyState]:
        if not isinstance(report, ToyReport):
            raise LoopRefused(f"the toy loop takes a ToyReport, not a {type(report).__name__}",
                              code="bad_report")
        role, moves = STATES[state.at]
        if report.move not in moves:
            raise LoopRefused(f"at {state.at!r} the moves are {', '.join(moves)}, not "
                              f"{report.move!r}", code="bad_move")
        base = {"role": role, "stage": state.at, "summary": report.note,
                "payload": {"act": state.acts + 1}}
        acts = state.acts + 1
        if report.move == "submit":
            return Transition(replace(state, at="check", acts=acts),
                              [{**base, "kind": "report"}])
        events: list[Mapping[str, Any]] = [{**base, "kind": "verdict", "verdict": report.move}]
        if report.move == "pass":
            events.append({"kind": "finish", "verdict": "approved", "summary": "approved"})
            return Transition(replace(state, acts=acts, finished_reason="approved"), events)
        rounds = state.rounds + 1
        if rounds >= MAX_ROUNDS:
            events.append({"kind": "finish", "verdict": "rounds_exhausted", "summary": ""})
            return Transition(replace(state, acts=acts, rounds=rounds,
                                      finished_reason="rounds_exhausted"), events)
        return Transition(replace(state, at="write", acts=acts, rounds=rounds), events)

    def contract(self) -> Act:
        s = self._state
        if s.finished_reason is not None:
            return Act(self.kind, s.acts + 1, None, finished=True,
                       finished_reason=s.finished_reason)
        role, moves = STATES[s.at]
        return Act(self.kind, s.acts + 1, role, stage=s.at, moves=moves,
                   attempt=s.rounds + 1, expects="a move")

    def status(self) -> Status:
        s = self._state
        finished = s.finished_reason is not None
        return Status(loop=self.kind, acts=s.acts, current=None if finished else s.at,
                      previous=None, finished=finished, finished_reason=s.finished_reason,
                      counters={"sent_back": s.rounds},
                      caps=(Cap("rounds", s.rounds, MAX_ROUNDS),))

    def trail_rows(self) -> list[dict[str, Any]]:
        rows = []
        for e in self.ledger.events:  # type: ignore[attr-defined]
            if e["kind"] in ("report", "verdict"):
                rows.append({"act": e["payload"]["act"], "ts": e["ts"], "role": e["role"],
                             "stage": e["stage"], "move": e["kind"],
                             "verdict": e.get("verdict"), "version": None,
                             "summary": e.get("summary")})
        return rows


def _parse(data: Mapping[str, Any]) -> ToyReport:
    if not isinstance(data, Mapping) or not isinstance(data.get("move"), str):
        raise LoopRefused("a toy report is a JSON object with a 'move'", code="bad_report")
    unknown = sorted(set(data) - {"move", "note"})
    if unknown:
        raise LoopRefused(f"a toy report has no key {unknown[0]!r}", code="bad_report")
    return ToyReport(move=data["move"], note=str(data.get("note") or ""))


class ToyCodec(CodecBase[ToyState, ToyReport]):
    """Toy reports as ``{"move", "note"?}``; back from ``report``/``verdict`` events."""

    def parse(self, data: Mapping[str, Any]) -> ToyReport:
        return _parse(data)

    def serialize(self, report: ToyReport) -> dict[str, Any]:
        return {"move": report.move, **({"note": report.note} if report.note else {})}

    def report_of(self, event: Mapping[str, Any], replay: Replay[ToyState, ToyReport]
                  ) -> ToyReport | None:
        if event.get("kind") not in ("report", "verdict"):
            return None
        move = "submit" if event["kind"] == "report" else str(event["verdict"])
        return ToyReport(move, str(event.get("summary") or ""))


class _RandomToy(Player):
    def __init__(self, draws: Draws, lenient: bool) -> None:
        self.draws = draws
        self.lenient = lenient

    def act(self, contract: Act) -> Any:
        if contract.stage == "write":
            return ToyReport("submit")
        failed = not self.lenient and self.draws.chance(self.draws.behaviour(contract.role).fail)
        return ToyReport("fail" if failed else "pass")


class ToyPlayers:
    """The happy path (submit, pass) and a checker failing with its ``fail`` chance."""

    def happy(self, loop: Loop[Any, Any], act: Act) -> Any:
        if act.finished:
            return None
        return ToyReport("submit" if act.stage == "write" else "pass", "ok")

    def roles(self, loop: Loop[Any, Any]) -> list[str]:
        return sorted(role for role, _ in STATES.values())

    def check_random(self, spec: Any, loop: Loop[Any, Any]) -> None:
        """Any random policy drives the toy loop."""

    def random_player(self, spec: Any, loop: Loop[Any, Any], rng: np.random.Generator,
                      clock: Any) -> Player:
        return _RandomToy(Draws(spec, rng), spec.section("toy", ToyBehaviour).lenient)

    def rounds(self, loop: Loop[Any, Any]) -> int:
        return default_rounds(loop)


class ToyForm(FormBase):
    """The move and the note; a checker's verdict is its move."""

    def __init__(self) -> None:
        self.applied: list[int] = []  # the acts the Stepper applied through this form

    def apply(self, loop: Any, act: Act, report: Any) -> Act:
        self.applied.append(act.act)
        return super().apply(loop, act, report)

    def verdicts(self, loop: Any, act: Act) -> tuple[str, ...]:
        return ()

    def to_draft(self, loop: Any, act: Act, report: Any) -> Draft:
        data = as_mapping(report)
        return Draft(move=data.get("move"), role=act.role, moves=act.moves,
                     fields={"note": data.get("note") or ""})

    def build(self, loop: Any, act: Act, draft: Draft) -> Any:
        return ToyReport(str(draft.move), str(draft.fields.get("note") or ""))

    def propose(self, loop: Any, act: Act) -> Draft:
        return Draft(move=act.moves[0] if act.moves else None, role=act.role, moves=act.moves,
                     fields={"note": "proposed"})


class ToyStore(StoreBase[ToyState, ToyReport]):
    """A toy run kept as ``toy.json`` (its state) in a folder; the ledger is in memory."""

    def load(self, folder: Path, source: object = None,
             settings: Mapping[str, str] | None = None) -> Loop[Any, Any]:
        path = folder / STATE_FILE
        if not path.is_file():
            return ToyLoop(run="toy-run")
        return ToyLoop(ToyState(**json.loads(path.read_text("utf-8"))), run="toy-run")

    def save(self, loop: Loop[Any, Any], folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic(folder / STATE_FILE, json.dumps(asdict(loop.view), sort_keys=True))

    def sample_source(self, folder: Path, kind: str) -> object:
        """Nothing: a toy run starts from nothing."""
        return None


class ToyEngine:
    """Toy loops for a ``.toy`` path (its content is not read: every toy loop is alike)."""

    sources = "a toy file (.toy)"

    def factory_for(self, source: Any) -> Callable[..., Loop[Any, Any]] | None:
        if isinstance(source, str | Path) and str(source).endswith(".toy"):
            return ToyLoop
        return None


class ToyFastSimulator:
    """Asked by simulate for a plain-data runner (recorded in `asked`); it gives none, so
    simulate plays the engine."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def runner(self, spec: Any, loop: Loop[Any, Any], max_acts: int, max_refusals: int
               ) -> None:
        self.asked.append(loop.kind)
        return None


def _rules() -> tuple[LoopRules, ...]:
    return (LoopRules(KIND, judges=frozenset({"checker"}),
                      roles=frozenset({"writer", "checker"})),)


def _toy_loop(folder: str) -> ToyLoop:
    return ToyLoop(run="toy-1")


def _sample(folder: Path, kind: str = KIND) -> Callable[[], Loop[Any, Any]]:
    return functools.partial(_toy_loop, str(folder))


FAMILY: LoopFamily[ToyState, ToyReport] = LoopFamily(
    name=NAME, kinds=(KIND,), summary="a toy: write, then check (tests only)",
    engine=ToyEngine(),
    codec=ToyCodec(), players=ToyPlayers(), form=ToyForm(), rules=_rules, store=ToyStore(),
    sample=_sample,
    fast_simulator=ToyFastSimulator(),
)


def build(parser: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """The toy's command group: ``show --run DIR``, the run's state and who acts next."""
    sub = parser.add_subparsers(dest="toy_command", metavar="COMMAND", required=True)
    show = sub.add_parser("show", parents=[common], help="the run's state and next role")
    show.add_argument("--run", required=True, metavar="DIR", help="the folder of the run")
    show.set_defaults(func=_show)


def _show(args: argparse.Namespace) -> int:
    loop = ToyStore().load(Path(args.run))
    state = loop.view
    assert isinstance(state, ToyState)
    print(json.dumps({**asdict(state), "role": STATES[state.at][0]}, sort_keys=True))
    return 0
