"""The policy file (``policy.yaml``) and its models: how simulated actors behave.

A policy file describes one policy. ``policy: random`` (the default) draws every
report: per role the chance of the negative outcome (``fail``: a failed try of a
pipeline stage, QA failing, the reviewer asking for changes), of a question (agents
in coordinator mode), the verdicts a pipeline stage writes into its artifact, and the
durations, tokens and price of each act, from distributions. ``policy: scripted``
lists the reports to play, in the JSON shape the loop's ``parse_report`` reads::

    # policy.yaml
    policy: random
    duration_ms: {dist: lognormal, median: 300000, sigma: 0.5}
    tokens: {dist: uniform, low: 2000, high: 12000}
    price_per_mtok: 3.0
    roles:
      qa: {fail: 0.3}
      reviewer: {fail: 0.2}
      developer: {question: 0.05, duration_ms: {dist: exponential, mean: 900000}}
    coordinator: {finalise_early: 0.1}   # the delivery family's section

A distribution is a number (always that value) or a mapping whose ``dist`` is
``fixed`` (``value``), ``uniform`` (``low``, ``high``), ``lognormal`` (``median``,
``sigma``), ``normal`` (``mean``, ``sd``; clipped at 0) or ``exponential`` (``mean``).
A family's own section (``coordinator:``, the delivery family's) is declared on its
registry line (`crewbook.families.Entry.policy`); `policy_model` adds each registered
family's sections to the shared keys. Every problem is reported at its file, line and
key (`load_policy`).
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, Field, model_validator

from ..errors import Problem, SimulationError, UsageError, did_you_mean
from ..models import FileModel, parse_model
from ..sources import SourceDoc, read_yaml

Probability = Annotated[float, Field(ge=0, le=1)]
NonNegative = Annotated[float, Field(ge=0)]
Positive = Annotated[float, Field(gt=0)]
S = TypeVar("S", bound=FileModel)


class Fixed(FileModel):
    """Always `value`."""

    dist: Literal["fixed"]
    value: NonNegative


class Uniform(FileModel):
    """Uniform between `low` and `high`."""

    dist: Literal["uniform"]
    low: NonNegative
    high: NonNegative

    @model_validator(mode="after")
    def _ordered(self) -> Uniform:
        if self.high < self.low:
            raise ValueError(f"high ({self.high:g}) is below low ({self.low:g})")
        return self


class LogNormal(FileModel):
    """Log-normal with this `median` and spread `sigma` (of the underlying normal)."""

    dist: Literal["lognormal"]
    median: Positive
    sigma: NonNegative


class Normal(FileModel):
    """Normal with `mean` and `sd`, clipped at 0."""

    dist: Literal["normal"]
    mean: NonNegative
    sd: NonNegative


class Exponential(FileModel):
    """Exponential with this `mean`."""

    dist: Literal["exponential"]
    mean: Positive


Named = Annotated[Fixed | Uniform | LogNormal | Normal | Exponential, Field(discriminator="dist")]
#: A distribution: a number (always that value) or one of the named distributions.
Distribution = NonNegative | Named


class RoleBehaviour(FileModel):
    """How one role (a delivery role or a pipeline stage) behaves."""

    fail: Probability = Field(0.0, description="Chance of the negative outcome: a pipeline "
                              "stage's failed try, QA's fail, the reviewer's changes.")
    question: Probability = Field(0.0, description="Chance that an agent asks the "
                                  "coordinator a question instead of reporting (coordinator "
                                  "mode).")
    verdicts: dict[str, dict[str, NonNegative]] = Field(
        default_factory=dict, description="Pipeline stages: 'artifact.field' → {value: "
        "weight}; the value written into the artifact a transition reads.")
    duration_ms: Distribution | None = Field(None, description="This role's act durations.")
    tokens: Distribution | None = Field(None, description="This role's tokens per act.")
    price_per_mtok: NonNegative | None = Field(None, description="This role's price per "
                                               "million tokens.")

    @model_validator(mode="after")
    def _weights(self) -> RoleBehaviour:
        for key, weights in self.verdicts.items():
            if "." not in key:
                raise ValueError(f"verdict key {key!r} names 'artifact.field'")
            if not weights or sum(weights.values()) <= 0:
                raise ValueError(f"the weights of {key!r} must add up to more than 0")
        return self


def _lognormal(median: float, sigma: float) -> LogNormal:
    return LogNormal(dist="lognormal", median=median, sigma=sigma)


class RandomPolicyFile(FileModel):
    """``policy: random``: every report drawn (see the module docstring)."""

    policy: Literal["random"] = "random"
    duration_ms: Distribution = Field(default_factory=lambda: _lognormal(300_000, 0.5),
                                      description="Act durations (ms) of every role.")
    tokens: Distribution = Field(default_factory=lambda: _lognormal(8_000, 0.5),
                                 description="Tokens per act (in + out) of every role.")
    tokens_in_share: Probability = Field(0.75, description="Share of the tokens that are "
                                         "prompt tokens.")
    price_per_mtok: NonNegative = Field(3.0, description="Price per million tokens.")
    roles: dict[str, RoleBehaviour] = Field(default_factory=dict,
                                            description="Role or stage id → its behaviour.")

    def default_behaviour(self) -> RoleBehaviour:
        """How a role this policy does not name behaves (the defaults)."""
        return RoleBehaviour()

    def section(self, key: str, model: type[S]) -> S:
        """The family section under `key` (a `model` the family's registry line declares,
        `policy_model`), or `model`'s defaults when this policy's class has no such
        section (a policy made before the family was registered)."""
        found = getattr(self, key) if key in type(self).model_fields else None
        return found if isinstance(found, model) else model()

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled by its sections (key, ``"module:Model"``) and state, so a worker
        process rebuilds the class `policy_model` made (it has no importable name)."""
        shared = RandomPolicyFile.model_fields
        sections = tuple((key, _dotted(info.annotation)) for key, info
                         in type(self).model_fields.items() if key not in shared)
        return (_rebuilt, (sections, self.__getstate__()))


def _dotted(model: Any) -> str:
    return f"{model.__module__}:{model.__qualname__}"


def _rebuilt(sections: tuple[tuple[str, str], ...], state: dict[str, Any]
             ) -> RandomPolicyFile:
    cls = policy_model_of(sections)
    made = cls.__new__(cls)
    made.__setstate__(state)
    return made


@cache
def policy_model_of(sections: tuple[tuple[str, str], ...]) -> type[RandomPolicyFile]:
    """`RandomPolicyFile` with these family sections (key, ``"module:Model"``) as
    optional fields (each defaulting to its model's defaults): as strict as the shared
    keys. `UsageError` when a section is not a `FileModel` or takes a shared key."""
    if not sections:
        return RandomPolicyFile
    from pydantic import create_model

    from ..core.family import resolve

    fields: dict[str, Any] = {}
    for key, dotted in sections:
        model = resolve(dotted)
        if not (isinstance(model, type) and issubclass(model, FileModel)):
            raise UsageError(f"policy section {key!r}: {dotted} is not a FileModel; a "
                             "family's registry line names a model for each section")
        if key in RandomPolicyFile.model_fields:
            raise UsageError(f"policy section {key!r} ({dotted}) takes a key every family "
                             "shares; give the section another name")
        fields[key] = (model, Field(default_factory=model))
    made: type[RandomPolicyFile] = create_model(
        "RandomPolicyFile", __base__=RandomPolicyFile, __module__=__name__, **fields)
    made.__doc__ = RandomPolicyFile.__doc__
    return made


def policy_model() -> type[RandomPolicyFile]:
    """The random policy's model for the families registered now: the shared keys and
    each family's sections (`crewbook.families.Entry.policy`)."""
    from ..families import policy_sections

    return policy_model_of(policy_sections())


class ScriptedPolicyFile(FileModel):
    """``policy: scripted``: the reports to play, in order, as JSON data."""

    policy: Literal["scripted"]
    reports: Annotated[list[dict[str, Any]], Field(min_length=1)]


PolicyFile = RandomPolicyFile | ScriptedPolicyFile
_KINDS = ("random", "scripted")


def parse_policy(doc: SourceDoc) -> PolicyFile:
    """The policy a document describes; `SimulationError` with every located problem."""
    data = doc.data if isinstance(doc.data, dict) else {}
    kind = data.get("policy", "random")
    if kind not in _KINDS:
        problem = doc.problem("invalid_value", f"unknown policy {kind!r}"
                              f"{did_you_mean(str(kind), _KINDS)}; policies: "
                              f"{', '.join(_KINDS)}", ("policy",))
        raise SimulationError(f"the policy file {doc.name} is not valid", [problem])
    model = policy_model() if kind == "random" else ScriptedPolicyFile
    parsed, problems = parse_model(model, doc)
    problems = [_hinted(p, model) for p in problems]
    if parsed is None:
        raise SimulationError(f"the policy file {doc.name} is not valid", problems)
    assert isinstance(parsed, RandomPolicyFile | ScriptedPolicyFile)
    return parsed


def _nested(model: type[BaseModel], key: str) -> type[BaseModel] | None:
    """The model of the mapping nested under top-level `key` of a policy `model`
    (``roles``: role id → `RoleBehaviour`; a family's section: its model)."""
    if key == "roles":
        return RoleBehaviour
    info = model.model_fields.get(key)
    kind = None if info is None else info.annotation
    return kind if isinstance(kind, type) and issubclass(kind, FileModel) else None


def _hinted(problem: Problem, model: type[BaseModel]) -> Problem:
    """Add a did-you-mean to an unknown key of a role's mapping or a family section."""
    if problem.code != "unknown_key" or problem.key is None or "did you mean" in \
            problem.message or ";" in problem.message:
        return problem
    parts = problem.key.split(".")
    nested = _nested(model, parts[0])
    if nested is None or len(parts) != (3 if parts[0] == "roles" else 2):
        return problem
    fields = list(nested.model_fields)
    hint = did_you_mean(parts[-1], fields) or f"; keys: {', '.join(fields)}"
    return replace(problem, message=problem.message + hint)


def read_policy_file(path: str | Path) -> tuple[PolicyFile, SourceDoc]:
    """A policy file and its document (kept to locate later problems, such as role keys
    that name nothing in the loop simulated)."""
    doc = read_yaml(Path(path), error_cls=SimulationError)
    return parse_policy(doc), doc
