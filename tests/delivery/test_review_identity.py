"""The review policy judges what a changed file *is*, not only its changed lines (C7).

With a unified diff: git's hunk header (the class or function around a hunk), the
context lines and path conventions; with ``--git``: both versions of each changed file.
The held-out real commits are rows of tests/data/review_policy/cases.yaml; here: the
reasons name file, line and why, and a routine change stays minor.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from crewbook.delivery import read_change, review_required
from crewbook.delivery.diffstat import ChangeSummary, from_git

REAL = Path(__file__).parent.parent / "data" / "review_policy" / "changes" / "real"


@pytest.mark.parametrize(("name", "path", "line"), [
    ("healthchecks-d403260e.diff", "hc/accounts/backends.py", 6),
    ("healthchecks-5b2a80d7.diff", "hc/accounts/middleware.py", 22),
    ("healthchecks-79173a5d.diff", "hc/lib/curl.py", 51),
    ("healthchecks-c6f82589.diff", "hc/lib/s3.py", 31),
    ("telemetry-notice.diff", "src/telemetry/index.ts", 24),
])
def test_a_reason_names_file_line_and_why(name: str, path: str, line: int) -> None:
    decision = review_required(read_change((REAL / name).read_bytes()), "risk-based")
    assert decision.required
    reason = next(r for r in decision.reasons if path in r)
    assert f"{path} line {line} (" in reason, reason
    assert "what the changed file is" in reason or "says what it is" in reason, reason


def test_hunk_headers_and_context_are_read() -> None:
    change = read_change((REAL / "healthchecks-5b2a80d7.diff").read_bytes())
    assert isinstance(change, ChangeSummary)
    kinds = {kind for _, _, _, kind in change.context_at}
    assert kinds == {"hunk", "context"}
    assert ("hc/accounts/middleware.py", 22, "class TeamAccessMiddleware:", "hunk") in \
        change.context_at


# ------------------------------------------------------------------ from git itself
def _git(repo: Path, *args: str) -> str:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(repo.parent),
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c",
                           "user.email=t@example.org", *args], capture_output=True,
                          check=True, text=True, env=env).stdout.strip()


def _commit(repo: Path, files: dict[str, str]) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, "utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "change")
    return _git(repo, "rev-parse", "HEAD")


#: An S3 wrapper whose name says nothing (``store.py``), the client imported on line 2.
STORE = "\n".join(["import logging", "import boto3", "", "", "def bucket_name(code):",
                   *[f"    part_{i} = {i}" for i in range(40)],
                   "    return f'pings-{code}'", ""])
#: A long module (over 300 lines) that sends mail from one function only.
MODELS = "\n".join(["from django.core.mail import mail_admins", "", "",
                    "def notify(subject):", "    mail_admins(subject, 'body')", "", "",
                    "def score(values):",
                    *[f"    values = values + {i}" for i in range(320)],
                    "    return values", ""])


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _commit(root, {"app/store.py": STORE, "app/models.py": MODELS,
                   "app/tests/test_store.py": "import requests\n\n\ndef test_it():\n"
                   "    assert requests\n"})
    return root


def _judge(repo: Path, files: dict[str, str]) -> tuple[bool, str]:
    base = _git(repo, "rev-parse", "HEAD")
    _commit(repo, files)
    decision = review_required(from_git(f"{base}..HEAD", repo), "risk-based")
    return decision.required, decision.line


def test_git_reads_the_whole_file(repo: Path) -> None:
    required, line = _judge(repo, {"app/store.py": STORE.replace("part_30 = 30",
                                                                "part_30 = 31")})
    assert required, line
    assert re.search(r"app/store\.py line 2 \(`import boto3`: what the changed file is\)",
                     line), line


def test_the_same_change_as_a_diff_shows_less(repo: Path) -> None:
    base = _git(repo, "rev-parse", "HEAD")
    _commit(repo, {"app/store.py": STORE.replace("part_30 = 30", "part_30 = 31")})
    diff = _git(repo, "diff", f"{base}..HEAD")
    decision = review_required(read_change(diff + "\n"), "risk-based")
    assert not decision.required, decision.line  # 3 context lines do not reach line 2


def test_a_comment_only_edit_stays_minor(repo: Path) -> None:
    required, line = _judge(repo, {"app/store.py": STORE.replace(
        "import boto3\n", "import boto3  # the S3 client\n").replace(
        "    part_30 = 30", "    # a note\n    part_30 = 30")})
    assert required, line  # the import line itself changed: its text shows boto3
    base_required, base_line = _judge(repo, {"app/store.py": (repo / "app/store.py")
                                             .read_text().replace("# a note", "# a note.")})
    assert not base_required, base_line


def test_a_test_file_is_not_a_client(repo: Path) -> None:
    required, line = _judge(repo, {"app/tests/test_store.py": "import requests\n\n\n"
                                   "def test_it():\n    assert requests is not None\n"})
    assert not required, line


def test_a_long_file_counts_only_the_changed_block(repo: Path) -> None:
    required, line = _judge(repo, {"app/models.py": MODELS.replace(
        "values + 300", "values + 301")})
    assert not required, line
    required, line = _judge(repo, {"app/models.py": MODELS.replace(
        "mail_admins(subject, 'body')", "mail_admins(subject, 'text')")})
    assert required, line
