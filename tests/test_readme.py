"""The README's commands work exactly as written.

The command-line quick start runs line by line in a fresh folder, as a newcomer types
it after `bash scripts/tour.sh` (whose `.venv/` is this test's environment); each line
must exit 0, or 1 where its comment says so. The test command is the one CI runs.
"""

from __future__ import annotations

import os
import re
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


def test_the_quick_start_runs_line_by_line_as_written(tmp_path: Path) -> None:
    lines = block_after("Quick start: the command line")
    assert lines[0].startswith("source .venv/bin/activate")
    (tmp_path / ".venv").symlink_to(sys.prefix, target_is_directory=True)
    script = ["set +e"]
    for number, line in enumerate(lines):
        script += [line, f'echo "::line {number} exit $?" >&3']
    log = tmp_path / "statuses"
    done = subprocess.run(["bash", "-c", f"exec 3>{log}\n" + "\n".join(script)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_COLOR": "1"}, check=False)
    statuses = dict(re.findall(r"::line (\d+) exit (\d+)", log.read_text()))
    wrong = [f"{line!r}: exit {statuses.get(str(n))}, expected {expected_status(line)}"
             for n, line in enumerate(lines)
             if statuses.get(str(n)) != str(expected_status(line))]
    assert wrong == [], done.stdout[-3000:] + done.stderr[-3000:]
    assert (tmp_path / "tour" / "lite.svg").exists() or "dot" not in os.environ["PATH"]


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
