"""The file formats of SPEC C as models: the role catalogue and a project's overrides
(C1), a task and its limits (C2–C6), and the review policy (C7).

Each loads from YAML with every problem located (`load_task`, `load_catalogue`,
`load_review_policy`) and has a JSON Schema in `schemas/` (`format_models`).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Annotated, Final, Literal

from pydantic import BaseModel, Field, model_validator

from ..errors import DeliveryError
from ..models import FileModel, KebabId, Text, parse_model
from ..sources import read_yaml

# -- the role catalogue (C1) ---------------------------------------------------------------

#: Role ids, in the seed's order (the same ids as `crewbook.routing.axes.LOOP_ROLES`).
ARCHITECT: Final = "architect"
DEVELOPER: Final = "developer"
QA: Final = "qa"
REVIEWER: Final = "reviewer"
ROLE_IDS: Final[tuple[str, ...]] = (
    ARCHITECT, DEVELOPER, QA, REVIEWER, "web-tester", "explorer", "dependency-analyser",
)
#: The only roles that give verdicts (C4.1), and the verdicts each gives.
JUDGES: Final[dict[str, tuple[str, str]]] = {
    QA: ("pass", "fail"), REVIEWER: ("approved", "changes")}
#: Where a project overrides the catalogue, relative to the project root.
PROJECT_FILE: Final = "_codev/delivery.yaml"

Names = Annotated[dict[str, Text], Field(min_length=1)]


class ToolSpec(FileModel):
    """One tool: what it does, whether it changes the repository, whether it judges."""

    description: Text
    writes: bool = False
    judges: bool = False


class RoleSpec(FileModel):
    """One role of the catalogue file."""

    id: KebabId
    name: Names = Field(description="Display names by language code; 'en' is required.")
    step: Text = Field(description="The step of the delivery the role acts at (C1).")
    stage: KebabId = Field(description="The ledger's `stage` for the role's acts.")
    writes: bool = Field(False, description="May change the code (only the developer).")
    delivery: bool = Field(False, description="One of the four agents seen on every task.")
    coordinator: bool = Field(False, description="Stays on as the coordinator (coordinator mode).")
    anytime: bool = Field(False, description="May be delegated before the plan exists.")
    verdicts: tuple[Text, ...] = Field((), description="Verdicts it gives (QA, reviewer).")
    mission: Text = ""
    tools: tuple[KebabId, ...] = ()

    @model_validator(mode="after")
    def _english_name(self) -> RoleSpec:
        if "en" not in self.name:
            raise ValueError("name needs an 'en' entry (used for languages without a name)")
        return self


class CatalogueFile(FileModel):
    """The role catalogue file (``builtin/roles.yaml``)."""

    version: Literal[1] = 1
    tools: dict[KebabId, ToolSpec] = Field(min_length=1)
    roles: tuple[RoleSpec, ...] = Field(min_length=1)


class RoleOverride(FileModel):
    """A project's change to one role's tools: replace them, or add and remove some."""

    tools: tuple[KebabId, ...] | None = Field(None, description="The role's whole tool set.")
    add: tuple[KebabId, ...] = Field((), description="Tools to add.")
    remove: tuple[KebabId, ...] = Field((), description="Tools to take away.")


class OverridesFile(FileModel):
    """``_codev/delivery.yaml``: a project's own tools and its changes to role tools."""

    tools: dict[KebabId, ToolSpec] = Field(
        default_factory=dict, description="The project's own tools (new names only).")
    roles: dict[KebabId, RoleOverride] = Field(
        default_factory=dict, description="Role id → its tool changes.")


# -- the review policy (C7) ----------------------------------------------------------------

ReviewMode = Literal["always", "risk-based"]
#: Where a project keeps its review policy, relative to the project root.
POLICY_FILE: Final = "_codev/review.yaml"
#: Changed lines above which a change is not minor (C7 default).
MAX_LINES: Final = 80

#: What each sensitive category is called in a reason.
CATEGORY_LABELS: Final[dict[str, str]] = {
    "authentication": "authentication",
    "sessions": "sessions",
    "permissions": "permissions",
    "secrets": "secrets or cryptography",
    "migrations": "database migrations",
    "build-deploy": "build and deploy configuration",
    "dependencies": "dependency files",
    "external-services": "code that talks to external services",
}

#: Category → path patterns (gitignore-like: ``name/`` a folder anywhere, a pattern
#: without ``/`` a file name anywhere, one with ``/`` a path from the root, ``**``
#: any folders). Broad on purpose: a false alarm costs a review, a miss costs more.
SENSITIVE: Final[dict[str, tuple[str, ...]]] = {
    "authentication": (
        "auth/", "authentication/", "*auth.*", "*_auth*", "*-auth*", "auth_*", "auth-*",
        "*authn*", "*authenticat*", "*oauth*", "*oidc*", "*saml*", "sso/", "*login*",
        "*logout*", "*signin*", "*sign_in*", "*password*", "*passwd*", "*2fa*", "*totp*",
        "*mfa.*", "*_mfa*",
    ),
    "sessions": ("*session*", "*cookie*"),
    "permissions": (
        "*permission*", "*authoriz*", "*authz*", "*rbac*", "*abac*", "acl/", "*acl.*",
        "*_acl*", "policies/", "*access_control*", "*access-control*", "*privilege*",
        "CODEOWNERS", "*sudoers*",
    ),
    "secrets": (
        "*secret*", "*credential*", ".env", ".env.*", "*.env", "*.pem", "*.key", "*.p12",
        "*.pfx", "*.jks", "*.keystore", "*.gpg", "id_rsa*", "id_ed25519*", "id_ecdsa*",
        "*crypt*", "*cipher*", "*vault*", "*jwt*", "*hmac*", "*kms*", "*signing*",
        "*token*", "*.asc",
    ),
    "migrations": (
        "migrations/", "migrate/", "alembic/", "flyway/", "liquibase/", "*migration*",
        "db/schema.rb", "**/db/schema.rb", "schema.prisma", "*.sql", "*.ddl",
    ),
    "build-deploy": (
        "Dockerfile", "Dockerfile.*", "*.dockerfile", "docker-compose*.yml",
        "docker-compose*.yaml", "compose.yml", "compose.yaml", ".dockerignore", "Makefile",
        "GNUmakefile", "*.mk", "CMakeLists.txt", "*.cmake", "BUILD", "BUILD.bazel",
        "WORKSPACE", "MODULE.bazel", "*.bzl", ".github/workflows/**", ".github/actions/**",
        ".gitlab-ci.yml", ".circleci/", "Jenkinsfile", "azure-pipelines.yml", ".travis.yml",
        "bitbucket-pipelines.yml", "*.tf", "*.tfvars", "terraform/", "helm/", "charts/",
        "k8s/", "kubernetes/", "deploy/", "deployment/", "deployments/", "infra/",
        "ansible/", "Procfile", "app.yaml", "fly.toml", "netlify.toml", "vercel.json",
        "serverless.yml", "serverless.yaml", "setup.cfg", "setup.py", "pyproject.toml",
        "tox.ini", "noxfile.py", "MANIFEST.in", "webpack.config.*", "vite.config.*",
        "rollup.config.*", "babel.config.*", "tsconfig*.json", "build.gradle",
        "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "gradle.properties",
        "pom.xml", "*.csproj", "*.sln", "build.rs", ".npmrc", ".pypirc", ".gitmodules",
    ),
    "dependencies": (
        "requirements*.txt", "requirements/", "constraints*.txt", "Pipfile", "Pipfile.lock",
        "poetry.lock", "uv.lock", "pdm.lock", "pyproject.toml", "setup.py", "setup.cfg",
        "environment.yml", "environment.yaml", "conda-lock.yml", "package.json",
        "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml",
        "bun.lockb", "deno.lock", "Gemfile", "Gemfile.lock", "*.gemspec", "go.mod", "go.sum",
        "go.work", "Cargo.toml", "Cargo.lock", "composer.json", "composer.lock", "pom.xml",
        "build.gradle", "build.gradle.kts", "gradle.lockfile", "*.csproj",
        "packages.config", "packages.lock.json", "Directory.Packages.props", "mix.exs",
        "mix.lock", "Podfile", "Podfile.lock", "Package.swift", "Package.resolved",
        "pubspec.yaml", "pubspec.lock", "vcpkg.json", "conanfile.*", "*.lock", ".gitmodules",
    ),
    "external-services": (
        "integrations/", "clients/", "webhooks/", "*webhook*", "*_client.*", "*-client.*",
        "*client.py", "*api_client*", "*gateway*", "*payment*", "*stripe*", "*paypal*",
        "*twilio*", "*sendgrid*", "*smtp*", "*mailer*", "*grpc*", "*.proto", "openapi*.yaml",
        "openapi*.yml", "openapi*.json", "swagger*",
    ),
}


class ReviewPolicy(FileModel):
    """The review policy (``_codev/review.yaml``); the defaults are SPEC C7's."""

    policy: ReviewMode = Field(
        "always", description="'always' (default: every standalone task is reviewed) or "
        "'risk-based' (a minor, routine change may skip the reviewer).")
    max_lines: int = Field(MAX_LINES, ge=0, le=100_000_000, description="Changed lines "
                           "above which a change "
                           "is not minor (risk-based).")
    sensitive: dict[str, tuple[Text, ...]] = Field(
        default_factory=dict, description="Category → extra path patterns (gitignore-like); "
        "a new category name is used as its label.")
    replace_defaults: bool = Field(False, description="Use only `sensitive`, not the "
                                   "built-in patterns.")
    scan_content: bool = Field(True, description="Also scan a unified diff's changed lines "
                               "for secrets, external calls and permission checks.")
    project_requires: bool = Field(False, description="The project's review rules require "
                                   "a reviewer on every task.")
    organisation_requires: bool = Field(False, description="The organisation requires a "
                                        "reviewer on every task.")

    @property
    def risk_based(self) -> bool:
        """Whether the optional risk-based policy is on."""
        return self.policy == "risk-based"

    def patterns(self) -> dict[str, tuple[str, ...]]:
        """Category → path patterns in force."""
        base: dict[str, tuple[str, ...]] = {} if self.replace_defaults else dict(SENSITIVE)
        for category, extra in self.sensitive.items():
            base[category] = (*base.get(category, ()), *extra)
        return base


# -- a task and its limits (C2–C6) ---------------------------------------------------------

Mode = Literal["standard", "coordinator"]
#: ``merge-conflict`` work always runs in standard mode (C2).
TaskKind = Literal["change", "merge-conflict"]
#: Largest cap a task may set (a count, or minutes: about a year); beyond, a typo.
MAX_LIMIT: Final = 525_600
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT)] | None

#: Launches allowed per role and task when the task does not say (C4.3).
DEFAULT_LAUNCHES: Final[dict[str, int]] = {
    "architect": 2, "developer": 5, "qa": 5, "reviewer": 3, "web-tester": 3,
    "explorer": 6, "dependency-analyser": 3,
}


class Limits(FileModel):
    """The platform's caps on one task (C4.3, C4.4); ``null`` means unlimited, except the
    wait deadline: every wait has one (C4.4)."""

    launches: dict[KebabId, Limit] = Field(
        default_factory=dict, description="Role id → how many times it may be launched "
        f"(defaults: {', '.join(f'{k} {v}' for k, v in DEFAULT_LAUNCHES.items())}).")
    default_launches: Limit = Field(3, description="Launches of a role not named anywhere.")
    plan_revisions: Limit = Field(2, description="How many times the plan may be revised.")
    steps: Limit = Field(60, description="Accepted acts (moves and reports) per task.")
    duration_minutes: Limit = Field(240, description="Total run time of the task.")
    wait_minutes: Annotated[int, Field(ge=1, le=MAX_LIMIT)] = Field(
        45, description="Deadline of every wait for an agent, from its launch or answer.")
    agent_steps: Limit = Field(None, description="Step budget of one agent launch.")
    quick_fix_steps: Annotated[int, Field(ge=1, le=MAX_LIMIT)] = Field(
        15, description="The developer's smaller step budget on the quick-fix path (C6).")

    def launch_limit(self, role: str) -> int | None:
        """How many times `role` may be launched."""
        if role in self.launches:
            return self.launches[role]
        return DEFAULT_LAUNCHES.get(role, self.default_launches)

    @property
    def duration(self) -> timedelta | None:
        """The total run time allowed."""
        return None if self.duration_minutes is None else timedelta(minutes=self.duration_minutes)

    @property
    def wait(self) -> timedelta:
        """How long any wait may last."""
        return timedelta(minutes=self.wait_minutes)


class Task(FileModel):
    """One task to deliver (SPEC C2–C7); see the module docstring."""

    id: KebabId = Field("task", description="A short kebab-case id (the ledger's run name).")
    description: Annotated[str, Field(strict=True, min_length=1)] = Field(
        description="What is asked, in the user's words.")
    mode: Mode = Field("coordinator", description="Who decides the next step: the platform "
                       "(standard, fixed order) or the coordinator.")
    kind: TaskKind = Field("change", description="'merge-conflict' always runs in standard mode.")
    review: ReviewMode | ReviewPolicy = Field(
        "always", description="'always' (default), 'risk-based', or a whole review policy.")
    quick_fix: bool = Field(False, description="Allow the quick-fix path (C6, off by default).")
    focused_recheck: bool = Field(False, description="Allow focused rechecks (C6, off by "
                                  "default).")
    limits: Limits = Field(default_factory=Limits)
    labels: dict[str, Text] = Field(default_factory=dict, description="Free notes (team, "
                                    "ticket…), copied into the ledger's init event.")

    @property
    def policy(self) -> ReviewPolicy:
        """The review policy in force."""
        return self.review if isinstance(self.review, ReviewPolicy) else ReviewPolicy(
            policy=self.review)

    @property
    def standard_only(self) -> bool:
        """Whether this work must run in standard mode (merge conflict resolution, C2)."""
        return self.kind == "merge-conflict"

    def __repr__(self) -> str:
        return (f"<Task {self.id} ({self.mode}, review {self.policy.policy}): "
                f"{self.description[:60]!r}>")


def load_task(path: Path | str) -> Task:
    """A task from a YAML file (`InvalidInputError` listing every problem)."""
    doc = read_yaml(Path(path))
    model, problems = parse_model(Task, doc)
    if model is None:
        raise DeliveryError(f"the task file {doc.name} is not valid", problems)
    assert isinstance(model, Task)
    return model


def format_models() -> dict[str, type[BaseModel]]:
    """File name in `schemas/` → the model it describes (for `crewbook.formats`)."""
    return {
        "delivery-roles.json": CatalogueFile,
        "delivery-overrides.json": OverridesFile,
        "delivery-task.json": Task,
        "delivery-review-policy.json": ReviewPolicy,
    }
