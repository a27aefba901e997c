"""A real JupyterLab on 127.0.0.1 (no token, a temporary copy of the notebooks) and
Debian's chromium driven by the playwright package (no browser download).

Skipped, with the reason, only when chromium or playwright is missing. Screenshots go
to ``tests/browser/screenshots/`` (git-ignored; CI uploads the folder as an artifact),
one subfolder per notebook.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("CREWBOOK_CHROMIUM", "/usr/bin/chromium"))
SCREENSHOTS = Path(__file__).parent / "screenshots"
#: JupyterLab settings for the test: every cell rendered (no windowing, so every output
#: is in the page), no news pop-up, no autosave (a notebook run by one test must stay as
#: saved for the next: autosave would write the live kernel's widget ids over the saved
#: widget state).
SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
        "windowingMode": "none", "autoStartDefaultKernel": True},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false"},
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test here `browser`; skip them when chromium or playwright is missing."""
    reason = None
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        reason = "the playwright package is not installed (pip install -e '.[dev]')"
    if reason is None and not CHROMIUM.exists():
        reason = f"no chromium at {CHROMIUM} (apt-get install chromium)"
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


#: Each running lab's URL → its notebooks folder and environment (for `trust`).
_LABS: dict[str, tuple[Path, dict[str, str]]] = {}


def trust(lab: str, name: str) -> None:
    """Sign notebook `name` of the lab's copy (`jupyter trust`), as a reader who trusts
    it would: JupyterLab then renders its widget outputs and unsanitised HTML."""
    folder, env = _LABS[lab]
    subprocess.run([sys.executable, "-m", "jupyter", "trust", str(folder / name)], env=env,
                   check=True, capture_output=True, timeout=60)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of a JupyterLab serving a copy of `notebooks/` (with `tests/data`
    beside it, as the notebooks expect)."""
    base = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "notebooks", base / "notebooks")
    (base / "tests").mkdir()
    (base / "tests" / "data").symlink_to(ROOT / "tests" / "data")
    settings = base / "settings"
    for name, values in SETTINGS.items():
        target = settings / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values))
    port = _free_port()
    # a data folder of its own: `trust` signs notebooks there, never in the user's
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(settings),
           "JUPYTERLAB_WORKSPACES_DIR": str(base / "workspaces"),
           "JUPYTER_DATA_DIR": str(base / "data")}
    command = [sys.executable, "-m", "jupyterlab", "--ServerApp.ip=127.0.0.1",
               f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
               "--IdentityProvider.token=", "--ServerApp.password=",
               "--ServerApp.open_browser=False", "--ServerApp.disable_check_xsrf=True",
               f"--ServerApp.root_dir={base / 'notebooks'}",
               "--LabApp.news_url=", "--LabServerApp.workspaces_dir=" + str(base / "workspaces"),
               # window.jupyterapp: the tests read the widget manager and the kernel status
               "--LabApp.expose_app_in_browser=True"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    log = (base / "lab.log").open("wb")
    server = subprocess.Popen(command, cwd=base / "notebooks", env=env, stdout=log,
                              stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    _LABS[url] = (base / "notebooks", env)
    try:
        deadline = time.monotonic() + 90
        while True:
            if server.poll() is not None:
                raise RuntimeError("JupyterLab exited:\n" + (base / "lab.log").read_text())
            try:
                with urllib.request.urlopen(f"{url}/api/status", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("JupyterLab did not start in 90 s:\n"
                                       + (base / "lab.log").read_text()) from None
                time.sleep(0.3)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    """Debian's chromium, headless, through playwright (`executable_path`), started once
    for tests/browser. Package scope, not session: playwright's sync API keeps an event
    loop running until it stops, which would break later tests that run their own (the
    MCP client)."""
    from playwright.sync_api import expect, sync_playwright

    # a kernel on a loaded 2-core CI machine may take more than expect's 5 s to answer
    expect.set_options(timeout=60_000)
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                     args=["--no-sandbox", "--disable-gpu",
                                           "--disable-dev-shm-usage"])
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any, lab: str) -> Iterator[Any]:
    """A fresh 1280 px wide page; its kernels are shut down afterwards."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        yield page
    finally:
        context.close()
        _stop_sessions(lab)


def stop_session(lab: str, path: str) -> None:
    """Shut down the kernel of notebook `path` (relative to the server's root), if any."""
    with urllib.request.urlopen(f"{lab}/api/sessions", timeout=10) as answer:
        sessions = json.load(answer)
    for session in sessions:
        if session.get("path") == path:
            request = urllib.request.Request(f"{lab}/api/sessions/{session['id']}",
                                             method="DELETE")
            urllib.request.urlopen(request, timeout=30).close()


def _stop_sessions(lab: str) -> None:
    with urllib.request.urlopen(f"{lab}/api/sessions", timeout=10) as answer:
        sessions = json.load(answer)
    for session in sessions:
        request = urllib.request.Request(f"{lab}/api/sessions/{session['id']}",
                                         method="DELETE")
        urllib.request.urlopen(request, timeout=30).close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS
