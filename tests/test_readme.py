"""The README's commands work exactly as written.

The command-line quick start runs line by line in a fresh folder, as a newcomer types
it after `bash scripts/tour.sh` (whose `.venv/` is this test's environment); each line
must exit 0, or 1 where its comment says so. Then the Python quick start runs there,
statement by statement, in order. The test command is the one CI runs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text("utf-8")


def block_after(heading: str, language: str = "bash") -> list[str]:
    """The lines of the first fenced block under `heading`."""
    section = README.split(f"## {heading}\n", 1)[1]
    match = re.search(rf"```{language}\n(.*?)```", section, re.S)
    assert match, f"no {language} block under {heading!r}"
    return [line for line in match.group(1).splitlines() if line.strip()]


def expected_status(line: str) -> int:
    comment = line.partition("  #")[2]
    return 1 if re.search(r"\bexit 1\b", comment) else 0


def blocks_after(heading: str, language: str) -> list[str]:
    """Every fenced `language` block of the section under `heading`, in order."""
    section = README.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", section, re.S)


#: Runs every top-level statement of the blocks given on stdin (a JSON list) in one
#: namespace, in order, going on after a failure; writes the failures to argv[1].
STATEMENTS = r"""
import ast, json, sys
failures, namespace = [], {"__name__": "__main__"}
for block in json.load(sys.stdin):
    for stmt in ast.parse(block).body:
        try:
            exec(compile(ast.Module([stmt], []), "README.md", "exec"), namespace)
        except Exception as exc:
            failures.append(f"{ast.get_source_segment(block, stmt)}: {type(exc).__name__}: {exc}")
open(sys.argv[1], "w").write(json.dumps(failures))
"""


def run_command_line_quick_start(folder: Path) -> None:
    """The command-line block, line by line in `folder` (the checkout's stand-in)."""
    lines = block_after("Quick start: the command line")
    assert lines[0].startswith("source .venv/bin/activate")
    (folder / ".venv").symlink_to(sys.prefix, target_is_directory=True)
    script = ["set +e"]
    for number, line in enumerate(lines):
        script += [line, f'echo "::line {number} exit $?" >&3']
    log = folder / "statuses"
    done = subprocess.run(["bash", "-c", f"exec 3>{log}\n" + "\n".join(script)],
                          cwd=folder, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_COLOR": "1"}, check=False)
    statuses = dict(re.findall(r"::line (\d+) exit (\d+)", log.read_text()))
    wrong = [f"{line!r}: exit {statuses.get(str(n))}, expected {expected_status(line)}"
             for n, line in enumerate(lines)
             if statuses.get(str(n)) != str(expected_status(line))]
    assert wrong == [], done.stdout[-3000:] + done.stderr[-3000:]
    assert (folder / "tour" / "lite.svg").exists() or "dot" not in os.environ["PATH"]


def test_both_quick_starts_run_as_written_one_after_the_other(tmp_path: Path) -> None:
    """The command-line block, then every statement of the Python blocks, in order, in
    the same folder: nothing the first did makes the second refuse."""
    run_command_line_quick_start(tmp_path)
    blocks = blocks_after("Quick start: Python", "python")
    assert len(blocks) >= 2
    failures = tmp_path / "failures.json"
    done = subprocess.run([sys.executable, "-c", STATEMENTS, str(failures)],
                          input=json.dumps(blocks), cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, check=False,
                          env={**os.environ, "MPLBACKEND": "Agg"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(failures.read_text()) == []


def test_ci_runs_exactly_the_readme_test_command() -> None:
    command = block_after("Run the tests")
    assert len(command) == 1
    ci = (ROOT / ".ci" / "run").read_text("utf-8").rstrip().splitlines()
    assert ci[-1] == command[0]
    assert "-c requirements/dev.lock" in command[0], "the tests install from the lock"


@pytest.mark.parametrize("script", ["scripts/tour.sh", ".ci/run", "scripts/lock.sh"])
def test_shell_scripts_parse(script: str) -> None:
    done = subprocess.run(["bash", "-n", str(ROOT / script)], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr


def test_the_tour_installs_only_what_the_tour_needs() -> None:
    tour = (ROOT / "scripts" / "tour.sh").read_text("utf-8")
    assert "-c requirements/dev.lock" in tour
    assert ".[notebook]" in tour
    assert ".[dev]" not in tour
    assert "--no-browser" in README
    assert "--port" in README


def test_the_tour_opens_the_tour_notebook_and_passes_the_readme_arguments(tmp_path: Path) -> None:
    """tour.sh run as the README says, on a stand-in `.venv` (pip and JupyterLab replaced
    by scripts that record their arguments): JupyterLab gets the tour as its default URL
    (so the URL it prints headless leads to the tour), and the README's arguments."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "tour.sh", tmp_path / "scripts" / "tour.sh")
    (tmp_path / "notebooks").mkdir()
    shutil.copy(ROOT / "notebooks" / "00_tour.ipynb", tmp_path / "notebooks")
    bin_ = tmp_path / ".venv" / "bin"
    bin_.mkdir(parents=True)
    for name, body in (("python", "exit 0"), ("jupyter", 'printf "%s\\n" "$@" > "$0.args"')):
        (bin_ / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_ / name).chmod(0o755)
    done = subprocess.run(["bash", "scripts/tour.sh", "--no-browser", "--port", "8890"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    args = (bin_ / "jupyter.args").read_text().splitlines()
    assert args[0] == "lab"
    root = next(a.split("=", 1)[1] for a in args if a.startswith("--ServerApp.root_dir="))
    url = next(a.split("=", 1)[1] for a in args if a.startswith("--LabApp.default_url="))
    assert url.startswith("/lab/tree/")
    assert (tmp_path / root / url.removeprefix("/lab/tree/")).samefile(
        tmp_path / "notebooks" / "00_tour.ipynb")
    assert args[-3:] == ["--no-browser", "--port", "8890"]
    assert ("--allow-root" in args) == (os.getuid() == 0)
    assert "00_tour.ipynb" in done.stdout


#: Words of how crewbook was planned, which a user cannot look up.
PLANNING = re.compile(r"\bissues? #?\d+|\bseed \d{3}\b|project's planning", re.I)


def test_user_docs_say_what_the_software_does_not_how_it_was_planned() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    found = [f"{page.relative_to(ROOT)}:{n}: {match.group(0)}" for page in pages
             for n, line in enumerate(page.read_text("utf-8").splitlines(), 1)
             for match in PLANNING.finditer(line)]
    assert found == []
