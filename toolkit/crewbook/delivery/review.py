"""Whether a task needs the reviewer (SPEC C7): a pure function of the change and the policy.

``review_required(change, policy, reviewer_started=False) -> ReviewDecision``:

- the policy ``always`` (the default): a standalone task always goes through the
  reviewer, even when nothing changed (seed 001: "y compris lorsqu'aucune
  modification n'est nécessaire");
- the policy ``risk-based`` (optional): a change that changes nothing never needs a
  reviewer; otherwise the reviewer is required when a reviewer already started, the
  project's rules or the organisation require it, the change touches a sensitive
  path (authentication, sessions, permissions, secrets or cryptography, database
  migrations, build and deploy configuration, dependency files, code that talks to
  external services), has more than `max_lines` changed lines (80), or holds a
  binary, a symlink or a submodule; a minor, routine change may skip the reviewer;
- a change or a policy that cannot be read (`Unreadable`) means required: when in
  doubt, the reviewer is required.

The decision lists every reason, and its `line` is the last line of the pull-request
description: ``Reviewer required: …`` or ``Reviewer not required: …``. Code decides
this, never the coordinator. Sensitive paths are gitignore-like patterns matched
case-insensitively (`SENSITIVE`); a project adds its own in ``_codev/review.yaml``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Final, Literal

from ..errors import CrewbookError
from ..models import parse_model
from ..sources import read_yaml
from .diffstat import ChangeSummary, Unreadable
from .model import (
    CATEGORY_LABELS,
    ReviewMode,
    ReviewPolicy,
)

#: Category → regexes on the changed lines of a unified diff (files that are not docs).
CONTENT: Final[dict[str, tuple[str, ...]]] = {
    "secrets": (
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----", r"\bAKIA[0-9A-Z]{16}\b",
        r"(?i)\b(api[_-]?key|secret|password|passwd|access[_-]?token)\b\s*[:=]",
        r"\b(hashlib|hmac|bcrypt|scrypt|argon2|jwt|cryptography|Crypto\.Cipher)\b",
    ),
    "external-services": (
        r"\b(import|from|require\(?)\s*['\"]?(requests|httpx|aiohttp|urllib3?|boto3|botocore|"
        r"grpc|axios|node-fetch|stripe|twilio|smtplib|paramiko|kafka|pika)\b",
        r"\bfetch\(\s*['\"`]https?://", r"['\"`]https?://(?!localhost|127\.0\.0\.1|example\.)",
    ),
    "authentication": (r"\b(authenticate|login_required|check_password|verify_password)\b",),
    "permissions": (r"\b(has_perm|has_permission|is_superuser|is_admin|grant|revoke)\s*\(",),
}
#: Files whose text is not scanned (documentation: a link in a README is not a call).
DOC_SUFFIXES: Final = (".md", ".rst", ".txt", ".adoc", ".html")


@dataclass(frozen=True)
class Match:
    """A sensitive category a path (or one of its changed lines) falls in."""

    category: str
    path: str
    pattern: str
    by: Literal["path", "content"] = "path"

    @property
    def label(self) -> str:
        """How the category reads in a reason."""
        return CATEGORY_LABELS.get(self.category, self.category)


@dataclass(frozen=True)
class ReviewDecision:
    """Whether the reviewer is required, with every reason (and a short code for each)."""

    required: bool
    reasons: tuple[str, ...]
    codes: tuple[str, ...]
    policy: str = "always"
    changed_lines: int | None = None
    files: int | None = None
    matches: tuple[Match, ...] = field(default=(), repr=False)

    @property
    def line(self) -> str:
        """The pull-request description's last line (C7)."""
        return self.pr_line()

    def pr_line(self, path: str | None = None) -> str:
        """``Reviewer required: …`` / ``Reviewer not required: …``, with the path taken."""
        head = "Reviewer required" if self.required else "Reviewer not required"
        tail = f" (path: {path})" if path else ""
        return f"{head}: {'; '.join(self.reasons)}{tail}"

    def to_dict(self) -> dict[str, Any]:
        """``{"required", "reasons", "line", "codes", "policy", "changed_lines", "files",
        "matches"}``: what ``crewbook review-policy --json`` prints."""
        return {
            "required": self.required, "reasons": list(self.reasons), "line": self.line,
            "codes": list(self.codes), "policy": self.policy,
            "changed_lines": self.changed_lines, "files": self.files,
            "matches": [{"category": m.category, "path": m.path, "pattern": m.pattern,
                         "by": m.by} for m in self.matches],
        }

    def __str__(self) -> str:
        return self.line

    def _repr_html_(self) -> str:
        colour = "#c62828" if self.required else "#2e7d32"
        items = "".join(f"<li><code>{c}</code> {html.escape(r)}</li>"
                        for c, r in zip(self.codes, self.reasons, strict=False))
        return (f"<div class='crewbook-review'><b style='color:{colour}'>"
                f"{'Reviewer required' if self.required else 'Reviewer not required'}</b>"
                f" <small>(policy {html.escape(self.policy)})</small><ul>{items}</ul></div>")


# ---------------------------------------------------------------------- patterns
@cache
def _compile(pattern: str) -> re.Pattern[str]:
    """A gitignore-like pattern as a regex on a lower-case, slash-separated path."""
    p = pattern.lower()
    folder = p.endswith("/")
    p = p.rstrip("/")
    anchored = "/" in p
    out = ""
    i = 0
    while i < len(p):
        c = p[i]
        if p.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
            continue
        if p.startswith("**", i):
            out += ".*"
            i += 2
            continue
        out += {"*": "[^/]*", "?": "[^/]"}.get(c, re.escape(c))
        i += 1
    if folder:  # a folder of that name anywhere (or from the root when anchored)
        return re.compile(("^" if anchored else "^(?:.*/)?") + out + "/")
    return re.compile(("^" if anchored else "^(?:.*/)?") + out + "$")


def match_path(path: str, patterns: Mapping[str, Sequence[str]]) -> list[Match]:
    """The categories `path` falls in (one `Match` per category, first pattern wins)."""
    low = path.lower().removeprefix("./")
    found = []
    for category, pats in patterns.items():
        for pattern in pats:
            if _compile(pattern).search(low):
                found.append(Match(category, path, pattern))
                break
    return found


def _content_matches(change: ChangeSummary, seen: set[tuple[str, str]]) -> list[Match]:
    found: list[Match] = []
    for path, line in change.changed_text:
        if path.lower().endswith(DOC_SUFFIXES):
            continue
        for category, regexes in CONTENT.items():
            if (category, path) in seen:
                continue
            for regex in regexes:
                if re.search(regex, line[1:]):
                    found.append(Match(category, path, regex, "content"))
                    seen.add((category, path))
                    break
    return found


def _paths(items: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


# ---------------------------------------------------------------------- decision
def review_required(
    change: ChangeSummary | Unreadable | None,
    policy: ReviewPolicy | Unreadable | ReviewMode | None = None,
    *, reviewer_started: bool = False,
) -> ReviewDecision:
    """Whether the reviewer is required for `change` under `policy` (see the module doc).

    `change` None or `Unreadable`: the change cannot be read. `policy` None: the
    default policy (``always``); a mode name: that mode with the defaults;
    `Unreadable`: the policy cannot be read. Pure: same inputs, same decision.
    """
    if isinstance(policy, str):
        policy = ReviewPolicy(policy=policy)
    elif policy is None:
        policy = ReviewPolicy()
    reasons: list[tuple[str, str]] = []
    matches: list[Match] = []
    mode = policy.policy if isinstance(policy, ReviewPolicy) else "unreadable"
    readable = isinstance(change, ChangeSummary)
    lines = change.changed_lines if isinstance(change, ChangeSummary) else None
    count = len(change.files) if isinstance(change, ChangeSummary) else None

    def decision(required: bool) -> ReviewDecision:
        return ReviewDecision(required, tuple(r for _, r in reasons),
                              tuple(c for c, _ in reasons), mode, lines, count, tuple(matches))

    if isinstance(policy, Unreadable):
        reasons.append(("unreadable_policy", f"the review policy cannot be read ({policy}); "
                        "when in doubt, the reviewer is required"))
    elif not policy.risk_based:  # the risk-based exceptions are not even looked at
        reasons.append(("policy_always", "the review policy is 'always': a standalone task "
                        "always goes through the reviewer, whatever it changes"))
        return decision(True)
    if not readable:
        why = str(change) if isinstance(change, Unreadable) else "no change summary was given"
        reasons.append(("unreadable_change", f"{why}; when in doubt, the reviewer is required"))
        return decision(True)
    assert isinstance(change, ChangeSummary)
    if change.empty:
        if reasons:  # an unreadable policy: when in doubt, required
            return decision(True)
        reasons.append(("empty_change", "the change changes nothing"))
        return decision(False)
    if reviewer_started:
        reasons.append(("reviewer_started", "a reviewer already started on this task"))
    rules = policy if isinstance(policy, ReviewPolicy) else ReviewPolicy()
    if rules.project_requires:
        reasons.append(("project_rules", "the project's review rules require a reviewer"))
    if rules.organisation_requires:
        reasons.append(("organisation", "the organisation requires a reviewer"))
    reasons += _risks(change, rules, matches)
    if reasons:
        return decision(True)
    reasons.append(("minor", f"minor, routine change: {lines} changed lines in {count} "
                    f"file{'s' if count != 1 else ''} (limit {rules.max_lines}), nothing "
                    "sensitive, no binary, symlink or submodule"))
    return decision(False)


def _risks(change: ChangeSummary, rules: ReviewPolicy,
           matches: list[Match]) -> list[tuple[str, str]]:
    """Every C7 exception the change itself raises, in a stable order."""
    reasons: list[tuple[str, str]] = []
    patterns = rules.patterns()
    for f in change.files:
        for path in f.paths:
            for m in match_path(path, patterns):
                if all((m.category, f.path) != (x.category, x.path) for x in matches):
                    matches.append(Match(m.category, f.path if path == f.path else path,
                                         m.pattern))
    if rules.scan_content:
        matches += _content_matches(change, {(m.category, m.path) for m in matches})
    order = list(patterns) + [c for c in CONTENT if c not in patterns]
    for category in order:
        hits = [m for m in matches if m.category == category]
        if hits:
            label = CATEGORY_LABELS.get(category, category)
            shown = _paths(list(dict.fromkeys(
                m.path + (" (its changed lines)" if m.by == "content" else "") for m in hits)))
            reasons.append((f"sensitive:{category}", f"touches {label}: {shown}"))
    lines = change.changed_lines
    if lines > rules.max_lines:
        reasons.append(("too_large", f"{lines} changed lines, over the limit of "
                        f"{rules.max_lines}"))
    for flag, label in (("binary", "binary files"), ("symlink", "symlinks"),
                        ("submodule", "submodules")):
        hit = [f.path for f in change.files if getattr(f, flag)]
        if hit:
            reasons.append((flag, f"{label}: {_paths(hit)}"))
    unknown = [f.path for f in change.files
               if not f.binary and (f.added is None or f.removed is None)]
    if unknown:
        reasons.append(("unknown_size", f"line counts unknown for {_paths(unknown)}; when "
                        "in doubt, the reviewer is required"))
    return reasons


def sensitive_matches(paths: Iterable[str], policy: ReviewPolicy | None = None) -> list[Match]:
    """Every sensitive category each path falls in (for notebooks and docs)."""
    patterns = (policy or ReviewPolicy()).patterns()
    return [m for p in paths for m in match_path(p, patterns)]


def load_review_policy(path: Path | str) -> ReviewPolicy | Unreadable:
    """The policy in a YAML file, or `Unreadable` saying why (then the reviewer is required)."""
    try:
        doc = read_yaml(Path(path))
    except CrewbookError as exc:
        return Unreadable(str(exc).replace("\n", " "))
    model, problems = parse_model(ReviewPolicy, doc)
    if model is None:
        return Unreadable("; ".join(str(p) for p in problems))
    assert isinstance(model, ReviewPolicy)
    return model
