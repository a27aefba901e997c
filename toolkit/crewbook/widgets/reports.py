"""The report a Stepper's form holds: a `Draft`, built from the contract, and turned back
into the report the loop expects. Pure logic: no ipywidgets here, so it is tested alone.

A `Draft` is what the form shows: the ``move`` (one of ``act.moves`` where the loop
names moves), the ``role`` that reports, a ``verdict`` (chosen among ``verdicts``) and
the other ``fields`` (text, lists of text, JSON data). ``hidden`` carries values the form
does not edit (a `ChangeSummary`...) through unchanged.

An `Adapter` knows one family of loops: which verdicts a contract admits, how to read a
report into a draft (`to_draft`), how to build the report from a draft (`build`) and
the "happy path" report for a contract (`propose`). Adapters exist for the pipeline
loop (``kind == "pipeline"``) and the delivery loops (``standard``, ``coordinator``);
the crew loop (``crew``: a `CrewReport`) and the autonomous loop (``autonomous``: a
`LoopStep`); any other loop (a loop of your own) gets the generic adapter, whose
report is the plain mapping ``{"move": ..., "role": ..., "verdict": ..., **fields}``
handed to ``loop.report`` (register a better one with `register_adapter`).

A *policy* proposes the next report: `happy_path` (the adapter's proposal), or
`Scripted(reports)`, which proposes ``reports[loop.acts]`` (so a rewind replays the
script from the restored act) and falls back to the happy path after its end. Any
callable ``(loop, act) -> report | Draft | None`` is a policy.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any, Protocol

from ..errors import InvalidInputError
from ..loop import Act

#: Values a form field holds: text, several lines of text, a number, a flag, JSON data.
FIELD_KINDS = ("text", "lines", "number", "flag", "json")


@dataclass(frozen=True)
class Draft:
    """A report as the form edits it (see the module docstring)."""

    move: str | None = None
    role: str | None = None
    verdict: str | None = None
    moves: tuple[str, ...] = ()
    verdicts: tuple[str, ...] = ()
    fields: Mapping[str, Any] = field(default_factory=dict)
    hidden: Mapping[str, Any] = field(default_factory=dict)

    def field_kind(self, name: str) -> str:
        """How the form shows field `name` (one of `FIELD_KINDS`)."""
        return field_kind(self.fields.get(name))

    def with_fields(self, **values: Any) -> Draft:
        """A copy with these fields replaced."""
        return replace(self, fields={**self.fields, **values})


def field_kind(value: Any) -> str:
    """The form field kind for `value`."""
    if isinstance(value, bool):
        return "flag"
    if isinstance(value, int | float) or value is None:
        return "number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return "lines"
    return "json"


def show_value(value: Any) -> Any:
    """The value a form control holds for `value` (text for lists, numbers and JSON)."""
    kind = field_kind(value)
    if kind == "flag":
        return bool(value)
    if kind == "number":
        return "" if value is None else str(value)
    if kind == "lines":
        return "\n".join(value)
    if kind == "json":
        return json.dumps(value, indent=1, ensure_ascii=False)
    return value


def read_value(name: str, kind: str, shown: Any) -> Any:
    """The value of field `name` back from its control (`InvalidInputError` when it is
    not what the field holds: a number, JSON data)."""
    if kind == "flag":
        return bool(shown)
    if kind == "lines":
        return tuple(line.strip() for line in str(shown).splitlines() if line.strip())
    if kind == "text":
        return str(shown)
    text = str(shown).strip()
    if kind == "number":
        if not text:
            return None
        try:
            number = float(text)
        except ValueError:
            raise InvalidInputError(f"field {name!r}: {text!r} is not a number; write digits "
                                    "such as 25 or 0.5, or leave it empty") from None
        return int(number) if number.is_integer() and "." not in text else number
    try:
        return json.loads(text) if text else None
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"field {name!r} is not JSON data (line {exc.lineno}, column "
                                f"{exc.colno}: {exc.msg}); fix it or press Propose") from None


class Adapter(Protocol):
    """What the Stepper needs to know about one family of loops."""

    def verdicts(self, loop: Any, act: Act) -> tuple[str, ...]:
        """The verdicts the actor of `act` may give (empty: none)."""

    def to_draft(self, loop: Any, act: Act, report: Any) -> Draft:
        """The draft showing `report` (a report object or JSON data) for `act`."""

    def build(self, loop: Any, act: Act, draft: Draft) -> Any:
        """The report `loop.report` takes, from `draft`."""

    def propose(self, loop: Any, act: Act) -> Draft:
        """The happy-path report for `act`, as a draft."""


# --------------------------------------------------------------------------- generic
class GenericAdapter:
    """Any loop: the report is ``{"move", "role", "verdict", **fields}`` as a mapping."""

    def verdicts(self, loop: Any, act: Act) -> tuple[str, ...]:
        """Verdicts named in the contract's details (``details["verdicts"]``), if any."""
        found = act.details.get("verdicts", ())
        return tuple(str(v) for v in found) if isinstance(found, list | tuple) else ()

    def to_draft(self, loop: Any, act: Act, report: Any) -> Draft:
        """A mapping (or a dataclass) split into move, role, verdict and fields."""
        data = _as_mapping(report)
        return Draft(move=data.pop("move", act.moves[0] if act.moves else None),
                     role=data.pop("role", act.role), verdict=data.pop("verdict", None),
                     moves=act.moves, verdicts=self.verdicts(loop, act), fields=data)

    def build(self, loop: Any, act: Act, draft: Draft) -> Any:
        """The plain mapping (keys left out when empty)."""
        data: dict[str, Any] = {}
        for key in ("move", "role", "verdict"):
            if getattr(draft, key) is not None:
                data[key] = getattr(draft, key)
        return {**data, **draft.fields, **draft.hidden}

    def propose(self, loop: Any, act: Act) -> Draft:
        """The first open move, by the contract's role, with the first verdict."""
        verdicts = self.verdicts(loop, act)
        return Draft(move=act.moves[0] if act.moves else None, role=act.role,
                     verdict=verdicts[0] if verdicts else None, moves=act.moves,
                     verdicts=verdicts)


# --------------------------------------------------------------------------- pipeline
class PipelineAdapter:
    """The pipeline loop: a stage report (artifacts, writes, summary); the verdict is the
    field an ``artifact_field_equals`` transition of the stage reads."""

    def _judged(self, loop: Any, act: Act) -> tuple[Any, ...]:
        if act.stage is None:
            return ()
        plan = loop.pipeline.plans[act.stage]
        return tuple(plan.judged)

    def verdicts(self, loop: Any, act: Act) -> tuple[str, ...]:
        """The values the stage's transitions compare the verdict field with, then the
        other values the artifact kind's JSON Schema allows there (its ``enum``)."""
        judged = self._judged(loop, act)
        if not judged:
            return ()
        first = judged[0]
        plan = loop.pipeline.plans[act.stage]
        values: list[str] = []
        for t, _ in plan.out:
            if (t.condition_artifact_id, t.condition_field) == (
                    first.condition_artifact_id, first.condition_field) \
                    and str(t.condition_value) not in values:
                values.append(str(t.condition_value))
        kind = plan.kinds.get(first.condition_artifact_id)
        if kind is not None and first.condition_field is not None:
            spec: Any = kind.schema
            for part in first.condition_field.split("."):
                spec = spec.get("properties", {}).get(part, {}) if isinstance(spec, dict) else {}
            for value in spec.get("enum", ()) if isinstance(spec, dict) else ():
                if str(value) not in values:
                    values.append(str(value))
        return tuple(values)

    def to_draft(self, loop: Any, act: Act, report: Any) -> Draft:
        """A `StageReport` or its JSON data as a draft (the verdict lifted out)."""
        data = _as_mapping(report)
        stage = data.pop("stage", act.stage)
        artifacts = json.loads(json.dumps(dict(data.pop("artifacts", {}) or {})))
        verdict = None
        judged = self._judged(loop, act)
        if judged:
            t = judged[0]
            holder = artifacts.get(t.condition_artifact_id)
            if isinstance(holder, dict) and t.condition_field in holder:
                verdict = str(holder.pop(t.condition_field))
        values: dict[str, Any] = {"artifacts": artifacts,
                                  "writes": tuple(data.pop("writes", ()) or ()),
                                  "summary": data.pop("summary", None) or ""}
        values.update({k: v for k, v in data.items() if v is not None})
        return Draft(move=None, role=stage, verdict=verdict, verdicts=self.verdicts(loop, act),
                     fields=values)

    def build(self, loop: Any, act: Act, draft: Draft) -> Any:
        """The report's JSON data (the pipeline parses and checks it)."""
        values = dict(draft.fields)
        artifacts = json.loads(json.dumps(values.pop("artifacts", {}) or {}))
        if not isinstance(artifacts, dict):
            raise InvalidInputError("field 'artifacts' is a JSON object: artifact name → data")
        judged = self._judged(loop, act)
        if judged and draft.verdict is not None:
            t = judged[0]
            holder = artifacts.setdefault(t.condition_artifact_id, {})
            if isinstance(holder, dict):
                holder[t.condition_field] = draft.verdict
        report: dict[str, Any] = {"stage": draft.role or act.stage, "artifacts": artifacts}
        if values.get("writes"):
            report["writes"] = list(values.pop("writes"))
        values.pop("writes", None)
        if values.get("summary"):
            report["summary"] = values.pop("summary")
        values.pop("summary", None)
        report.update({k: v for k, v in values.items() if v is not None})
        return report

    def propose(self, loop: Any, act: Act) -> Draft:
        """Artifacts that validate against their kinds (smallest instances), the verdict
        that moves forward, and a file inside the stage's `writes` when it may write."""
        if act.stage is None:
            return Draft(role=None)
        plan = loop.pipeline.plans[act.stage]
        artifacts: dict[str, Any] = {}
        for name in plan.produced:
            kind = plan.kinds.get(name)
            if name in plan.written or kind is None:
                continue
            artifacts[name] = example_of(kind.schema)
        verdicts = self.verdicts(loop, act)
        verdict = None
        if verdicts:
            forward = [t for t, back in plan.out if not back
                       and t.condition_type == "artifact_field_equals"
                       and t.condition_operator == "eq"]
            verdict = str(forward[0].condition_value) if forward else verdicts[0]
        writes: tuple[str, ...] = ()
        if plan.writer:
            globs = plan.stage.writes or ("src/**",)
            writes = (_path_in(globs[0]),)
        return Draft(role=act.stage, verdict=verdict, verdicts=verdicts,
                     fields={"artifacts": artifacts, "writes": writes,
                             "summary": f"{act.stage} done"})


def _path_in(glob: str) -> str:
    """A file path that `glob` matches (``core/**`` → ``core/change.py``)."""
    parts = []
    for part in glob.split("/"):
        if part == "**":
            continue
        parts.append(part.replace("*", "change").replace("?", "x"))
    path = "/".join(p for p in parts if p)
    return path if "." in path.rsplit("/", 1)[-1] else f"{path}/change.py".lstrip("/")


def example_of(schema: Mapping[str, Any]) -> Any:
    """A small instance of a JSON Schema: required properties, `minItems` items, the first
    `enum` value, `minimum` for numbers. Good enough for the schemas of artifact kinds."""
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return next(iter(schema["enum"]))
    if "default" in schema:
        return schema["default"]
    for key in ("oneOf", "anyOf", "allOf"):
        if schema.get(key):
            return example_of(schema[key][0])
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties", {})
        return {name: example_of(props.get(name, {})) for name in schema.get("required", ())}
    if kind == "array":
        count = int(schema.get("minItems", 0))
        items = schema.get("items", {})
        return [_distinct(example_of(items), i) for i in range(count)]
    if kind == "string":
        return "x" * max(int(schema.get("minLength", 0)), 7) if "minLength" in schema \
            and int(schema["minLength"]) > 7 else "example"
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 1))
    if kind == "boolean":
        return True
    return None


def _distinct(value: Any, i: int) -> Any:
    if isinstance(value, str) and i:
        return f"{value} {i + 1}"
    if isinstance(value, dict) and i:
        return {k: (v + i if type(v) is int else v) for k, v in value.items()}
    return value


# --------------------------------------------------------------------------- delivery
_VERDICT_REPORTS = ("judgement",)


class DeliveryAdapter:
    """The standard and coordinator loops: moves (``plan``, ``delegate:qa``…) and agent
    reports (``built``, ``judgement``…), built with `crewbook.delivery.parse_report`."""

    def verdicts(self, loop: Any, act: Act) -> tuple[str, ...]:
        """The verdicts of the acting role (QA: pass, fail; reviewer: approved, changes)."""
        if act.role is None or act.stage == "coordinate":
            return ()
        try:
            return tuple(loop.catalogue.role(act.role).verdicts)
        except Exception:  # a role outside the catalogue gives no verdict
            return ()

    def _moves(self, act: Act) -> tuple[str, ...]:
        return act.moves

    def to_draft(self, loop: Any, act: Act, report: Any) -> Draft:
        """A report object (`Plan`, `Judgement`…) or its JSON data as a draft."""
        from ..delivery.reports import move_name

        if isinstance(report, Mapping):
            data = dict(report)
            name = str(data.pop("move", None) or data.pop("report", None) or "")
        else:
            name = move_name(report)
            data = _as_mapping(report)
        role = data.pop("role", None)
        verdict = data.pop("verdict", None)
        move = f"{name}:{role}" if name == "delegate" and role else name
        hidden = {k: data.pop(k) for k in list(data) if field_kind(data[k]) == "json"
                  and not _jsonable(data[k])}
        defaults = _defaults(report) if not isinstance(report, Mapping) else {}
        shown = {k: v for k, v in data.items()
                 if not (k in defaults and v == defaults[k] and v in (None, (), ""))
                 or k in _ALWAYS}
        return Draft(move=move, role=role if name != "delegate" else None,
                     verdict=None if verdict is None else str(verdict),
                     moves=self._moves(act), verdicts=self.verdicts(loop, act),
                     fields=shown, hidden=hidden)

    def build(self, loop: Any, act: Act, draft: Draft) -> Any:
        """The report object, through `parse_report` (refusals name the bad key)."""
        from ..delivery.reports import MOVES, parse_report

        move = draft.move or (act.moves[0] if act.moves else "")
        name, _, target = move.partition(":")
        data: dict[str, Any] = {("move" if name in MOVES else "report"): name}
        role = target or draft.role
        if role and name not in ("plan", "revise", "answer", "finalise", "fail", "expire"):
            data["role"] = role
        if name == "built" and role == "developer":
            data.pop("role")
        if draft.verdict is not None and name in _VERDICT_REPORTS:
            data["verdict"] = draft.verdict
        for key, value in draft.fields.items():
            data[key] = list(value) if isinstance(value, tuple) else value
        data.update(draft.hidden)
        return parse_report(data)

    def propose(self, loop: Any, act: Act) -> Draft:
        """The happy path: plan, then developer → QA → reviewer, then finalise."""
        from ..delivery.reports import Built, Judgement, Plan, Result

        if act.finished:
            return Draft(moves=act.moves)
        role = act.role
        report: Any
        if act.stage == "coordinate":
            report = self._coordinate(loop, act)
        elif "plan" in act.moves:
            report = Plan(("the change does what the task asks",), summary="plan the change",
                          duration_ms=5 * 60_000)
        elif "built" in act.moves:
            report = Built(("src/change.py",), summary="the change", duration_ms=20 * 60_000)
        elif "judgement" in act.moves and role is not None:
            verdicts = self.verdicts(loop, act)
            report = Judgement(role, verdicts[0] if verdicts else "pass",
                               duration_ms=8 * 60_000)
        elif "result" in act.moves and role is not None:
            report = Result(role, f"{role} findings", duration_ms=5 * 60_000)
        else:
            return GenericAdapter().propose(loop, act)
        return self.to_draft(loop, act, report)

    def _coordinate(self, loop: Any, act: Act) -> Any:
        from ..delivery.reports import Delegate, Fail, Finalise, Plan

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


_ALWAYS = ("criteria", "files", "instructions", "findings", "summary", "reason",
           "decision", "text", "fixes", "duration_ms")


def _last_agent(loop: Any) -> tuple[str, str | None] | None:
    """(actor, verdict) of the last agent report on the loop's trail."""
    steps = getattr(loop.state, "trail", ())
    for step in reversed(tuple(steps)):
        if step.actor not in ("architect", "platform") and step.move in (
                "built", "judgement", "result"):
            return (step.actor, step.verdict)
    return None


def _defaults(report: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if is_dataclass(report) and not isinstance(report, type):
        from dataclasses import MISSING

        for f in fields(report):
            if f.default is not MISSING:
                out[f.name] = f.default
    return out


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _as_mapping(report: Any) -> dict[str, Any]:
    """A report's fields as a shallow dict (dataclasses keep nested objects as they are)."""
    if report is None:
        return {}
    if isinstance(report, Mapping):
        return dict(report)
    if is_dataclass(report) and not isinstance(report, type):
        return {f.name: getattr(report, f.name) for f in fields(report)}
    raise InvalidInputError(f"cannot show a {type(report).__name__} in the report form: give "
                            "a mapping (JSON data) or the loop's report dataclass")


# --------------------------------------------------------------------------- crew
_MEASURES = ("duration_ms", "tokens_in", "tokens_out", "cost")


class CrewAdapter:
    """The crew loop: a `CrewReport` (role, verdict among the role's, summary, payload)."""

    def verdicts(self, loop: Any, act: Act) -> tuple[str, ...]:
        """The verdicts the expected role may give (D2)."""
        from ..crew.model import VERDICTS

        return tuple(VERDICTS.get(act.role or "", ()))

    def to_draft(self, loop: Any, act: Act, report: Any) -> Draft:
        """A `CrewReport` or its JSON data as a draft."""
        data = _as_mapping(report)
        fields_ = {"summary": data.get("summary") or "",
                   "payload": dict(data.get("payload") or {})}
        fields_.update({k: data[k] for k in _MEASURES if data.get(k) is not None})
        return Draft(role=data.get("role", act.role), verdict=data.get("verdict"),
                     verdicts=self.verdicts(loop, act), fields=fields_)

    def build(self, loop: Any, act: Act, draft: Draft) -> Any:
        """The `CrewReport` (the loop refuses a wrong role or verdict itself)."""
        from ..crew.engine import CrewReport

        values = dict(draft.fields)
        payload = values.get("payload") or None
        if payload is not None and not isinstance(payload, dict):
            raise InvalidInputError("field 'payload' is a JSON object, e.g. "
                                    '{"findings": ["..."]}')
        return CrewReport(str(draft.role or act.role or ""), str(draft.verdict or ""),
                          str(values.get("summary") or ""), payload,
                          **{k: values[k] for k in _MEASURES if values.get(k) is not None})

    def propose(self, loop: Any, act: Act) -> Draft:
        """The role's positive verdict (``done``, ``go``) with a summary."""
        if act.finished or act.role is None:
            return Draft()
        verdicts = self.verdicts(loop, act)
        return Draft(role=act.role, verdict=verdicts[0] if verdicts else None,
                     verdicts=verdicts, fields={"summary": f"{act.stage or act.role} done",
                                                "payload": {}})


class AutonomousAdapter:
    """The autonomous loop: one `LoopStep` per phase (summary and details; the recette's
    test run is measured by `crewbook.loop_step`, or passed through ``hidden``)."""

    def verdicts(self, loop: Any, act: Act) -> tuple[str, ...]:
        """None: the phases decide, not a verdict."""
        return ()

    def to_draft(self, loop: Any, act: Act, report: Any) -> Draft:
        """A `LoopStep` or its JSON data as a draft."""
        data = _as_mapping(report)
        hidden = {"test": data["test"]} if data.get("test") is not None else {}
        return Draft(move="step", role=act.role, moves=act.moves,
                     fields={"summary": data.get("summary") or "",
                             "details": dict(data.get("details") or {})}, hidden=hidden)

    def build(self, loop: Any, act: Act, draft: Draft) -> Any:
        """The `LoopStep`."""
        from ..crew.autonomous import LoopStep

        details = draft.fields.get("details") or {}
        if not isinstance(details, dict):
            raise InvalidInputError("field 'details' is a JSON object")
        test = draft.hidden.get("test")
        if test is None and act.stage == "recette":  # measured now, as loop.step() does
            from ..crew.bar import run_command

            command, cwd = loop.test_command(None)
            test = run_command(command, root=loop.project.root, cwd=cwd, name="test",
                               timeout=loop.state.test_timeout)
        return LoopStep(test=test,
                        summary=str(draft.fields.get("summary") or ""), details=details)

    def propose(self, loop: Any, act: Act) -> Draft:
        """A step with a summary of the phase."""
        return Draft(move="step", role=act.role, moves=act.moves,
                     fields={"summary": f"{act.stage or 'phase'} done", "details": {}})


# --------------------------------------------------------------------------- registry
_ADAPTERS: dict[str, Adapter] = {
    "pipeline": PipelineAdapter(),
    "standard": DeliveryAdapter(),
    "coordinator": DeliveryAdapter(),
    "crew": CrewAdapter(),
    "autonomous": AutonomousAdapter(),
}


def register_adapter(kind: str, adapter: Adapter) -> None:
    """Use `adapter` for loops whose ``kind`` is `kind`."""
    _ADAPTERS[kind] = adapter


def adapter_for(loop: Any) -> Adapter:
    """The adapter of `loop` (by its ``kind``); the generic one for unknown kinds."""
    return _ADAPTERS.get(str(getattr(loop, "kind", "")), GenericAdapter())


# --------------------------------------------------------------------------- policies
Policy = Callable[[Any, Act], Any]


def happy_path(loop: Any, act: Act) -> Draft:
    """The adapter's proposal: the report that moves the loop forward."""
    return adapter_for(loop).propose(loop, act)


class Scripted:
    """Propose ``reports[loop.acts]``, then the happy path once the script has run out."""

    def __init__(self, reports: Sequence[Any]) -> None:
        self.reports = list(reports)

    def __call__(self, loop: Any, act: Act) -> Any:
        at = int(getattr(loop, "acts", 0))
        if at < len(self.reports):
            return self.reports[at]
        return happy_path(loop, act)

    def __repr__(self) -> str:
        return f"<Scripted {len(self.reports)} reports>"


def propose(loop: Any, act: Act, policy: Policy | None = None) -> Draft:
    """The draft `policy` (default `happy_path`) proposes for `act`."""
    adapter = adapter_for(loop)
    proposal = (policy or happy_path)(loop, act)
    if isinstance(proposal, Draft):
        return replace(proposal, moves=proposal.moves or act.moves,
                       verdicts=proposal.verdicts or adapter.verdicts(loop, act))
    if proposal is None:
        return adapter.propose(loop, act)
    return adapter.to_draft(loop, act, proposal)
