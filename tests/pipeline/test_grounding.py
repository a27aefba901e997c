"""Paths named in artifacts (ground_references) and `writes` globs."""

from __future__ import annotations

from pathlib import Path

import pytest

from crewbook.pipeline.grounding import glob_regex, in_scope, missing_paths, named_paths

from .conftest import WORKSPACE


def test_named_paths_from_path_keys_and_text() -> None:
    content = {
        "summary": "Touch core/sessions/store.py:12 and `README.md`, not and/or, "
                   "not https://example.org/a/b.py nor /etc/hosts. See docs/.",
        "relevant_files": ["core/sessions/store.py", " testing/x "],
        "steps": [{"files": ["a.py"], "entry_path": "src/main.py"}],
        "count": 3,
    }
    assert named_paths(content) == ["core/sessions/store.py", "docs/", "README.md",
                                    "testing/x", "a.py", "src/main.py"]


def test_missing_paths() -> None:
    found = missing_paths(WORKSPACE, ["core/sessions/store.py", "core/nope.py", "../x.py",
                                      "/abs/x.py", "core/**/*.py", "zz/**/*.py",
                                      "core/sessions/store.py:3-9"])
    assert found == [
        "'core/nope.py' does not exist in the workspace",
        "'../x.py': the path climbs out with '..'; it must stay inside its folder",
        "'/abs/x.py': the path is absolute; it must be relative to its folder",
        "'zz/**/*.py' matches no file in the workspace",
    ]


def test_symlink_out_of_the_workspace_is_a_miss(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "secret.txt").write_text("x")
    (tmp_path / "ws" / "link.txt").symlink_to(tmp_path / "secret.txt")
    assert missing_paths(tmp_path / "ws", ["link.txt"]) == ["'link.txt' leaves the workspace"]


@pytest.mark.parametrize(("path", "globs", "inside"), [
    ("core/sessions/store.py", ["core/sessions/**"], True),
    ("core/sessions/a/b.py", ["core/sessions/**"], True),
    ("core/auth.py", ["core/sessions/**"], False),
    ("core/x.py", ["core/*.py"], True),
    ("core/a/x.py", ["core/*.py"], False),
    ("core/a/x.py", ["**/x.py"], True),
    ("x.py", ["**/x.py"], True),
    ("./docs/a.md", ["docs/"], True),
    ("a+b.py", ["a+b.py"], True),
    ("ab.py", ["a?.py"], True),
    ("a/.py", ["a?.py"], False),
    ("src/a1.py", ["src/[ab]*.py"], True),
    ("src/c1.py", ["src/[ab]*.py"], False),
    ("x/u.md", ["x/[!t].md"], True),
    ("x/t.md", ["x/[!t].md"], False),
    ("x//.md", ["x/[!t].md"], False),
    ("[x].md", ["[x].md"], False),
    ("x.md", ["[x].md"], True),
    ("a[.md", ["a[.md"], True),
])
def test_write_scopes(path: str, globs: list[str], inside: bool) -> None:
    assert in_scope(path, globs) is inside
    assert glob_regex(globs[0]) is glob_regex(globs[0])  # cached
