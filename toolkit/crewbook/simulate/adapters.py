"""What the simulation knows about each kind of loop: how to read a report from JSON,
the roles a policy may name, a random player, recorded events back into reports, and
the rounds of a finished run.

Adapters are looked up by the loop's class (`adapter_for`); the pipeline, standard and
coordinator loops have one here, and a new engine registers its own with
`register_adapter(LoopClass, adapter)`. The scripted, replay-from-reports and callable
policies need no adapter beyond ``parse`` (a loop without one can still be simulated
with report objects).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..errors import LoopRefused, SimulationError
from ..loop import Act, Loop
from .policies import Player, SimClock

if TYPE_CHECKING:
    import numpy as np

    from .model import Distribution, RandomPolicyFile, RoleBehaviour


class Adapter:
    """The default: reports must be objects; no random player; rounds from the status."""

    def parse(self, data: Mapping[str, Any]) -> Any:
        """A report from JSON data."""
        raise LoopRefused("this loop has no JSON report format known to the simulation: give "
                          "report objects", code="bad_report")

    def roles(self, loop: Loop[Any, Any]) -> list[str]:
        """The roles (or stages) a policy may name."""
        return []

    def random_player(self, spec: RandomPolicyFile, loop: Loop[Any, Any],
                      rng: np.random.Generator, clock: SimClock) -> Player:
        """A player drawing reports as `spec` says."""
        raise SimulationError(f"no random player for {loop.kind} loops yet: use a scripted, "
                              "replay or callable policy")

    def check_random(self, spec: RandomPolicyFile, loop: Loop[Any, Any]) -> None:
        """Raise `SimulationError` when `spec` cannot drive `loop`."""

    def from_events(self, events: Sequence[Mapping[str, Any]], loop: Loop[Any, Any]
                    ) -> tuple[list[Any], list[datetime | None]]:
        """The reports (and their times) that produced these recorded events."""
        raise SimulationError(f"replaying a {loop.kind} ledger is not supported: replay "
                              "report lists instead")

    def rounds(self, loop: Loop[Any, Any]) -> int:
        """How many times work went back in this run."""
        status = loop.status()
        if "sent_back" in status.counters:
            return int(status.counters["sent_back"])
        return sum(c.used for c in status.caps if c.name.startswith("rounds back to"))


_REGISTRY: list[tuple[type[Any], Adapter]] = []


def register_adapter(loop_class: type[Any], adapter: Adapter) -> None:
    """Use `adapter` for loops of `loop_class` (and its subclasses)."""
    _REGISTRY.insert(0, (loop_class, adapter))


def _builtin() -> None:
    if _REGISTRY:
        return
    from ..delivery.engine import DeliveryLoop
    from ..pipeline.engine import PipelineLoop

    _REGISTRY.extend([(PipelineLoop, PipelineAdapter()), (DeliveryLoop, DeliveryAdapter())])


def adapter_for(loop: Loop[Any, Any]) -> Adapter:
    """The adapter of `loop`'s class."""
    _builtin()
    for cls, adapter in _REGISTRY:
        if isinstance(loop, cls):
            return adapter
    return Adapter()


# ------------------------------------------------------------------------ drawing
class Draws:
    """The measures of one act, drawn from a random policy's distributions."""

    def __init__(self, spec: RandomPolicyFile, rng: np.random.Generator) -> None:
        from .model import RoleBehaviour

        self.spec, self.rng = spec, rng
        self.random = rng.random
        self.default = RoleBehaviour()

    def behaviour(self, role: str | None) -> RoleBehaviour:
        """The behaviour of `role` (the defaults when the policy does not name it)."""
        return self.spec.roles.get(role or "") or self.default

    def value(self, dist: Distribution) -> float:
        """One draw from `dist`."""
        if isinstance(dist, int | float):
            return float(dist)
        kind = dist.dist
        rng = self.rng
        if kind == "fixed":
            return float(dist.value)  # type: ignore[union-attr]
        if kind == "uniform":
            return float(rng.uniform(dist.low, dist.high))  # type: ignore[union-attr]
        if kind == "lognormal":
            import math

            return float(rng.lognormal(math.log(dist.median), dist.sigma))  # type: ignore[union-attr]
        if kind == "normal":
            return max(0.0, float(rng.normal(dist.mean, dist.sd)))  # type: ignore[union-attr]
        return float(rng.exponential(dist.mean))  # type: ignore[union-attr]

    def measures(self, role: str | None) -> dict[str, Any]:
        """``duration_ms``, ``tokens_in``, ``tokens_out``, ``cost`` of one act."""
        b = self.behaviour(role)
        spec = self.spec
        duration = round(self.value(b.duration_ms if b.duration_ms is not None
                                    else spec.duration_ms))
        tokens = round(self.value(b.tokens if b.tokens is not None else spec.tokens))
        tokens_in = round(tokens * spec.tokens_in_share)
        price = b.price_per_mtok if b.price_per_mtok is not None else spec.price_per_mtok
        return {"duration_ms": duration, "tokens_in": tokens_in,
                "tokens_out": tokens - tokens_in, "cost": round(tokens * price / 1e6, 6)}

    def chance(self, p: float) -> bool:
        """True with probability `p` (no draw when `p` is 0 or 1)."""
        if p <= 0:
            return False
        if p >= 1:
            return True
        return bool(self.random() < p)

    def choice(self, weights: Mapping[str, float]) -> str:
        """One key of `weights`, drawn by weight."""
        total = sum(weights.values())
        pick = self.random() * total
        for key, weight in weights.items():
            pick -= weight
            if pick < 0:
                return key
        return next(reversed(list(weights)))


# ----------------------------------------------------------------------- pipeline
class PipelineAdapter(Adapter):
    """Pipeline loops: stages are the roles; artifacts are made from their kinds' schemas."""

    def parse(self, data: Mapping[str, Any]) -> Any:
        from ..pipeline import parse_report

        return parse_report(data)

    def roles(self, loop: Loop[Any, Any]) -> list[str]:
        return list(loop.pipeline.topology.order)  # type: ignore[attr-defined]

    def check_random(self, spec: RandomPolicyFile, loop: Loop[Any, Any]) -> None:
        templates(loop.pipeline)  # type: ignore[attr-defined]  # raises when unsynthesisable
        judged = judged_fields(loop.pipeline)  # type: ignore[attr-defined]
        for role, b in spec.roles.items():
            for key in b.verdicts:
                if key not in judged.get(role, {}):
                    known = ", ".join(judged.get(role, {})) or "none"
                    raise SimulationError(f"stage {role!r} has no transition reading {key!r}; "
                                          f"the fields its transitions read: {known}")

    def random_player(self, spec: RandomPolicyFile, loop: Loop[Any, Any],
                      rng: np.random.Generator, clock: SimClock) -> Player:
        return _PipelinePlayer(spec, loop, rng)

    def from_events(self, events: Sequence[Mapping[str, Any]], loop: Loop[Any, Any]
                    ) -> tuple[list[Any], list[datetime | None]]:
        from ..pipeline import StageReport, Steer

        pipeline = loop.pipeline  # type: ignore[attr-defined]
        made = templates(pipeline)
        plans = pipeline.plans
        reports: list[Any] = []
        times: list[datetime | None] = []
        for i, e in enumerate(events):
            kind = e.get("kind")
            if kind == "note" and isinstance(e.get("payload"), Mapping) and \
                    e["payload"].get("journal") in ("steering", "approval"):
                reports.append(Steer(str(e.get("summary") or ""), str(e.get("role") or "human"),
                                     e["payload"]["journal"]))
                times.append(e.get("ts"))
                continue
            if kind != "report":
                continue
            stage = str(e.get("stage"))
            payload = e.get("payload") or {}
            measures: dict[str, Any] = {
                k: e.get(k) for k in ("duration_ms", "tokens_in", "tokens_out", "cost")
                if e.get(k) is not None}
            if payload.get("outcome") == "failed" or stage not in plans:
                reports.append(StageReport(stage, {}, summary=e.get("summary"), **measures))
                times.append(e.get("ts"))
                continue
            artifacts = {n: _copy(v) for n, v in made.get(stage, {}).items()
                         if n in payload.get("artifacts", made.get(stage, {}))}
            for later in events[i + 1:]:
                if later.get("kind") != "verdict" or later.get("stage") != stage:
                    break
                lp = later.get("payload") or {}
                name, field = lp.get("artifact"), lp.get("field")
                if name in artifacts and isinstance(field, str):
                    _set_field(artifacts[name], field, _typed(later.get("verdict"),
                                                              pipeline, stage, name, field))
            writes = tuple(str(w) for w in payload.get("writes") or ())
            reports.append(StageReport(stage, artifacts, writes, e.get("summary"), **measures))
            times.append(e.get("ts"))
        return reports, times


def templates(pipeline: Any) -> dict[str, dict[str, Any]]:
    """Stage id → artifact name → a valid example artifact (cached on the pipeline)."""
    cached = pipeline.__dict__.get("_crewbook_sim_templates")
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    from ..pipeline.kinds import FILE_WRITTEN

    out: dict[str, dict[str, Any]] = {}
    for stage_id, plan in pipeline.plans.items():
        made: dict[str, Any] = {}
        for name, kind_id in plan.produced.items():
            if kind_id == FILE_WRITTEN:
                continue  # reported through `writes`
            kind = plan.kinds.get(name)
            if kind is None:
                made[name] = {}
                continue
            example = example_of(kind.schema)
            if not kind.is_valid(example):
                raise SimulationError(
                    f"cannot make a valid {kind_id!r} artifact for stage {stage_id!r} from its "
                    f"JSON Schema ({'; '.join(kind.errors(example)[:2])}); simulate this "
                    "pipeline with a scripted or callable policy")
            made[name] = example
        out[stage_id] = made
    pipeline.__dict__["_crewbook_sim_templates"] = out  # a frozen dataclass: cache by hand
    return out


def judged_fields(pipeline: Any) -> dict[str, dict[str, Any]]:
    """Stage id → ``artifact.field`` → the transition that reads it."""
    out: dict[str, dict[str, Any]] = {}
    for stage_id, plan in pipeline.plans.items():
        for t in plan.judged:
            out.setdefault(stage_id, {})[f"{t.condition_artifact_id}.{t.condition_field}"] = t
    return out


def example_of(schema: Any, depth: int = 0) -> Any:
    """A small instance of a JSON Schema: required keys, shortest lists, first enum values."""
    if not isinstance(schema, Mapping) or depth > 12:
        return {}
    for key in ("const", "default"):
        if key in schema:
            return _copy(schema[key])
    if schema.get("enum"):
        return _copy(schema["enum"][0])
    for key in ("oneOf", "anyOf"):
        if schema.get(key):
            return example_of(schema[key][0], depth + 1)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            value = example_of(part, depth + 1)
            if isinstance(value, dict):
                merged.update(value)
        return merged
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), kind[0] if kind else None)
    if kind == "object" or (kind is None and "properties" in schema):
        props = schema.get("properties", {})
        return {name: example_of(props.get(name, {}), depth + 1)
                for name in schema.get("required", [])}
    if kind == "array":
        count = int(schema.get("minItems", 0))
        item = schema.get("items", {})
        return [example_of(item, depth + 1) for _ in range(count)]
    if kind == "string":
        text = "simulated"
        length = int(schema.get("minLength", 1))
        return (text * (length // len(text) + 1))[:max(length, len(text))]
    if kind == "integer":
        return int(schema.get("minimum", 0))
    if kind == "number":
        return float(schema.get("minimum", 0))
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return {}


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _set_field(content: Any, dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    for part in parts[:-1]:
        if not isinstance(content, dict):
            return
        content = content.setdefault(part, {})
    if isinstance(content, dict):
        content[parts[-1]] = value


def _typed(text: Any, pipeline: Any, stage: str, artifact: str, field: str) -> Any:
    """A verdict text as the type the transitions compare with (bool, int or text)."""
    t = judged_fields(pipeline).get(stage, {}).get(f"{artifact}.{field}")
    wanted = getattr(t, "condition_value", None)
    if isinstance(wanted, bool):
        return str(text).lower() == "true"
    if isinstance(wanted, int):
        try:
            return int(str(text))
        except ValueError:
            return text
    return text


class _PipelinePlayer(Player):
    def __init__(self, spec: RandomPolicyFile, loop: Loop[Any, Any],
                 rng: np.random.Generator) -> None:
        pipeline = loop.pipeline  # type: ignore[attr-defined]
        self.draws = Draws(spec, rng)
        self.made = templates(pipeline)
        self.plans = pipeline.plans
        self.pipeline = pipeline
        self.verdicts = {role: {key: (dict(w), ) for key, w in b.verdicts.items()}
                         for role, b in spec.roles.items()}

    def act(self, contract: Act) -> Any:
        from ..pipeline import StageReport

        stage = str(contract.stage)
        draws = self.draws
        b = draws.behaviour(stage)
        measures = draws.measures(stage)
        if draws.chance(b.fail):
            return StageReport(stage, {}, summary=f"{stage}: simulated failed try", **measures)
        made = self.made.get(stage, {})
        artifacts = {n: _copy(v) for n, v in made.items()}
        for key, (weights,) in self.verdicts.get(stage, {}).items():
            name, field = key.split(".", 1)
            if name in artifacts:
                _set_field(artifacts[name], field,
                           _typed(draws.choice(weights), self.pipeline, stage, name, field))
        plan = self.plans[stage]
        writes: tuple[str, ...] = ()
        if plan.written and plan.writer:
            writes = (_write_path(plan.stage.writes),)
        return StageReport(stage, artifacts, writes, None, **measures)


def _write_path(globs: Sequence[str] | None) -> str:
    if not globs:
        return "src/simulated.py"
    pattern = globs[0]
    out = pattern.replace("**", "sim").replace("*", "sim").replace("?", "s")
    if "[" in out:
        import re

        out = re.sub(r"\[!?([^\]])[^\]]*\]", r"\1", out)
    return out if not out.endswith("/") else out + "simulated.py"


# ----------------------------------------------------------------------- delivery
class DeliveryAdapter(Adapter):
    """Standard and coordinator loops: the seven delivery roles; the random player is
    also the coordinator (plan, delegate, answer, finalise or fail)."""

    def parse(self, data: Mapping[str, Any]) -> Any:
        from ..delivery import parse_report

        return parse_report(data)

    def roles(self, loop: Loop[Any, Any]) -> list[str]:
        return list(loop.catalogue.ids)  # type: ignore[attr-defined]

    def random_player(self, spec: RandomPolicyFile, loop: Loop[Any, Any],
                      rng: np.random.Generator, clock: SimClock) -> Player:
        return _DeliveryPlayer(spec, loop, rng, clock)

    def rounds(self, loop: Loop[Any, Any]) -> int:
        return int(loop._state.sent_back)

    def from_events(self, events: Sequence[Mapping[str, Any]], loop: Loop[Any, Any]
                    ) -> tuple[list[Any], list[datetime | None]]:
        from ..delivery import (
            Answer,
            Built,
            Delegate,
            Expire,
            Fail,
            Finalise,
            Judgement,
            Plan,
            Question,
            Result,
            Revise,
        )

        reports: list[Any] = []
        times: list[datetime | None] = []
        for e in events:
            kind, role, p = e.get("kind"), e.get("role"), e.get("payload") or {}
            m: dict[str, Any] = {k: e.get(k) for k in ("duration_ms", "tokens_in", "tokens_out",
                                                       "cost") if e.get(k) is not None}
            report: Any = None
            when = e.get("ts")
            if kind == "plan":
                criteria = tuple(p.get("criteria") or ())
                if p.get("revision"):
                    report = Revise(criteria, path=p.get("path"),
                                    files=tuple(p.get("files") or ()), **m)
                else:
                    report = Plan(criteria, path=p.get("path") or "full",
                                  files=tuple(p.get("files") or ()), **m)
            elif kind == "act" and p.get("by") == "architect":
                report = Delegate(str(role), str(e.get("summary") or "continue"),
                                  fixes=tuple(p.get("fixes") or ()), focus=bool(p.get("focus")),
                                  **m)
            elif kind == "report" and role == "developer":
                report = Built(tuple(p.get("files") or ()), head=p.get("head"), **m)
            elif kind == "report" and role is not None:
                report = Result(str(role), str(e.get("summary") or ""),
                                tuple(p.get("findings") or ()), **m)
            elif kind == "verdict":
                report = Judgement(str(role), str(e.get("verdict")), e.get("version"),
                                   tuple(p.get("findings") or ()), **m)
            elif kind == "question":
                report = Question(str(role), str(e.get("summary") or "?"), **m)
            elif kind == "answer":
                report = Answer(str(p.get("decision") or "go on"), str(p.get("reason") or "-"),
                                **m)
            elif kind == "error" and p.get("reason") == "wait_expired":
                report = Expire()
            elif kind == "finish" and role == "architect":
                if e.get("verdict") == "failed":
                    report = Fail(str(e.get("summary") or "failed"), **m)
                else:
                    report = Finalise(**m)
            if report is not None:
                reports.append(report)
                if isinstance(when, datetime):  # the act's time includes its own duration
                    when = when - timedelta(milliseconds=m.get("duration_ms") or 0)
                times.append(when if isinstance(when, datetime) else None)
        return reports, times


class _DeliveryPlayer(Player):
    """Agents draw their reports; as coordinator: plan, the developer until a version
    exists or after a negative verdict, then QA, then the reviewer when review is
    required, then finalise; fail when the role needed next cannot be launched."""

    def __init__(self, spec: RandomPolicyFile, loop: Loop[Any, Any],
                 rng: np.random.Generator, clock: SimClock) -> None:
        from .. import delivery

        self.d = delivery  # its report classes, looked up once (not imported per act)
        self.draws = Draws(spec, rng)
        self.spec = spec
        self.clock = clock
        self.coordinator = loop.kind == "coordinator"
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
            self.clock.set(self.late + timedelta(seconds=1))
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
            return Built((f"src/change_v{version + 1}.py",), **m)
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
        if self.draws.chance(self.spec.coordinator.finalise_early):
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
        if not self.spec.coordinator.fail_at_cap and want:
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
