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
  binary, a symlink or a submodule; a minor, routine change may skip the reviewer.
  The sensitive categories are seen from the paths and from what the changed lines do
  (`CONTENT`: imports of HTTP, cloud, mail and telemetry clients, secret loading,
  authentication and permission code), and from what each changed code file *is*
  (`IDENTITY`, `CONVENTIONS`: its imports, classes and name, read from both versions
  of the file with ``--git``, else from hunk headers and context lines) when the change
  alters its code; a reason names the file and the line; a test file is never
  authentication, session or permission code, nor sensitive by what it is;
- blank input (``source == "blank"``) proves nothing: required. Only an established
  empty change (from git, the engine, or by hand) changes nothing;
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
from bisect import bisect_right
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

#: Category → regexes on the changed lines of a unified diff (files that are not docs):
#: what the lines do, which path patterns cannot see (an ``envsecret()`` helper, an
#: authentication backend in ``backends.py``, an HTTP wrapper in ``lib/curl.py``).
_IMPORT = r"^\s*(?:import|from|const .*=\s*require\(|import .* from)\s*['\"]?"
CONTENT: Final[dict[str, tuple[str, ...]]] = {
    "secrets": (
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----", r"\bAKIA[0-9A-Z]{16}\b",
        r"(?i)\b\w*(api[_-]?key|secret|password|passwd|access[_-]?token|credential)\w*"
        r"['\"]?\s*[:=]",
        r"(?i)\b\w*(secret|credential|passw(?:or)?d)\w*\s*\(",
        r"(?i)\b(getenv|environ(?:\.get)?|env)\s*[(\[]\s*['\"]\w*(key|secret|token|password)",
        r"\b(hashlib|hmac|bcrypt|scrypt|argon2|jwt|cryptography|Crypto\.Cipher)\b",
    ),
    "external-services": (
        _IMPORT + r"(requests|httpx|aiohttp|urllib3|urllib\.request|urllib2|http\.client|"
        r"httplib2|pycurl|tornado\.httpclient|boto3?|botocore|aiobotocore|s3fs|minio|"
        r"google\.cloud|azure|storages|grpc|axios|node-fetch|got|superagent|stripe|twilio|"
        r"smtplib|aiosmtplib|email\.mime|sendgrid|mailgun|postmark|django\.core\.mail|"
        r"flask_mail|paramiko|kafka|pika|redis|sentry_sdk|posthog|mixpanel|segment|"
        r"analytics|datadog|statsd|opentelemetry|newrelic|rollbar|bugsnag|amplitude)\b",
        r"\bfetch\(\s*['\"`]https?://", r"['\"`]https?://(?!localhost|127\.0\.0\.1|example\.)",
        r"['\"](curl|wget)['\"]", r"\b(send_mail|send_mass_mail|EmailMessage|sendmail|"
        r"boto3\.(client|resource)|urlopen)\s*\(",
    ),
    "authentication": (
        r"\b(authenticate|login_required|check_password|verify_password|set_password|"
        r"make_password|AUTHENTICATION_BACKENDS|AUTH_USER_MODEL|ModelBackend|BaseBackend|"
        r"RemoteUserBackend|get_user_model|LoginView|passport|flask_login|login_user|"
        r"logout_user)\b",
        _IMPORT + r"(django\.contrib\.auth|rest_framework\.authentication|allauth|"
        r"social_core|authlib|oauthlib|flask_login|passport)",
    ),
    "permissions": (
        r"\b(has_perm|has_perms|has_permission|has_object_permission|is_superuser|is_admin|"
        r"grant|revoke|permission_required|user_passes_test)\s*\(",
        r"\b(PermissionDenied|HttpResponseForbidden|Forbidden|HTTP_403_FORBIDDEN|"
        r"permission_classes|PermissionRequiredMixin|UserPassesTestMixin)\b",
        r"\b(is_superuser|is_staff|is_admin)\b",
    ),
}
#: Category → regexes on the lines that say what a changed file *is* (C7: a change
#: "touches" such code even when its changed lines do not show it): the whole file before
#: and after the change (read with ``--git``), else the function or class git names in a
#: hunk header and the hunk's context lines. Imports of HTTP, cloud storage, mail,
#: telemetry and payment clients; authentication backends; access, permission and
#: session middleware; secret loading.
IDENTITY: Final[dict[str, tuple[str, ...]]] = {
    "external-services": (
        CONTENT["external-services"][0],
        _IMPORT + r"(@aws-sdk/|aws-sdk|@google-cloud/|@azure/|nodemailer|undici|ky|"
        r"posthog-node|posthog-js|@segment/|@sentry/|@opentelemetry/|stripe|@stripe/|"
        r"braintree|paypal|twilio|@sendgrid/|mailgun|resend|openai|@anthropic-ai/)",
        r"^\s*(?:import|from)\s+(?:botocore|pycurl|smtplib|imaplib|poplib|ftplib|"
        r"telnetlib|websocket|websockets|braintree|paypalrestsdk|apprise)\b",
        r"\b(?:reqwest|hyper|ureq|surf)::|^\s*import\s+\(?\s*\"net/(?:http|smtp)\"",
    ),
    "authentication": (
        r"^\s*class\s+\w*(?:Auth|Login|Token|Remote\w*User|Model|Profile|Basic|Header|Ldap|"
        r"OAuth|Sso)\w*Backend\b",
        r"^\s*(?:async\s+)?def\s+(?:authenticate|check_password|verify_password)\s*\(",
        r"^\s*class\s+\w*(?:Authentication|Authenticator|LoginView|LogoutView)\w*\b",
        _IMPORT + r"(django\.contrib\.auth\.backends|rest_framework\.authentication|"
        r"passport|next-auth|@auth/|jsonwebtoken|jose|authlib|oauthlib|flask_login)",
    ),
    "permissions": (
        r"^\s*class\s+\w*(?:Access|Permission|Auth\w*|Login\w*|Team|Tenant|Role|Acl|"
        r"Csrf|Security|Admin|Staff)\w*Middleware\b",
        r"^\s*class\s+\w*Permission\w*\b",
        r"^\s*(?:async\s+)?def\s+(?:has_permission|has_object_permission|has_perm|"
        r"check_permissions?|check_access|can_access)\s*\(",
    ),
    "sessions": (
        r"^\s*class\s+\w*Session\w*Middleware\b",
        _IMPORT + r"(django\.contrib\.sessions|express-session|iron-session|"
        r"flask_session|cookie-session)",
    ),
    "secrets": (
        r"(?i)\b(?:getenv|environ(?:\.get)?|env)\s*[(\[]\s*['\"]\w*(?:key|secret|token|"
        r"password|credential)",
        r"(?i)\bprocess\.env\.\w*(?:key|secret|token|password|credential)",
        _IMPORT + r"(keyring|hvac|cryptography|nacl|jwt|jsonwebtoken|bcrypt|argon2)\b",
    ),
}
#: Path conventions for what a code file is (checked after `IDENTITY`, when the change
#: alters a code line of the file): names that say "an HTTP client", "the S3 client",
#: "the mail sender", "telemetry", "the authentication backend", "access middleware".
CONVENTIONS: Final[dict[str, tuple[str, ...]]] = {
    "external-services": (
        "*curl.*", "*http_client.*", "*httpclient.*", "*http-client.*", "s3.*", "*_s3.*",
        "*-s3.*", "*emails.*", "*email.*", "*mail.*", "*mailers.*", "*smtp*",
        "telemetry/", "*telemetry.*", "*analytics.*", "*sentry.*", "*statsd.*",
    ),
    "authentication": ("**/accounts/backends.*", "*auth*/backends.*", "*backends/auth*"),
    "permissions": ("**/accounts/middleware.*", "*auth*/middleware.*", "*access*middleware*",
                    "*middleware*/access*"),
}
#: A file of at most this many lines is one module: any line of it says what it is. In a
#: longer file, an import says what one part does, so only the lines of the top-level
#: block (class, function) the change alters count, and its hunk headers and context.
MODULE_LINES: Final = 300
#: File suffixes that are code: only there does what a file *is* make a change sensitive.
CODE_SUFFIXES: Final = (
    ".py", ".pyi", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx", ".go",
    ".rs", ".rb", ".php", ".java", ".kt", ".kts", ".scala", ".cs", ".swift", ".m", ".c",
    ".h", ".cc", ".cpp", ".hpp", ".ex", ".exs", ".erl", ".clj", ".lua", ".pl", ".sh",
    ".vue", ".svelte", ".dart",
)
#: A changed line that changes no code: blank, a comment, or a docstring's quotes alone.
_NOT_CODE = re.compile(r"^\s*(?:$|#|//|/\*|\*|<!--|--\s|(?:\"{3}|'{3})\s*$)")

#: Categories a test file cannot raise: `tests/test_login.py` tests authentication, it
#: is not authentication code.
NOT_IN_TESTS: Final = ("authentication", "sessions", "permissions")
_TEST_FILE = re.compile(r"(^|/)(tests?|spec|specs|__tests__|testing)/|(^|/)(test_[^/]*|tests?\.py|"
                        r"[^/]*_tests?\.[^/.]+|[^/]*\.(test|spec)\.[^/]+|conftest\.py)$")


def is_test_file(path: str) -> bool:
    """Whether `path` is a test file (a ``tests/`` folder, ``test_*.py``, ``*.spec.ts``...)."""
    return bool(_TEST_FILE.search(path.lower()))


#: Files whose text is not scanned (documentation: a link in a README is not a call).
DOC_SUFFIXES: Final = (".md", ".rst", ".txt", ".adoc", ".html")


@dataclass(frozen=True)
class Match:
    """A sensitive category a path (or one of its changed lines) falls in."""

    category: str
    path: str
    pattern: str
    #: ``path`` (a sensitive path), ``content`` (a changed line), ``file`` (what the file
    #: is: a line of it, its hunk header or its context), ``convention`` (its name says
    #: what it is, and the change alters its code).
    by: Literal["path", "content", "file", "convention"] = "path"
    #: For a content match: the line (in the new file; the old one for a removed line)
    #: and its text.
    line: int | None = None
    text: str = ""

    @property
    def where(self) -> str:
        """``path`` or ``path line N (`text`)`` for a reason."""
        if self.by == "path":
            return self.path
        if self.by == "convention":
            at = f" line {self.line}" if self.line is not None else ""
            return (f"{self.path}{at} (a code change in a file whose name, like "
                    f"`{self.pattern}`, says what it is)")
        at = f" line {self.line}" if self.line is not None else ""
        body = self.text.strip()
        body = body if len(body) <= 60 else body[:57] + "..."
        if self.by == "file":  # the line is not changed: it says what the file is
            return f"{self.path}{at} (`{body}`: what the changed file is)"
        return f"{self.path}{at} (`{body}`)" if body else f"{self.path}{at}"

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
                         "by": m.by, "line": m.line} for m in self.matches],
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
def _rx(regex: str) -> re.Pattern[str]:
    """`regex` compiled once (the scans run it on every line of every changed file)."""
    return re.compile(regex)


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
    test = is_test_file(low)
    found = []
    for category, pats in patterns.items():
        if test and category in NOT_IN_TESTS:
            continue
        for pattern in pats:
            if _compile(pattern).search(low):
                found.append(Match(category, path, pattern))
                break
    return found


def _content_matches(change: ChangeSummary, seen: set[tuple[str, str]]) -> list[Match]:
    found: list[Match] = []
    lines: tuple[tuple[str, int | None, str], ...] = change.changed_at or tuple(
        (p, None, t) for p, t in change.changed_text)
    # an added line says what the change does; a removed one only what it undoes
    lines = tuple(sorted(lines, key=lambda item: not item[2].startswith("+")))
    for path, number, line in lines:
        if path.lower().endswith(DOC_SUFFIXES):
            continue
        test = is_test_file(path)
        for category, regexes in CONTENT.items():
            if (category, path) in seen or (test and category in NOT_IN_TESTS):
                continue
            for regex in regexes:
                if _rx(regex).search(line[1:]):
                    found.append(Match(category, path, regex, "content", number, line[1:]))
                    seen.add((category, path))
                    break
    return found


def changes_code(change: ChangeSummary, path: str) -> bool:
    """Whether the change alters a code line of `path` (not only blank lines, comments or
    docstring quotes); without changed lines (numstat), whether it changes any line."""
    if not change.changed_at:
        return any(f.lines or f.added is None for f in change.files if f.path == path)
    return any(p == path and not _NOT_CODE.match(text[1:]) for p, _, text in change.changed_at)


def _identity_matches(change: ChangeSummary, seen: set[tuple[str, str]]) -> list[Match]:
    """What each changed code file *is* (`IDENTITY` on its whole text, hunk headers and
    context; `CONVENTIONS` on its name), for the files whose code the change alters. A
    test file or documentation is never sensitive by what it is: a test that imports
    `requests` does not talk to a service, and a comment-only edit touches no code."""
    found: list[Match] = []
    around: dict[str, list[tuple[int, str, str]]] = {}
    for path, number, text, kind in change.context_at:
        around.setdefault(path, []).append((number, text, kind))
    rank = {"hunk": 0, "new": 1, "context": 2, "old": 3}
    changed: dict[str, set[int]] = {}
    code: set[str] = set()  # the paths where the change alters a code line
    for path, number, text in change.changed_at:
        if text.startswith("+"):
            changed.setdefault(path, set()).add(number)
        if path not in code and not _NOT_CODE.match(text[1:]):
            code.add(path)
    for f in change.files:
        path = f.path
        low = path.lower()
        if (not low.endswith(CODE_SUFFIXES) or is_test_file(low) or f.binary
                or not (path in code if change.changed_at else changes_code(change, path))):
            continue
        lines = sorted(_telling(around.get(path, []), changed.get(path, set())),
                       key=lambda item: (rank[item[2]], item[0]))
        for category, regexes in IDENTITY.items():
            if (category, path) in seen:
                continue
            hit = next(((number, text, regex) for number, text, _ in lines
                        for regex in regexes if _rx(regex).search(text)), None)
            if hit is not None:
                found.append(Match(category, path, hit[2], "file", hit[0], hit[1]))
                seen.add((category, path))
                continue
            for pattern in CONVENTIONS.get(category, ()):
                if _compile(pattern).search(low):
                    first = next((n for p, n, text in change.changed_at
                                  if p == path and not _NOT_CODE.match(text[1:])), None)
                    found.append(Match(category, path, pattern, "convention", first))
                    seen.add((category, path))
                    break
    return found


#: A line that starts a top-level block (as git's default funcname: a letter, ``_``,
#: ``$`` or ``@`` in the first column); imports belong to no block.
_TOP = re.compile(r"^(?!(?:import|from|package|use|require)\b)[A-Za-z_$@]")


def _telling(lines: list[tuple[int, str, str]],
             changed: set[int]) -> list[tuple[int, str, str]]:
    """The lines of one file that may say what it is: all of them when each version has
    at most `MODULE_LINES` lines; else the hunk headers, the context lines, and the lines
    of the new version's top-level blocks that hold an added line (`_TOP` starts one;
    the imports before the first one say what some part does, not which)."""
    longest = {kind: max((n for n, _, k in lines if k == kind), default=0)
               for kind in ("new", "old")}
    if max(longest.values()) <= MODULE_LINES:
        return lines
    starts = sorted(n for n, text, kind in lines if kind == "new" and _TOP.match(text))

    def block(n: int) -> int:  # the top-level line starting the block of line n
        at = bisect_right(starts, n)
        return starts[at - 1] if at else 0

    # block 0 (before the first top-level line: the imports) tells nothing of one part
    blocks = {block(n) for n in changed} - {0}
    kept = [(n, text, kind) for n, text, kind in lines
            if kind in ("hunk", "context") or (kind == "new" and block(n) in blocks)]
    # an import counts when the changed blocks use a name it brings in
    body = "\n".join(text for _, text, _ in kept)
    return kept + [(n, text, kind) for n, text, kind in lines
                   if kind == "new" and any(re.search(rf"\b{re.escape(name)}\b", body)
                                            for name in _imported(text))]


def _imported(line: str) -> list[str]:
    """The names an import line brings in (``from m import a, b as c`` → a, c;
    ``import boto3`` → boto3; ``import x, { y } from "m"`` → x, y); none for other lines."""
    if m := re.match(r"^\s*from\s+\S+\s+import\s+\(?([\w\s,]+)", line):
        return [part.split()[-1] for part in m.group(1).split(",") if part.strip()]
    if m := re.match(r"^\s*import\s+([\w.]+)(?:\s+as\s+(\w+))?\s*$", line):
        return [m.group(2) or m.group(1).split(".")[0]]
    if m := re.match(r"^\s*import\s+(.*?)\s+from\s", line):
        return re.findall(r"\w+", m.group(1).replace(" as ", " ").replace("type ", " "))
    return []


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
        if not change.established:  # blank input: a mistyped branch gives an empty diff
            reasons.append(("blank_input", "the change given is empty, which proves nothing "
                            "(a mistyped branch gives an empty diff); read it from git "
                            "(`crewbook review-policy --git BASE..HEAD`) to establish that "
                            "it changes nothing; when in doubt, the reviewer is required"))
            return decision(True)
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
        seen = {(m.category, m.path) for m in matches}
        matches += _content_matches(change, seen)
        matches += _identity_matches(change, seen)
    order = list(patterns) + [c for c in (*CONTENT, *IDENTITY) if c not in patterns]
    for category in order:
        hits = [m for m in matches if m.category == category]
        if hits:
            label = CATEGORY_LABELS.get(category, category)
            shown = _paths(list(dict.fromkeys(m.where for m in hits)))
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
