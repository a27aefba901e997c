"""`crewbook review-policy` on real commits (C7): small git repositories built here with
real-looking files (a Django settings module, an auth backend, an HTTP wrapper...).

Each change is committed on top of a base commit and judged with ``--git BASE..HEAD``,
the form that carries file modes and the changed lines.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

Run = Callable[..., Any]

SETTINGS = '''"""Django settings for the shop project."""
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = "django-insecure-dev-only"
DEBUG = False
ALLOWED_HOSTS = ["shop.example.org"]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "shop",
        "USER": "shop",
        "HOST": "db",
    }
}
'''

MODELS = '''from django.db import models


class Order(models.Model):
    """An order placed in the shop."""

    number = models.CharField(max_length=32, unique=True)
    customer = models.ForeignKey("customers.Customer", on_delete=models.CASCADE)
    total = models.DecimalField(max_digits=10, decimal_places=2)

    def __str__(self) -> str:
        return f"Order {self.number}"
'''


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z", "GIT_CONFIG_NOSYSTEM": "1",
           "HOME": str(repo.parent)}
    done = subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c",
                           "user.email=t@example.org", "-c", "protocol.file.allow=always",
                           *args], capture_output=True, text=True, check=True, env=env)
    return done.stdout


def write(repo: Path, files: Mapping[str, str]) -> None:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with a base commit: settings, a model, a view, a test."""
    root = tmp_path / "shop"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, {"shop/settings.py": SETTINGS, "orders/models.py": MODELS,
                 "orders/views.py": "from django.http import JsonResponse\n\n\n"
                 "def ping(request):\n    return JsonResponse({'ok': True})\n",
                 "tests/test_orders.py": "def test_nothing():\n    assert 1 + 1 == 2\n"})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "branch", "base")
    return root


def commit(repo: Path, files: Mapping[str, str], message: str = "change") -> None:
    write(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def judge(cli: Run, repo: Path, *extra: str) -> dict[str, Any]:
    result = cli("review-policy", "--git", "base..HEAD", "--project", repo, "--risk-based",
                 "--json", *extra)
    assert result.code == 0, result.err
    data: dict[str, Any] = result.json
    return data


def replace_line(repo: Path, name: str, old: str, new: str) -> dict[str, str]:
    text = (repo / name).read_text()
    assert old in text
    return {name: text.replace(old, new)}


def test_secret_key_loaded_by_a_helper_is_secrets(cli: Run, repo: Path) -> None:
    files = replace_line(repo, "shop/settings.py", 'SECRET_KEY = "django-insecure-dev-only"',
                         'SECRET_KEY = envsecret("DJANGO_SECRET_KEY")')
    files["shop/settings.py"] = files["shop/settings.py"].replace(
        "from pathlib import Path\n", "from pathlib import Path\n\nfrom .env import envsecret\n")
    commit(repo, files)
    data = judge(cli, repo)
    assert data["required"] is True
    assert "sensitive:secrets" in data["codes"]
    assert "shop/settings.py line 8 (`SECRET_KEY = envsecret(" in data["line"]


def test_database_password_and_the_envsecret_helper(cli: Run, repo: Path) -> None:
    files = replace_line(repo, "shop/settings.py", '"HOST": "db",',
                         '"HOST": "db",\n        "PASSWORD": envsecret("DB_PASSWORD"),')
    files["shop/env.py"] = ('"""Read secrets mounted by the orchestrator."""\nfrom pathlib '
                            'import Path\n\n\ndef envsecret(name: str) -> str:\n    return '
                            'Path("/run/secrets", name.lower()).read_text().strip()\n')
    commit(repo, files)
    data = judge(cli, repo)
    assert data["required"] is True
    where = {(m["path"], m["line"]) for m in data["matches"] if m["category"] == "secrets"}
    assert ("shop/env.py", 5) in where
    assert ("shop/settings.py", 16) in where


@pytest.mark.parametrize(("name", "text", "category"), [
    ("accounts/backends.py", "from django.contrib.auth.backends import ModelBackend\n\n\n"
     "class EmailBackend(ModelBackend):\n    def authenticate(self, request, email=None, "
     "password=None):\n        return None\n", "authentication"),
    ("teams/middleware.py", "from django.core.exceptions import PermissionDenied\n\n\n"
     "class TeamAccessMiddleware:\n    def __init__(self, get_response):\n        "
     "self.get_response = get_response\n\n    def __call__(self, request):\n        if "
     "request.team not in request.user.teams.all():\n            raise PermissionDenied\n"
     "        return self.get_response(request)\n", "permissions"),
    ("lib/curl.py", "import subprocess\n\n\ndef get(url: str) -> bytes:\n    return "
     "subprocess.run(['curl', '-fsSL', url], check=True, capture_output=True).stdout\n",
     "external-services"),
    ("shop/storage.py", "import boto3\n\n\ndef upload(path, key):\n    "
     "boto3.client('s3').upload_file(path, 'shop-media', key)\n", "external-services"),
    ("orders/notify.py", "from django.core.mail import send_mail\n\n\ndef order_placed(o):\n"
     "    send_mail('Your order', str(o), 'shop@example.org', [o.customer.email])\n",
     "external-services"),
    ("shop/telemetry.py", "import posthog\n\n\ndef track(user, event):\n    "
     "posthog.capture(user.pk, event)\n", "external-services"),
])
def test_what_the_lines_do(cli: Run, repo: Path, name: str, text: str, category: str) -> None:
    commit(repo, {name: text})
    data = judge(cli, repo)
    assert data["required"] is True, data["line"]
    assert f"sensitive:{category}" in data["codes"], data["line"]
    hit = [m for m in data["matches"] if m["category"] == category]
    assert hit[0]["path"] == name
    assert hit[0]["by"] == "content"
    assert isinstance(hit[0]["line"], int)
    assert f"{name} line {hit[0]['line']}" in data["line"]


def test_a_test_named_like_auth_is_not_authentication(cli: Run, repo: Path) -> None:
    commit(repo, {"tests/test_login.py": "def test_login_page(client):\n    response = "
                  "client.get('/login/')\n    assert response.status_code == 200\n"})
    data = judge(cli, repo)
    assert data["required"] is False, data["line"]
    assert data["codes"] == ["minor"]


def test_a_one_line_model_refactor_is_minor(cli: Run, repo: Path) -> None:
    commit(repo, replace_line(repo, "orders/models.py", 'return f"Order {self.number}"',
                              'return f"Order #{self.number}"'))
    data = judge(cli, repo)
    assert data["required"] is False, data["line"]
    assert data["codes"] == ["minor"]
    assert data["changed_lines"] == 2


def test_symlink_retarget_is_seen_from_git(cli: Run, repo: Path) -> None:
    (repo / "releases").mkdir()
    write(repo, {"releases/v1.txt": "1\n", "releases/v2.txt": "2\n"})
    os.symlink("v1.txt", repo / "releases" / "current")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "link")
    git(repo, "branch", "-f", "base")
    (repo / "releases" / "current").unlink()
    os.symlink("v2.txt", repo / "releases" / "current")
    git(repo, "commit", "-q", "-am", "retarget")
    data = judge(cli, repo)
    assert data["required"] is True
    assert "symlink" in data["codes"]
    # the numstat forms the docs used to recommend cannot see it: unreadable, not minor
    numstat = git(repo, "diff", "--numstat", "--summary", "base..HEAD")
    path = repo.parent / "change.numstat"
    path.write_text(numstat)
    via_numstat = cli("review-policy", path, "--risk-based", "--json").json
    assert via_numstat["required"] is True
    assert via_numstat["codes"] == ["unreadable_change"]
    assert "cannot show file modes" in via_numstat["line"]
    told = cli("review-policy", path, "--risk-based", "--json", "--no-modes").json
    assert told["codes"] == ["minor"]  # told otherwise: the retarget is invisible


def test_submodule_bump_is_seen_from_git(cli: Run, repo: Path, tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    git(lib, "init", "-q", "-b", "main")
    git(lib, "commit", "-q", "--allow-empty", "-m", "one")
    git(repo, "submodule", "add", "-q", str(lib), "vendor/lib")
    git(repo, "commit", "-q", "-m", "add lib")
    git(repo, "branch", "-f", "base")
    git(lib, "commit", "-q", "--allow-empty", "-m", "two")
    git(repo / "vendor" / "lib", "pull", "-q", "origin", "main")
    git(repo, "commit", "-q", "-am", "bump lib")
    data = judge(cli, repo)
    assert data["required"] is True
    assert "submodule" in data["codes"]


def test_empty_input_is_no_proof_but_git_establishes_it(cli: Run, repo: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    blank = cli("review-policy", "-", "--risk-based", "--json").json
    assert blank["required"] is True
    assert blank["codes"] == ["blank_input"]
    same = cli("review-policy", "--git", "base..main", "--project", repo, "--risk-based",
               "--json").json
    assert same["required"] is False
    assert same["codes"] == ["empty_change"]
    typo = cli("review-policy", "--git", "mian..HEAD", "--project", repo, "--risk-based",
               "--json").json
    assert typo["required"] is True
    assert typo["codes"] == ["unreadable_change"]
    assert "'mian'" in typo["line"]


def test_the_projects_review_yaml_applies(cli: Run, repo: Path) -> None:
    commit(repo, replace_line(repo, "orders/models.py", 'return f"Order {self.number}"',
                              'return f"Order #{self.number}"'))
    always = cli("review-policy", "--git", "base..HEAD", "--project", repo, "--json").json
    assert always["codes"] == ["policy_always"]
    write(repo, {"_codev/review.yaml": "policy: risk-based\nsensitive:\n  billing: "
                 "['orders/models.py']\n"})
    data = cli("review-policy", "--git", "base..HEAD", "--project", repo, "--json").json
    assert data["policy"] == "risk-based"
    assert data["codes"] == ["sensitive:billing"]


def test_a_fifo_and_a_device_are_refused_without_hanging(cli: Run, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = cli("review-policy", fifo, "--risk-based")
    assert result.code == 1
    assert "FIFO" in result.err
    assert "no such file" not in result.err
    assert "Traceback" not in result.err
    zero = cli("review-policy", "/dev/zero", "--risk-based")
    assert zero.code == 1
    assert "device" in zero.err
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(open("/dev/zero", "rb")))  # noqa: SIM115
    try:
        piped = cli("review-policy", "-", "--risk-based")
    finally:
        sys.stdin.close()
    assert piped.code == 1
    assert "stdin holds more than 32 MiB" in piped.err


def test_a_line_that_shows_nothing_in_an_s3_client(cli: Run, repo: Path) -> None:
    """The change alters `bucket()` only; line 1's import says the file is an S3 client."""
    store = ("import boto3\n\n\ndef bucket(code):\n" + "".join(
        f"    step_{i} = {i}\n" for i in range(20)) + "    return f'pings-{code}'\n")
    commit(repo, {"orders/store.py": store})
    git(repo, "branch", "-f", "base")
    commit(repo, replace_line(repo, "orders/store.py", "step_10 = 10", "step_10 = 11"))
    data = judge(cli, repo)
    assert data["required"] is True, data["line"]
    assert data["codes"] == ["sensitive:external-services"]
    assert [(m["path"], m["line"], m["by"]) for m in data["matches"]] == [
        ("orders/store.py", 1, "file")]
    assert "orders/store.py line 1 (`import boto3`: what the changed file is)" in data["line"]
    commit(repo, replace_line(repo, "orders/store.py", "    step_10 = 11\n",
                              "    # keep in step with the lifecycle rule\n    step_10 = 11\n"))
    git(repo, "branch", "-f", "base", "HEAD~1")
    assert judge(cli, repo)["codes"] == ["minor"]  # a comment alone touches no code
