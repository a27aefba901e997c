"""Simulated coordinator runs on plain data: the random player of `players.py` and the
rules of `CoordinatorLoop` it can meet, played with local variables instead of the
per-act objects (states, contracts, events), for `crewbook.simulate`. The rules are the
engine's own functions (`crewbook.delivery.rules`: the global caps, the gates, the
delegation checks, sending work back, the step budget, who gives a `Result`, the
outcome), called on these local variables.

Why: a Monte Carlo sweep of a million tasks needs outcomes, not contracts or ledger
lines. Each run here makes the same draws, in the same order, as the random player
driving the full engine, and applies the same checks with the same refusal codes
(measures, question pending, the global caps, a plan first, launch caps, the reviewer
after QA's pass, the exact-version gates, the wait deadline and its expiry, the agent's
step budget); the review decision comes from the engine's own `review_required`. So a
run's outcome (reason, acts, rounds, refusals per code, tokens, cost, time, attempts)
is equal to the full engine's for the same seed: ``tests/simulate/test_fast.py`` plays
both on many seeds and settings and compares them. Anything else (another loop type,
events to log, recorded reports) goes through the full engine.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .behaviour import SECTION, CoordinatorBehaviour
from .diffstat import ChangeSummary, summary_of
from .model import ARCHITECT, DEVELOPER, QA, REVIEWER
from .review import ReviewDecision, review_required
from .rules import (
    DELEGATION_CODES,
    budget_refusal,
    caps_reached,
    delegation_refusal,
    gate_codes,
    outcome_of,
    result_refusal,
    sends_back,
)
from .timing import MAX_DURATION_MS

if TYPE_CHECKING:
    import numpy as np

    from ..simulate.model import Distribution, RandomPolicyFile

__all__ = ["Outcome", "fast_runner"]

#: (finished_reason, finished, acts, rounds, refusals, tokens_in, tokens_out, cost,
#: duration_ms, attempts, refused): one run's outcome, as `crewbook.simulate` keeps it.
Outcome = tuple[str, bool, int, int, int, int, int, float, int, dict[str, int], dict[str, int]]
Runner = Callable[["np.random.Generator"], Outcome]


Sampler = Callable[["np.random.Generator"], float]


def _sampler(dist: Distribution) -> Sampler:
    """One draw from `dist` per call: the very draws `core.players.Draws.value` makes."""
    if isinstance(dist, int | float):
        value = float(dist)
        return lambda rng: value
    kind = dist.dist
    if kind == "fixed":
        fixed = float(dist.value)  # type: ignore[union-attr]
        return lambda rng: fixed
    if kind == "uniform":
        low, high = dist.low, dist.high  # type: ignore[union-attr]
        return lambda rng: float(rng.uniform(low, high))
    if kind == "lognormal":
        mu, sigma = math.log(dist.median), dist.sigma  # type: ignore[union-attr]
        return lambda rng: float(rng.lognormal(mu, sigma))
    if kind == "normal":
        mean, sd = dist.mean, dist.sd  # type: ignore[union-attr]
        return lambda rng: max(0.0, float(rng.normal(mean, sd)))
    scale = dist.mean  # type: ignore[union-attr]
    return lambda rng: float(rng.exponential(scale))


def fast_runner(spec: RandomPolicyFile, loop: Any, max_acts: int, max_refusals: int
                ) -> Runner | None:
    """A function playing one run of `loop`'s task from a run's generator, or None when
    this loop is not a fresh `CoordinatorLoop` (then the full engine plays it)."""
    from .coordinator import CoordinatorLoop

    if type(loop) is not CoordinatorLoop or loop.acts != 0 or loop.view.steps != 0:
        return None
    return _Kernel(spec, loop, max_acts, max_refusals).run


class _Kernel:
    """What one task's runs share: limits, roles, the review decisions met so far."""

    def __init__(self, spec: RandomPolicyFile, loop: Any, max_acts: int,
                 max_refusals: int) -> None:
        task = loop.task
        limits = task.limits
        self.spec = spec
        self.max_acts, self.max_refusals = max_acts, max_refusals
        self.steps_limit: int | None = limits.steps
        #: the run time limit in milliseconds (`caps_reached` on plain numbers)
        self.time_limit: int | None = (None if limits.duration_minutes is None
                                       else limits.duration_minutes * 60_000)
        self.wait_ms = limits.wait_minutes * 60_000
        self.agent_steps: int | None = limits.agent_steps
        catalogue = loop.catalogue
        self.roles = {r.id: r for r in catalogue}
        # (role, anytime, launch limit) of every role the coordinator may delegate to
        self.delegations = tuple((r.id, r.anytime, limits.launch_limit(r.id))
                                 for r in catalogue if r.id != ARCHITECT)
        self.limit = {r: n for r, _, n in self.delegations}
        self.policy = task.policy
        self.decisions: dict[tuple[tuple[str, ...], bool], ReviewDecision] = {}
        self.behaviours: dict[str, tuple[Sampler, Sampler, float, Any]] = {}

    def behaviour(self, role: str) -> tuple[Sampler, Sampler, float, Any]:
        """A role's samplers of durations and tokens, its price and its behaviour."""
        found = self.behaviours.get(role)
        if found is None:
            spec = self.spec
            b = spec.roles.get(role) or spec.default_behaviour()
            found = self.behaviours[role] = (
                _sampler(b.duration_ms if b.duration_ms is not None else spec.duration_ms),
                _sampler(b.tokens if b.tokens is not None else spec.tokens),
                b.price_per_mtok if b.price_per_mtok is not None else spec.price_per_mtok, b)
        return found

    def review(self, files: tuple[str, ...], started: bool) -> bool:
        """Whether the reviewer is required (the engine's `review_required`, remembered)."""
        key = (files, started)
        decision = self.decisions.get(key)
        if decision is None:
            change = summary_of(files) if files else ChangeSummary((), "empty")
            decision = review_required(change, self.policy, reviewer_started=started)
            if len(self.decisions) < 4096:
                self.decisions[key] = decision
        return decision.required

    def run(self, rng: np.random.Generator) -> Outcome:
        spec = self.spec
        random = rng.random
        behaviour = self.behaviour

        share = spec.tokens_in_share

        def chance(p: float) -> bool:
            if p <= 0:
                return False
            if p >= 1:
                return True
            return bool(random() < p)

        decides = spec.section(SECTION, CoordinatorBehaviour)
        finalise_early, fail_at_cap = decides.finalise_early, decides.fail_at_cap
        steps_limit, time_limit = self.steps_limit, self.time_limit
        wait_ms, agent_steps, limit = self.wait_ms, self.agent_steps, self.limit
        roles = self.roles

        # the task's state (times in ms from the clock's start)
        clock = 0
        now: int | None = None
        started: int | None = None
        steps = 0
        plan = False
        version = 0
        files: tuple[str, ...] = ()
        launches: dict[str, int] = {}
        verdicts: list[tuple[str, str, int]] = []
        holder: str | None = ARCHITECT
        wait: tuple[str, int, int, int] | None = None  # role, deadline, launch, version
        question: str | None = None  # the role that asked
        sent_back = 0
        outcome: str | None = None
        acts = 0
        # the player's memory
        asked = capped = False
        late: int | None = None
        passed: set[int] = set()
        approved: set[int] = set()
        negative: set[int] = set()
        # what the run adds up
        attempts: dict[str, int] = {}
        refused: dict[str, int] = {}
        tokens_in = tokens_out = duration = 0
        cost = 0.0
        in_a_row = 0
        reason = ""

        def latest(role: str, v: int) -> str | None:
            for r, verdict, on in reversed(verdicts):
                if r == role and on == v:
                    return verdict
            return None

        def gate() -> str | None:
            """The first gate's code (C4.2), or None when the version may ship."""
            qa = latest(QA, version)  # no QA pass: the first gate, whatever the review
            review = qa == "pass" and self.review(files, launches.get(REVIEWER, 0) > 0)
            codes = gate_codes(qa, review, latest(REVIEWER, version) if review else None)
            return codes[0] if codes else None

        while outcome is None:
            if acts >= self.max_acts:
                reason = "unfinished"
                break
            coordinate = holder == ARCHITECT
            # -------------------------------------------------------- the player
            code: str | None = None
            kind: str  # what is reported: move or agent report
            ms = t_in = t_out = 0
            price_cost = 0.0
            if coordinate:
                role = ARCHITECT
                attempt = 1
                draw_ms, draw_tokens, price, _ = behaviour(ARCHITECT)
                ms = round(draw_ms(rng))
                tokens = round(draw_tokens(rng))
                t_in = round(tokens * share)
                t_out, price_cost = tokens - t_in, round(tokens * price / 1e6, 6)
                base = now if now is not None else clock
                open_capped = caps_reached(steps, steps_limit,
                                           0 if started is None else base - started, time_limit)
                can_finalise = plan and gate() is None
                target = ""
                if can_finalise:
                    kind = "finalise"
                elif capped:
                    kind = "fail"
                elif question is not None:
                    kind = "answer" if not open_capped else "fail"
                elif not plan and not open_capped:
                    kind = "plan"
                else:
                    kind = ""
                    if chance(finalise_early):
                        kind = "finalise"
                    else:
                        if version == 0 or version in negative:
                            want = DEVELOPER
                        elif version not in passed:
                            want = QA
                        elif self.review(files, launches.get(REVIEWER, 0) > 0) and \
                                version not in approved:
                            want = REVIEWER
                        else:
                            want = ""
                        open_move = bool(want) and not open_capped and want in limit and (
                            plan or roles[want].anytime) and (
                            limit[want] is None or launches.get(want, 0) < limit[want]) and (
                            want != REVIEWER or latest(QA, version) == "pass")
                        if want and (open_move or not fail_at_cap):
                            kind, target = "delegate", want
                        else:
                            kind = "fail"
                # ------------------------------------------- the engine's checks
                at = max(clock, (now if now is not None else clock) + ms)
                if ms > MAX_DURATION_MS:
                    code = "bad_report"
                elif question is not None and kind not in ("answer", "fail"):
                    code = "question_pending"
                elif kind not in ("finalise", "fail") and caps_reached(
                        steps, steps_limit, 0 if started is None else at - started, time_limit):
                    code = "cap_reached"
                elif kind == "delegate":
                    known = target in roles
                    why = delegation_refusal(  # in order: known, is_self, planned, anytime,
                        # has_instructions, launches, limit, reviewer, qa_passed
                        known, target == ARCHITECT, plan, known and roles[target].anytime,
                        True, launches.get(target, 0), limit.get(target),
                        target == REVIEWER,
                        target == REVIEWER and latest(QA, version) == "pass")
                    if why is not None:
                        code = DELEGATION_CODES[why]
                elif kind == "finalise":
                    code = "bad_move" if not plan else gate()
                if code is None:  # accepted: the new state
                    if started is None:
                        started = clock
                    if kind == "plan":
                        plan = True
                    elif kind == "delegate":
                        n = launches[target] = launches.get(target, 0) + 1
                        final = verdicts[-1] if verdicts else None
                        if sends_back(target, final[1] if final else None,
                                      final is not None and final[2] == version):
                            sent_back += 1
                        wait = (target, at + wait_ms, n, version)
                        holder = target
                    elif kind == "answer":
                        assert wait is not None
                        wait = (wait[0], at + wait_ms, wait[2], wait[3])
                        holder, question = wait[0], None
                    elif kind == "finalise":
                        outcome = outcome_of(version)
                        holder, wait = None, None
                    else:  # fail
                        outcome = "failed"
                        holder, wait, question = None, None, None
            else:
                assert wait is not None
                role, deadline, attempt, on = wait
                if late is not None:  # the platform's timer
                    clock = max(clock, late + 1000)
                    late = None
                    kind = "expire"
                    asked = False
                    at = max(clock, now if now is not None else clock)
                    if started is None:
                        started = clock
                    holder, wait = ARCHITECT, None
                else:
                    draw_ms, draw_tokens, price, b = behaviour(role)
                    ms = round(draw_ms(rng))
                    tokens = round(draw_tokens(rng))
                    t_in = round(tokens * share)
                    t_out, price_cost = tokens - t_in, round(tokens * price / 1e6, 6)
                    verdict = ""
                    if not asked and chance(b.question):
                        asked = True
                        kind = "question"
                    elif role == DEVELOPER:
                        kind = "built"
                    elif role in (QA, REVIEWER):
                        fail = chance(b.fail)
                        kind = "judgement"
                        verdict = ("fail" if fail else "pass") if role == QA else \
                            ("changes" if fail else "approved")
                    else:
                        kind = "result"
                    at = max(clock, (now if now is not None else clock) + ms)
                    if ms > MAX_DURATION_MS:
                        code = "bad_report"
                    elif at > deadline:
                        code = "wait_expired"
                    elif kind == "built" and budget_refusal(None, agent_steps) is not None:
                        code = "over_budget"  # the random developer reports no steps
                    elif kind == "result" and result_refusal(role) is not None:
                        code = "bad_report"
                    if code is None:
                        if started is None:
                            started = clock
                        if kind == "question":
                            question, holder = role, ARCHITECT
                        else:
                            asked = False
                            if kind == "built":
                                version += 1
                                name = f"src/change_v{on + 1}.py"
                                if name not in files:
                                    files = (*files, name)
                            elif kind == "judgement":
                                verdicts.append((role, verdict, on))
                                if verdict == "pass":
                                    passed.add(on)
                                elif verdict == "approved":
                                    approved.add(on)
                                else:
                                    negative.add(on)
                            holder, wait = ARCHITECT, None
                    elif code == "wait_expired":
                        late = deadline
            # ------------------------------------------------------ bookkeeping
            if code is not None:
                refused[code] = refused.get(code, 0) + 1
                if code == "cap_reached" and coordinate:
                    capped = True
                in_a_row += 1
                if in_a_row >= self.max_refusals:
                    reason = "stuck"
                    break
                continue
            in_a_row = 0
            steps += 1
            now = at
            acts += 1
            if attempt > attempts.get(role, 0):
                attempts[role] = attempt
            if ms:
                duration += ms
                clock += ms
            tokens_in += t_in
            tokens_out += t_out
            cost += price_cost
        if outcome is not None:
            reason = outcome
        return (reason, outcome is not None, acts, sent_back, sum(refused.values()), tokens_in,
                tokens_out, round(cost, 6), duration, attempts, refused)
