"""What an agent receives to write one artifact (A10), and the roles by step (A7)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, InvalidInputError, Problem, did_you_mean
from ..sources import read_yaml
from .change import Change, open_change
from .model import Decision
from .project import CODEV, Project, ProjectLike
from .schema import Schema
from .status import ArtifactState
from .step_roles import ARTIFACT_STEP, step_catalogue, steps

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Criterion:
    """A `done_when` criterion and where it comes from (`schema:<name>` or `project`)."""

    text: str
    origin: str


@dataclass(frozen=True)
class RoleBrief:
    """The role in charge of an artifact, as its agent receives it."""

    id: str
    name: str
    question: str
    done_when: tuple[Criterion, ...]
    names: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Instructions:
    """Everything an agent needs to write one artifact of a change (A10)."""

    change: str
    schema: str
    artifact: str
    generates: str
    status: str
    description: str | None
    instruction: str | None
    template: str | None
    role: RoleBrief | None
    rules: tuple[str, ...]
    context: str | None
    decisions: tuple[Decision, ...]
    requires: tuple[ArtifactState, ...]

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of `crewbook instructions --json`."""
        role = None
        if self.role:
            role = {
                "id": self.role.id,
                "name": self.role.name,
                "names": self.role.names,
                "question": self.role.question,
                "done_when": [{"text": c.text, "origin": c.origin} for c in self.role.done_when],
            }
        return {
            "change": self.change,
            "schema": self.schema,
            "artifact": self.artifact,
            "generates": self.generates,
            "status": self.status,
            "description": self.description,
            "instruction": self.instruction,
            "template": self.template,
            "role": role,
            "rules": list(self.rules),
            "context": self.context,
            "decisions": [d.model_dump(exclude_none=True) for d in self.decisions],
            "requires": [r.to_dict() for r in self.requires],
        }

    def text(self) -> str:
        """The instructions as Markdown, the way an agent reads them."""
        out = [f"# {self.artifact} — change {self.change} (schema {self.schema})", ""]
        out += [f"Write `{self.generates}` in the change folder. Status: {self.status}.", ""]
        if self.description:
            out += [self.description.strip(), ""]
        if self.context:
            out += ["## Project context", "", self.context.strip(), ""]
        if self.requires:
            out += ["## Inputs", ""]
            out += [
                f"- {r.id} ({r.status}): {', '.join(r.paths) or 'no file yet'}"
                for r in self.requires
            ]
            out.append("")
        if self.instruction:
            out += ["## Instruction", "", self.instruction.strip(), ""]
        if self.role:
            out += [f"## Role: {self.role.name} ({self.role.id})", "", self.role.question, ""]
            out += [f"- [ ] {c.text} _({c.origin})_" for c in self.role.done_when]
            out.append("")
        if self.rules:
            out += ["## Project rules", ""] + [f"- {r}" for r in self.rules] + [""]
        if self.decisions:
            out += ["## Decisions in force", ""]
            out += [
                f"- {'[' + d.id + '] ' if d.id else ''}{d.decision}"
                + (f" — {d.reason}" if d.reason else "")
                for d in self.decisions
            ]
            out.append("")
        if self.template:
            out += ["## Template", "", "```markdown", self.template.rstrip(), "```", ""]
        return "\n".join(out).rstrip() + "\n"

    __str__ = text

    def __repr__(self) -> str:
        return (
            f"<Instructions for {self.artifact!r} of change {self.change!r} "
            f"({self.status}, role {self.role.id if self.role else None})>"
        )

    def _repr_markdown_(self) -> str:
        """The Markdown, rendered by notebooks (no `_repr_html_`: front ends prefer HTML,
        which would show the Markdown as plain text); `print()` gives the plain text."""
        return self.text()


def _config_problem(project: Project, key: tuple[str, ...], code: str, message: str) -> Problem:
    file = project.codev / "config.yaml"
    doc = read_yaml(file, error_cls=ConfigError, display_path=f"{CODEV}/config.yaml")
    return doc.problem(code, message, key)


def check_role_settings(project: Project, schema: Schema) -> None:
    """Refuse config that disables an artifact role (A7: it cannot be disabled)."""
    problems = [
        _config_problem(
            project,
            ("roles", role_id, "enabled"),
            "role_cannot_be_disabled",
            f"role {role_id!r} is the role of artifact {art.id!r} in schema "
            f"{schema.name!r}; an artifact role cannot be disabled (add criteria instead, "
            "or remove the role from the schema)",
        )
        for role_id, art in schema.roles().items()
        if not project.config.roles.get(role_id, _ENABLED).enabled
    ]
    if problems:
        raise ConfigError(f"{CODEV}/config.yaml is invalid for schema {schema.name!r}", problems)


class _Enabled:
    enabled = True
    done_when: tuple[str, ...] = ()


_ENABLED = _Enabled()


def instructions(
    artifact: str, change: str | Change, project: ProjectLike = None, *, language: str = "en"
) -> Instructions:
    """The instructions for `artifact` (or `"apply"`) of a change (A10).

    They combine the artifact's description, instruction and template, its role's
    question and `done_when` criteria with their origin, the config `rules:` for its
    id, the project context, and for the artifact `design`, the decisions in force.
    """
    ch = open_change(change, project)
    proj = ch.project
    status = ch.status()
    schema = status.schema
    check_role_settings(proj, schema)
    config = proj.config
    if artifact == "apply":
        ap = schema.model.apply
        return Instructions(
            change=ch.name,
            schema=schema.name,
            artifact="apply",
            generates=ap.tracks,
            status=status.apply.state,
            description="Implement the change, ticking the tasks",
            instruction=ap.instruction,
            template=None,
            role=None,
            rules=tuple(config.rules.get("apply", ())),
            context=config.context,
            decisions=(),
            requires=tuple(status[d] for d in ap.requires),
        )
    art = schema.artifact(artifact)
    role = None
    if art.role:
        extra = config.roles.get(art.role.id)
        criteria = [Criterion(c, f"schema:{schema.name}") for c in art.role.done_when]
        criteria += [Criterion(c, "project") for c in (extra.done_when if extra else ())]
        role = RoleBrief(
            art.role.id,
            art.role.name.for_language(language),
            art.role.question,
            tuple(criteria),
            art.role.name.languages,
        )
    return Instructions(
        change=ch.name,
        schema=schema.name,
        artifact=art.id,
        generates=art.generates,
        status=status[art.id].status,
        description=art.description,
        instruction=art.instruction,
        template=schema.template_text(art.id),
        role=role,
        rules=tuple(config.rules.get(art.id, ())),
        context=config.context,
        decisions=config.decisions if art.id == "design" else (),
        requires=tuple(status[d] for d in art.requires),
    )


@dataclass(frozen=True)
class RoleListing:
    """Roles with the step they act at; `frame()` for pandas."""

    rows: tuple[dict[str, Any], ...]
    step: str | None = None

    def frame(self) -> pd.DataFrame:
        """step (category), id, name, origin, artifact, question, done_when (list), enabled."""
        import pandas as pd

        cols = ["step", "id", "name", "origin", "artifact", "question", "done_when", "enabled"]
        df = pd.DataFrame(list(self.rows), columns=cols)
        return df.astype(
            {
                "step": pd.CategoricalDtype(list(steps())),
                "id": "string",
                "name": "string",
                "origin": "category",
                "artifact": "string",
                "question": "string",
                "enabled": bool,
            }
        )

    def to_dict(self) -> dict[str, Any]:
        """`{"step": ..., "roles": [...]}`."""
        return {"step": self.step, "roles": [dict(r) for r in self.rows]}

    def __str__(self) -> str:
        if not self.rows:
            return f"No roles at step {self.step}." if self.step else "No roles."
        return "\n".join(
            f"{r['step']:<13} {r['id']:<14} {r['name']:<14} {r['origin']:<20} "
            f"{'' if r['enabled'] else '(disabled) '}{r['question']}"
            for r in self.rows
        )

    def __repr__(self) -> str:
        at = f" at {self.step}" if self.step else ""
        return f"<RoleListing {len(self.rows)} roles{at}: {', '.join(r['id'] for r in self.rows)}>"

    def _repr_html_(self) -> str:
        return self.frame().drop(columns=["done_when"]).to_html(index=False)


def list_roles(
    at: str | None = None, schema: str | None = None, project: ProjectLike = None
) -> RoleListing:
    """Built-in step roles and the schema's artifact roles, optionally at one step.

    The schema is `schema`, else the project's default, else `spec-driven`.
    """
    known = steps()
    if at is not None and at not in known:
        raise InvalidInputError(
            f"no step {at!r}" + (did_you_mean(at, known) or f"; steps: {', '.join(known)}")
        )
    from .project import project_or_none
    from .registry import get_schema

    proj = project_or_none(project)
    config = proj.config if proj else None
    sch = get_schema(schema or (config.schema_ if config else None) or "spec-driven", proj)
    if proj:
        check_role_settings(proj, sch)
    rows: list[dict[str, Any]] = []

    def extra(role_id: str) -> tuple[bool, list[str]]:
        setting = config.roles.get(role_id) if config else None
        return (setting.enabled if setting else True, list(setting.done_when) if setting else [])

    for art in sch.artifacts:
        if art.role:
            enabled, more = extra(art.role.id)
            rows.append(
                {
                    "step": ARTIFACT_STEP,
                    "id": art.role.id,
                    "name": art.role.name.en,
                    "origin": f"schema:{sch.name}",
                    "artifact": art.id,
                    "question": art.role.question,
                    "done_when": [*art.role.done_when, *more],
                    "enabled": True,
                }
            )
    for role in step_catalogue().roles:
        enabled, more = extra(role.id)
        rows.append(
            {
                "step": role.step,
                "id": role.id,
                "name": role.name.en,
                "origin": "built-in",
                "artifact": None,
                "question": role.question,
                "done_when": [*role.done_when, *more],
                "enabled": enabled,
            }
        )
    order = list(known)
    rows.sort(key=lambda r: order.index(r["step"]))
    if at is not None:
        rows = [r for r in rows if r["step"] == at]
    return RoleListing(tuple(rows), at)
