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
    coordinator: {finalise_early: 0.1}

A distribution is a number (always that value) or a mapping whose ``dist`` is
``fixed`` (``value``), ``uniform`` (``low``, ``high``), ``lognormal`` (``median``,
``sigma``), ``normal`` (``mean``, ``sd``; clipped at 0) or ``exponential`` (``mean``).
Every problem is reported at its file, line and key (`load_policy`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from ..errors import Problem, SimulationError, did_you_mean
from ..models import FileModel, parse_model
from ..sources import SourceDoc, read_yaml

Probability = Annotated[float, Field(ge=0, le=1)]
NonNegative = Annotated[float, Field(ge=0)]
Positive = Annotated[float, Field(gt=0)]


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


class CoordinatorBehaviour(FileModel):
    """How the simulated coordinator decides (coordinator mode)."""

    finalise_early: Probability = Field(0.0, description="Chance of trying to finalise "
                                        "before the gates are met (the engine refuses it; "
                                        "the refusal is counted).")
    fail_at_cap: bool = Field(True, description="Fail the task when the role it needs "
                              "next cannot be launched any more.")


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
    coordinator: CoordinatorBehaviour = Field(default_factory=CoordinatorBehaviour)

    def default_behaviour(self) -> RoleBehaviour:
        """How a role this policy does not name behaves (the defaults)."""
        return RoleBehaviour()


class ScriptedPolicyFile(FileModel):
    """``policy: scripted``: the reports to play, in order, as JSON data."""

    policy: Literal["scripted"]
    reports: Annotated[list[dict[str, Any]], Field(min_length=1)]


PolicyFile = RandomPolicyFile | ScriptedPolicyFile
_MODELS: dict[str, type[RandomPolicyFile] | type[ScriptedPolicyFile]] = {
    "random": RandomPolicyFile, "scripted": ScriptedPolicyFile}


def parse_policy(doc: SourceDoc) -> PolicyFile:
    """The policy a document describes; `SimulationError` with every located problem."""
    data = doc.data if isinstance(doc.data, dict) else {}
    kind = data.get("policy", "random")
    model = _MODELS.get(kind) if isinstance(kind, str) else None
    if model is None:
        problem = doc.problem("invalid_value", f"unknown policy {kind!r}"
                              f"{did_you_mean(str(kind), _MODELS)}; policies: "
                              f"{', '.join(_MODELS)}", ("policy",))
        raise SimulationError(f"the policy file {doc.name} is not valid", [problem])
    parsed, problems = parse_model(model, doc)
    problems = [_hinted(p) for p in problems]
    if parsed is None:
        raise SimulationError(f"the policy file {doc.name} is not valid", problems)
    assert isinstance(parsed, RandomPolicyFile | ScriptedPolicyFile)
    return parsed


def _nested_models() -> dict[str, type[FileModel]]:
    """Key → the model of the mapping nested under it, read from `RandomPolicyFile`'s
    fields (``roles``: role id → `RoleBehaviour`; each behaviour section a loop takes,
    such as the coordinator's): the policy file's keys are written once, as fields."""
    found: dict[str, type[FileModel]] = {}
    for name, info in RandomPolicyFile.model_fields.items():
        kind = info.annotation
        if name == "roles":
            found[name] = RoleBehaviour
        elif isinstance(kind, type) and issubclass(kind, FileModel):
            found[name] = kind
    return found


#: Models of the mappings nested under a key (for did-you-mean on unknown keys).
_NESTED: dict[str, type[FileModel]] = _nested_models()


def _hinted(problem: Problem) -> Problem:
    """Add a did-you-mean to an unknown key of a role's or the coordinator's mapping."""
    if problem.code != "unknown_key" or problem.key is None or "did you mean" in \
            problem.message or ";" in problem.message:
        return problem
    parts = problem.key.split(".")
    model = _NESTED.get(parts[0])
    if model is None or len(parts) != (3 if parts[0] == "roles" else 2):
        return problem
    fields = list(model.model_fields)
    hint = did_you_mean(parts[-1], fields) or f"; keys: {', '.join(fields)}"
    return replace(problem, message=problem.message + hint)


def read_policy_file(path: str | Path) -> tuple[PolicyFile, SourceDoc]:
    """A policy file and its document (kept to locate later problems, such as role keys
    that name nothing in the loop simulated)."""
    doc = read_yaml(Path(path), error_cls=SimulationError)
    return parse_policy(doc), doc
