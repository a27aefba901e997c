"""The development lock agrees with pyproject.toml, and the tests run in what it pins.

`requirements/dev.lock` pins every extra (made by `bash scripts/lock.sh`); the README's
test command and `.ci/run` install with it as pip constraints, so a run today and a run
next month see the same pandas, numpy and nbval. The package keeps ranges for users.
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).parent.parent
LOCK = ROOT / "requirements" / "dev.lock"
PIN = re.compile(r"^(?P<name>[A-Za-z0-9._-]+)==(?P<version>\S+)\s*(?:;\s*(?P<marker>[^#]+?))?"
                 r"\s*(?:#\s*via\s+(?P<via>.*))?$")
FIX = "run `bash scripts/lock.sh` (see docs/development.md) and commit the new lock"


def pins() -> list[tuple[str, Version, Marker | None, str]]:
    """(name, version, marker, via) for every pin of the lock."""
    found = []
    for number, line in enumerate(LOCK.read_text("utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        match = PIN.match(line)
        assert match, f"{LOCK.name}:{number}: not a pin: {line!r}"
        marker = Marker(match["marker"]) if match["marker"] else None
        found.append((canonicalize_name(match["name"]), Version(match["version"]), marker,
                      match["via"] or ""))
    return found


def declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    texts = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        texts += extra
    return [Requirement(t) for t in texts]


def applicable(marker: Marker | None) -> bool:
    return marker is None or marker.evaluate()


def test_every_declared_requirement_is_pinned_within_its_range() -> None:
    locked = pins()
    problems = []
    for req in declared():
        versions = [v for n, v, m, _ in locked if n == canonicalize_name(req.name)
                    and applicable(m)]
        if not versions:
            problems.append(f"{req}: not in the lock")
        elif not all(req.specifier.contains(v, prereleases=True) for v in versions):
            problems.append(f"{req}: locked at {', '.join(map(str, versions))}")
    assert problems == [], f"pyproject.toml and {LOCK.name} disagree; {FIX}"


def test_the_lock_pins_nothing_pyproject_no_longer_asks_for() -> None:
    direct = {n for n, _, _, via in pins() if "crewbook (pyproject.toml)" in via}
    wanted = {canonicalize_name(r.name) for r in declared()}
    assert direct == wanted, f"{LOCK.name} was made from another pyproject.toml; {FIX}"


def test_the_environment_is_the_locked_one() -> None:
    """What the tests run in is what the lock pins (else saved notebook outputs may move)."""
    drift = []
    for name, version, marker, _ in pins():
        if not applicable(marker):
            continue
        try:
            installed = Version(metadata.version(name))
        except metadata.PackageNotFoundError:
            continue  # an extra this environment did not install
        if installed != version:
            drift.append(f"{name} {installed} (locked {version})")
    assert drift == [], ("installed without the lock; reinstall with "
                         "`.venv/bin/pip install -c requirements/dev.lock -e '.[dev]'`")


def test_the_pin_parser_reads_what_uv_writes() -> None:
    line = "numpy==2.4.6 ; python_full_version < '3.12'  # via pandas, crewbook (pyproject.toml)"
    match = PIN.match(line)
    assert match is not None
    assert (match["name"], match["version"]) == ("numpy", "2.4.6")
    assert match["marker"] == "python_full_version < '3.12'"
    assert "crewbook" in match["via"]
