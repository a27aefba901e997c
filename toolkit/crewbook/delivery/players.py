"""The delivery family's players: the happy path (plan, then developer → QA → reviewer,
then finalise; the one the Stepper proposes) and the random player simulate uses (agents
draw their reports; as coordinator it plans, delegates, answers, finalises or fails)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..core.loop import Act, Loop
from ..core.players import Draws, Player, default_rounds
from ..errors import LoopRefused
from .behaviour import SECTION, CoordinatorBehaviour
from .codec import Built, Delegate, Fail, Finalise, Judgement, Plan, Result

if TYPE_CHECKING:
    import numpy as np

    from ..simulate.model import RandomPolicyFile

__all__ = ["DeliveryPlayers", "happy_report", "role_verdicts"]


class DeliveryPlayers:
    """Standard and coordinator loops: the delivery roles of the loop's catalogue."""

    def happy(self, loop: Loop[Any, Any], act: Act) -> Any:
        """The happy-path report for `act` (None once finished)."""
        if act.finished:
            return None
        return happy_report(loop, act, role_verdicts(loop, act))

    def roles(self, loop: Loop[Any, Any]) -> list[str]:
        """The roles of the loop's catalogue."""
        return list(loop.catalogue.ids)  # type: ignore[attr-defined]

    def random_player(self, spec: RandomPolicyFile, loop: Loop[Any, Any],
                      rng: np.random.Generator, clock: Any) -> Player:
        """Agents draw their reports; as coordinator it plans, delegates, finalises."""
        return _DeliveryPlayer(spec, loop, rng, clock)

    def check_random(self, spec: RandomPolicyFile, loop: Loop[Any, Any]) -> None:
        """Any random policy drives a delivery loop."""

    def rounds(self, loop: Loop[Any, Any]) -> int:
        """How many times work was sent back (the status's ``sent_back`` counter)."""
        return default_rounds(loop)



def role_verdicts(loop: Any, act: Act) -> tuple[str, ...]:
    """The verdicts the acting role may give (QA: pass, fail; reviewer: approved,
    changes); none for the coordinator or a role outside the catalogue."""
    if act.role is None or act.stage == "coordinate":
        return ()
    try:
        return tuple(loop.catalogue.role(act.role).verdicts)
    except Exception:  # a role outside the catalogue gives no verdict
        return ()


def happy_report(loop: Any, act: Act, verdicts: Sequence[str] = ()) -> Any:
    """The happy path (one, for the Stepper and simulate): plan, then developer → QA →
    reviewer, then finalise; None when the contract offers none of these moves."""
    role = act.role
    if act.stage == "coordinate":
        return _coordinate(loop, act)
    if "plan" in act.moves:
        return Plan(("the change does what the task asks",), summary="plan the change",
                    duration_ms=5 * 60_000)
    if "built" in act.moves:
        budget = act.details.get("steps")  # a budgeted launch reports its steps (C6)
        return Built(("src/change.py",), summary="the change", duration_ms=20 * 60_000,
                     steps=min(budget, 10) if isinstance(budget, int) else None)
    if "judgement" in act.moves and role is not None:
        return Judgement(role, verdicts[0] if verdicts else "pass", duration_ms=8 * 60_000)
    if "result" in act.moves and role is not None:
        return Result(role, f"{role} findings", duration_ms=5 * 60_000)
    return None


def _coordinate(loop: Any, act: Act) -> Any:
    moves = act.moves
    if "plan" in moves:
        return Plan(("the change does what the task asks",), summary="plan the change",
                    duration_ms=5 * 60_000)
    if "finalise" in moves:
        return Finalise()
    last = _last_agent(loop)
    wanted = "developer"
    if last is not None and last[0] == "developer":
        wanted = "qa"
    elif last == ("qa", "pass"):
        wanted = "reviewer"
    if f"delegate:{wanted}" not in moves:
        wanted = next((m.partition(":")[2] for m in moves if m.startswith("delegate:")), "")
    if not wanted:
        return Fail("nothing left to try")
    return Delegate(wanted, f"{wanted}: work on version {act.details.get('version', 0)}")


def _last_agent(loop: Any) -> tuple[str, str | None] | None:
    """(actor, verdict) of the last agent report on the loop's trail (its public state)."""
    steps = getattr(loop.state, "trail", ())
    for step in reversed(tuple(steps)):
        if step.actor not in ("architect", "platform") and step.move in (
                "built", "judgement", "result"):
            return (step.actor, step.verdict)
    return None


class _DeliveryPlayer(Player):
    """Agents draw their reports; as coordinator: plan, the developer until a version
    exists or after a negative verdict, then QA, then the reviewer when review is
    required, then finalise; fail when the role needed next cannot be launched."""

    def __init__(self, spec: RandomPolicyFile, loop: Loop[Any, Any],
                 rng: np.random.Generator, clock: Any) -> None:
        from . import codec

        self.d = codec  # its report classes, looked up once
        self.draws = Draws(spec, rng)
        self.spec = spec
        self.clock = clock
        self.coordinator = loop.kind == "coordinator"
        self.decides = spec.section(SECTION, CoordinatorBehaviour)
        self.late: datetime | None = None
        self.asked = False
        self.passed: set[int] = set()
        self.approved: set[int] = set()
        self.negative: dict[int, tuple[str, ...]] = {}
        self.capped = False  # a move was refused at a cap: only finalise or fail remain

    def act(self, contract: Act) -> Any:
        if contract.stage == "coordinate":
            return self._coordinate(contract)
        if self.late is not None:  # the platform's timer: the wait has passed its deadline
            self.clock.catch_up(self.late + timedelta(seconds=1))
            self.late = None
            return self.d.Expire()
        return self._agent(contract)

    def _agent(self, c: Act) -> Any:
        d = self.d
        Built, Judgement, Plan, Question, Result = (  # the report classes
            d.Built, d.Judgement, d.Plan, d.Question, d.Result)
        role = str(c.role)
        draws = self.draws
        b = draws.behaviour(role)
        m = draws.measures(role)
        version = int(c.details.get("version", 0))
        if self.coordinator and not self.asked and draws.chance(b.question):
            self.asked = True
            return Question(role, f"{role}: which of the criteria matters most?", **m)
        if role == "architect":
            return Plan(("the change does what the task asks", "the tests pass"), **m)
        if role == "developer":
            budget = c.details.get("steps")  # a budgeted launch reports its steps (C6)
            return Built((f"src/change_v{version + 1}.py",),
                         steps=min(budget, 10) if isinstance(budget, int) else None, **m)
        if role in ("qa", "reviewer"):
            fail = draws.chance(b.fail)
            verdict = ("fail" if fail else "pass") if role == "qa" else \
                ("changes" if fail else "approved")
            findings = (f"{role}: simulated finding on version {version}",) if fail else ()
            return Judgement(role, verdict, version, findings, **m)
        return Result(role, f"{role}: simulated findings", (), **m)

    def _coordinate(self, c: Act) -> Any:
        r = self.d
        Answer, Delegate, Fail, Finalise, Plan = (  # the report classes
            r.Answer, r.Delegate, r.Fail, r.Finalise, r.Plan)
        d = c.details
        moves = c.moves
        m = self.draws.measures("architect")
        if "finalise" in moves:
            return Finalise(**m)
        if self.capped:
            caps = ", ".join(d.get("caps_reached") or ()) or "a cap was reached"
            return Fail(f"simulated coordinator stops at a cap: {caps}", **m)
        if d.get("question"):
            if "answer" in moves:
                return Answer("go on as planned", "the plan's criteria decide", **m)
            return Fail("simulated coordinator cannot answer at a cap", **m)
        if "plan" in moves:
            return Plan(("the change does what the task asks", "the tests pass"), **m)
        version = int(d.get("version", 0))
        if self.draws.chance(self.decides.finalise_early):
            return Finalise(**m)  # refused by the gates; the refusal is counted
        fixes: tuple[str, ...] = ()
        if version == 0 or version in self.negative:
            want, fixes = "developer", self.negative.get(version, ())
        elif version not in self.passed:
            want = "qa"
        elif d.get("review_required") and version not in self.approved:
            want = "reviewer"
        else:
            want = ""
        if want and f"delegate:{want}" in moves:
            return Delegate(want, f"simulated: {want} on version {version}", fixes=fixes, **m)
        if not self.decides.fail_at_cap and want:
            return Delegate(want, f"simulated: {want} on version {version}", fixes=fixes, **m)
        caps = ", ".join(d.get("caps_reached") or ()) or f"{want or 'nobody'} cannot be launched"
        return Fail(f"simulated coordinator gives up: {caps}", **m)

    def accepted(self, contract: Act, report: Any) -> None:
        if contract.stage != "coordinate" and type(report) is not self.d.Question:
            self.asked = False
        if type(report) is self.d.Judgement:
            version = int(report.version if report.version is not None
                          else contract.details.get("version", 0))
            if report.verdict == "pass":
                self.passed.add(version)
            elif report.verdict == "approved":
                self.approved.add(version)
            else:
                self.negative[version] = report.findings

    def refused(self, contract: Act, report: Any, error: LoopRefused) -> None:
        if error.code == "cap_reached" and contract.stage == "coordinate":
            self.capped = True
        if error.code == "wait_expired":
            deadline = contract.details.get("deadline")
            if isinstance(deadline, str):
                self.late = datetime.fromisoformat(deadline)
